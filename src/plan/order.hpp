// plan/order.hpp — the unit order of a finished plan with the device block cache (order.cpp):
// the column order, the tail cover (heavy units cut into slices moved into the upload-bound
// tail), and the choice of order and units in flight by the estimate (cost.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Slice `slice` of `slices` of a unit (WorkUnit::slices): its share of the work; slices after
// the first decompress nothing (their blocks were built for the first).
WorkUnit unit_slice(const WorkUnit& w, std::uint32_t slice, std::uint32_t slices);
// The tail cover: moves units of much work and few bytes into the upload-bound tail when the
// estimate improves; returns the units moved.
std::size_t cover_upload_tail(Plan& plan, bool per_vertex);
// Reorders each range task's units by k, then j (Plan::column_order).
void column_order(Plan& plan);
// Pair: orders the units by groups of g row parts (Plan::pair_group); unfinished.
void pair_group_order(Plan& plan, std::uint32_t g);
// Pair with the device block cache: the group size whose replay uploads the fewest bytes (1, the
// partition's own order, unless one moves at least 1% fewer); `plan` comes finished and leaves
// finished.
void choose_pair_group(Plan& plan, bool per_vertex);
// Chooses the order (row or column) and the units in flight, each with its tail cover, by the
// estimate; `plan` comes finished in the row order with the device block cache.
void choose_in_flight(Plan& plan, bool per_vertex);
// An in-core plan (one unit, p <= 1, full host slots) shared by `sharers` workers: its unit cut
// into that many slices, finished; every worker uploads the whole graph and counts the
// triangles of its slice of middle vertices. Returns false (the plan unchanged) when the plan
// is not such a plan or sharers < 2.
bool slice_in_core(Plan& plan, std::uint32_t sharers, bool per_vertex);

}  // namespace tristream::plan_internal
