// plan_internal.hpp — the planner's order and estimate steps (src/plan.cpp), for the tests: they
// run on a plan built by hand, so a test can make the tail of an order upload-bound, or cut
// units into slices the way the tail cover does (unit_slice, which the cover itself uses).
#pragma once

#include <cstddef>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Sets the units' slot, device and upload bytes (the device block cache replayed with
// `in_flight` units in flight) and the plan's totals.
void finish_units(Plan& plan, bool per_vertex, int in_flight);
// The upload seconds the kernels do not hide at the plan's rates; *makespan the last kernel's end.
double estimated_exposed_upload(const Plan& plan, double* makespan);
// Slice `slice` of `slices` of a unit (WorkUnit::slices): its share of the work; slices after
// the first decompress nothing (their blocks were built for the first).
WorkUnit unit_slice(const WorkUnit& w, std::uint32_t slice, std::uint32_t slices);
// The tail cover: moves units of much work and few bytes into the upload-bound tail when the
// estimate improves; returns the units moved.
std::size_t cover_upload_tail(Plan& plan, bool per_vertex);
// Reorders each range task's units by k, then j (Plan::column_order).
void column_order(Plan& plan);
// Chooses the order (row or column) and the units in flight, each with its tail cover, by the
// estimate; `plan` comes finished in the row order with the device block cache.
void choose_in_flight(Plan& plan, bool per_vertex);

}  // namespace tristream::plan_internal
