// plan/replay.hpp — finishing a plan's units (replay.cpp): their slot, device and upload bytes,
// the plan's totals, and the device block cache replayed over the order exactly as the pipeline
// runs it (device_cache.hpp), which sets what each unit uploads and what it waits for.
#pragma once

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Sets the units' slot, device and upload bytes (the device block cache replayed with
// `in_flight` units in flight) and the plan's totals. Linear in the units (the cache's
// operations are logarithmic in its blocks).
void finish_units(Plan& plan, bool per_vertex, int in_flight = kDeviceCacheInFlight);

}  // namespace tristream::plan_internal
