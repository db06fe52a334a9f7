// plan/build.hpp — a candidate plan's units from the census (build.cpp): the partition of one
// (scheme, p, range cut), its work units in the partition's own order, finished (replay.hpp).
#pragma once

#include <cstdint>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Range cuts the planner tries for every p (build_plan's `variant`): balanced by out-edges, by
// out- plus in-edges, by bytes.
constexpr int kRangeCuts = 3;

// The single in-core unit (none for the empty graph), unfinished.
void in_core_unit(Plan& plan, std::uint64_t n, eid_t m, const eid_t* off);
// The plan of scheme with p parts (p <= 1 or m == 0: the in-core plan); range uses the cut
// `variant` (0 <= variant < kRangeCuts). Requires the census to match: range p <= its fine
// buckets, hash p dividing its hash_mod, vertex p among its vertex candidates.
// cache_room: the device bytes its device block cache may grow to (Plan::device_cache_room).
Plan build_plan(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                const eid_t* off, const Census& census, bool per_vertex,
                std::uint64_t cache_room = 0);

// A lower bound of the device bytes of build_plan's plan for the same arguments, without its
// units: the largest unit's blocks, twice when there are two units or more (its per-vertex
// arrays and device cache left out). 0 for p <= 1, no edges and the vertex scheme. The planner
// skips the candidates whose floor exceeds the device budget without building them.
std::uint64_t device_floor(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                           const Census& census);

}  // namespace tristream::plan_internal
