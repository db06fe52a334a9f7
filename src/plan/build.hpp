// plan/build.hpp — a candidate plan's units from the census (build.cpp): the partition of one
// (scheme, p, range cut), its work units in the partition's own order, finished (replay.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Range cuts the planner tries for every p (build_plan's `variant`): balanced by out-edges, by
// out- plus in-edges, by bytes.
constexpr int kRangeCuts = 3;

// The work of whole spans of rows, sum over the rows of d(d - 1) / 2 of their out-degrees d:
// the in-core unit's (every row) and the vertex units' (spans of the census's vertex groups).
// Summed per group in one pass over the offsets (row_work), so that the candidates read it
// instead of passing over every row each: at Kronecker 26 (67 M rows) those passes took half a
// second of planning.
struct RowWork {
  std::vector<std::uint64_t>
      bounds;                  // the groups' row bounds: the census's vertex bounds, or {0, n}
  std::vector<double> prefix;  // prefix[g]: the work of the rows before group g
  // The work of rows [r0, r1), both among `bounds`.
  double of(std::uint64_t r0, std::uint64_t r1) const;
};
RowWork row_work(std::uint64_t n, const eid_t* off, const Census& census);

// The single in-core unit (none for the empty graph), unfinished; work: row_work's table (null:
// a pass over the rows).
void in_core_unit(Plan& plan, std::uint64_t n, eid_t m, const eid_t* off,
                  const RowWork* work = nullptr);
// The plan of scheme with p parts (p <= 1 or m == 0: the in-core plan); range uses the cut
// `variant` (0 <= variant < kRangeCuts). Requires the census to match: range p <= its fine
// buckets, hash p dividing its hash_mod, vertex p among its vertex candidates.
// cache_room: the device bytes its device block cache may grow to (Plan::device_cache_room).
// work: row_work's table for these offsets and census (null: passes over the rows).
Plan build_plan(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                const eid_t* off, const Census& census, bool per_vertex,
                std::uint64_t cache_room = 0, const RowWork* work = nullptr);

// A lower bound of the device bytes of build_plan's plan for the same arguments, without its
// units: the largest unit's blocks, twice when there are two units or more (its per-vertex
// arrays and device cache left out). 0 for p <= 1, no edges and the vertex scheme. The planner
// skips the candidates whose floor exceeds the device budget without building them.
std::uint64_t device_floor(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                           const Census& census);

}  // namespace tristream::plan_internal
