// order_test.cpp — the unit order (src/plan/order.cpp, cost.cpp): the tail cover and the column
// order on range plans built by hand, judged by the estimated copy/compute line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "plan_helpers.hpp"
#include "plan_internal.hpp"
#include "test_util.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

using test::opts;
using test::oriented;

// A range plan built by hand in the planner's row order (i descending, then j, then k): p parts
// of 100 rows, block G_ab (b >= a) of bytes(a, b) bytes, uploaded whole, 8 bytes an edge; unit
// (i, j, k) of work(i, j, k) wedges. The callbacks run in that order (blocks by a, then b;
// then the units), so seeded ones draw the same values every time. Not finished.
template <class Bytes, class Work>
Plan hand_range_plan(std::uint32_t p, Bytes bytes, Work work) {
  Plan plan;
  plan.partition.scheme = Scheme::Range;
  plan.partition.p = p;
  plan.partition.n = 100 * p;
  for (std::uint32_t a = 0; a <= p; ++a) plan.partition.bounds.push_back(100 * a);
  std::vector<std::vector<BlockInfo>> G(p, std::vector<BlockInfo>(p));
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = a; b < p; ++b) {
      BlockInfo& bi = G[a][b];
      bi.row_part = a;
      bi.col_part = b;
      bi.rows = 100;
      bi.col_space = 100;
      bi.bytes = bi.upload_bytes = bytes(a, b);
      bi.edges = bi.bytes / 8;
    }
  for (std::uint32_t i = p; i-- > 0;)
    for (std::uint32_t j = i; j < p; ++j)
      for (std::uint32_t k = j; k < p; ++k) {
        WorkUnit w;
        w.i = i;
        w.j = j;
        w.k = k;
        w.a = G[i][j];
        w.b = G[i][k];
        w.c = G[j][k];
        w.b_is_a = j == k;
        w.c_is_a = i == j && j == k;
        w.c_is_b = i == j;
        w.work = work(i, j, k);
        plan.units.push_back(w);
      }
  return plan;
}

// The tail cover on a plan built by hand (range, p = 10, the planner's order: i descending):
// part 0's blocks are large and nearly without work, so the order's tail is upload-bound, while
// the high parts' units are much work in few bytes. The cover moves some of those into the tail:
// the same tasks, every unit finished again (the cache replayed for the new order), fewer
// estimated exposed upload seconds, and the moved units after the head. Seeded block sizes.
TEST(Planner, TailCoverMovesHeavyUnitsIntoAnUploadBoundTail) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::uint32_t p = 10;
    std::uniform_real_distribution<double> jitter(0.8, 1.25);
    Plan plan = hand_range_plan(
        p,
        [&](std::uint32_t a, std::uint32_t) {  // part 0: 4 MB blocks; the others 64 KB
          return static_cast<std::uint64_t>((a == 0 ? 4e6 : 64e3) * jitter(rng));
        },
        [&](std::uint32_t i, std::uint32_t j, std::uint32_t k) {  // ~1 ms a wedge-heavy unit
          return i == 0 ? 1e3 : 1e9 * jitter(rng) * (i + j + k);
        });
    plan.rates.upload_bytes_per_s = 1e9;  // a slow link: part 0's units take milliseconds
    plan_internal::finish_units(plan, false, 16);
    ASSERT_EQ(plan.in_flight, 16);
    ASSERT_GT(plan.device_cache_bytes, 0u);
    const Plan before = plan;
    double end0 = 0, end1 = 0;
    const double exposed0 = plan_internal::estimated_exposed_upload(before, &end0);
    const std::size_t moved = plan_internal::cover_upload_tail(plan, false);
    ASSERT_GT(moved, 0u) << "exposed " << exposed0;
    EXPECT_EQ(plan.tail_cover_units, 0u);  // (the caller records it)
    const double exposed1 = plan_internal::estimated_exposed_upload(plan, &end1);
    EXPECT_LT(exposed1, exposed0);
    // the same tasks, in a new order: a moved unit as slices 0 .. slices - 1 (in that order),
    // whose work adds up to the unit's
    auto tasks = [](const Plan& x) {
      std::vector<std::array<std::uint32_t, 3>> t;
      for (const auto& w : x.units)
        if (w.slice == 0) t.push_back({w.i, w.j, w.k});
      return t;
    };
    auto t0 = tasks(before), t1 = tasks(plan);
    EXPECT_NE(t0, t1);
    std::sort(t0.begin(), t0.end());
    std::sort(t1.begin(), t1.end());
    EXPECT_EQ(t0, t1);
    std::map<std::array<std::uint32_t, 3>, std::pair<std::uint32_t, double>> seen;  // next, work
    std::size_t sliced_units = 0;
    for (const auto& w : plan.units) {
      ASSERT_LT(w.slice, w.slices);
      auto& st = seen[{w.i, w.j, w.k}];
      EXPECT_EQ(w.slice, st.first) << "slices out of order";
      st.first = w.slice + 1;
      st.second += w.work;
      sliced_units += w.slices > 1;
    }
    for (const auto& w : before.units)
      EXPECT_NEAR(seen.at({w.i, w.j, w.k}).second, w.work, 1e-6 * w.work);
    EXPECT_GT(sliced_units, moved);  // the moved units were cut
    // the moved units are wedge-heavy units of the head, now among part 0's units, except the
    // first slice of each sliced unit (it uploads the unit's blocks), which comes just before
    // them, at the end of the head
    const std::size_t tail0 =
        static_cast<std::size_t>(std::find_if(plan.units.begin(), plan.units.end(),
                                              [](const WorkUnit& w) { return w.i == 0; }) -
                                 plan.units.begin());
    std::size_t heavy_in_tail = 0, first_slices = 0;
    for (std::size_t u = tail0; u < plan.units.size(); ++u) heavy_in_tail += plan.units[u].i != 0;
    for (std::size_t u = tail0; u-- > 0 && plan.units[u].slices > 1 && plan.units[u].slice == 0;)
      ++first_slices;
    std::size_t sliced_donors = 0;
    for (const auto& w : plan.units) sliced_donors += w.slices > 1 && w.slice == 0;
    EXPECT_EQ(first_slices, sliced_donors);
    EXPECT_EQ(heavy_in_tail + first_slices, plan.tail_cover_slices);
    // finished again: the replay's uploads are the new order's, and the totals add up
    std::uint64_t sum = 0;
    for (const auto& w : plan.units) sum += w.upload_bytes;
    EXPECT_EQ(plan.bytes_moved, sum);
  }
}

// The order inside a task on plans built by hand (range, p = 6, i descending, row order), with
// seeded block sizes and work: the column order (plan_internal::column_order) keeps the tasks and
// sorts each task's units by k, then j; choose_in_flight keeps the order and the count of units
// in flight whose estimated line (with its tail cover) ends first, as the test recomputes them
// here, and the row order when both end alike (a link so fast that uploads cost nothing). Each
// order must win some of the seeded plans.
TEST(Planner, ColumnOrderWhenItsLineEndsFirst) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int column_wins = 0, row_wins = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const bool fast_link = trial % 10 == 9;
    Plan plan = hand_range_plan(
        6,
        [&](std::uint32_t, std::uint32_t) {
          return static_cast<std::uint64_t>(2e5 + 2e6 * unit(rng));
        },
        [&](std::uint32_t, std::uint32_t, std::uint32_t) {  // up to 3.7 ms of kernel
          return unit(rng) < 0.5 ? 1e3 : 3e9 * unit(rng);
        });
    plan.rates.upload_bytes_per_s = fast_link ? 1e15 : 1e9;  // 0.2-2.2 ms a block, or nothing
    plan_internal::finish_units(plan, false, 16);
    ASSERT_GT(plan.device_cache_bytes, 0u);
    ASSERT_FALSE(plan.column_order);
    const Plan row = plan;
    Plan column = plan;
    plan_internal::column_order(column);
    ASSERT_TRUE(column.column_order);
    // the column order: the same tasks, each task's units by k, then j
    ASSERT_EQ(column.units.size(), row.units.size());
    for (std::size_t u = 1; u < column.units.size(); ++u) {
      const WorkUnit &a = column.units[u - 1], &b = column.units[u];
      EXPECT_TRUE(a.i > b.i || (a.i == b.i && (a.k < b.k || (a.k == b.k && a.j < b.j))))
          << "unit " << u;
    }
    // the estimates of both orders at each count of units in flight, with the tail cover
    double best_row = 0, best_column = 0;
    for (int f = 2; f <= 16; f *= 2) {
      double end_row = 0, end_column = 0;
      Plan r = row, c = column;
      plan_internal::finish_units(r, false, f);
      plan_internal::finish_units(c, false, f);
      plan_internal::cover_upload_tail(r, false);
      plan_internal::cover_upload_tail(c, false);
      plan_internal::estimated_exposed_upload(r, &end_row);
      plan_internal::estimated_exposed_upload(c, &end_column);
      best_row = f == 2 ? end_row : std::min(best_row, end_row);
      best_column = f == 2 ? end_column : std::min(best_column, end_column);
    }
    plan_internal::choose_in_flight(plan, false);
    double end = 0;
    plan_internal::estimated_exposed_upload(plan, &end);
    EXPECT_LE(end, std::min(best_row, best_column) * 1.001);
    if (best_column < best_row * 0.999) {
      EXPECT_TRUE(plan.column_order);
      column_wins += !fast_link;
    } else if (best_row < best_column * 0.999) {
      EXPECT_FALSE(plan.column_order);
      row_wins += !fast_link;
    }
    if (fast_link) {
      EXPECT_NEAR(best_row, best_column, 1e-9 * best_row);
      EXPECT_FALSE(plan.column_order);  // a tie keeps the row order
    }
  }
  EXPECT_GT(column_wins, 0);
  EXPECT_GT(row_wins, 0);
  std::printf("column order won %d plans, the row order %d\n", column_wins, row_wins);
}

// Pair with a budget of a few units: the device block cache takes the whole budget (not only two
// slots), and the chosen order (groups of pair_group row parts) uploads at most what the row
// order does, the same units in another order; with room for several row parts a group of more
// than one is chosen.
TEST(Planner, PairGroupsKeepTheirRowPartsOnTheDevice) {
  const OrientedGraph g = oriented(test::skewed_graph(4000, 60000, 5));
  auto src = memory_source(g, 512);
  const std::uint64_t in_core = in_core_bytes(g.n(), g.m(), false);
  for (std::uint64_t div : {3u, 5u, 8u}) {
    SCOPED_TRACE(div);
    const std::uint64_t budget = in_core / div;
    const Plan plan = plan_graph(*src, opts(Scheme::Pair, 0, budget));
    ASSERT_EQ(plan.partition.scheme, Scheme::Pair);
    ASSERT_GT(plan.device_cache_bytes, 0u);
    EXPECT_LE(plan.device_bytes, budget);
    EXPECT_GE(plan.device_cache_bytes, 2 * plan.slot_bytes);
    EXPECT_GT(plan.device_cache_bytes + plan.slot_bytes / 2, budget);  // grown to the budget
    // the row order of the same units, replayed
    Plan rows = plan;
    std::sort(rows.units.begin(), rows.units.end(), [](const WorkUnit& a, const WorkUnit& b) {
      return a.i != b.i ? a.i > b.i : (a.j != b.j ? a.j < b.j : a.slice < b.slice);
    });
    rows.pair_group = 1;
    plan_internal::finish_units(rows, false, plan.in_flight);
    EXPECT_LE(plan.bytes_moved, rows.bytes_moved);
    if (div == 3) {
      EXPECT_GT(plan.pair_group, 1u);
    }
    if (plan.pair_group > 1) {
      EXPECT_LT(plan.bytes_moved, rows.bytes_moved);
    }
  }
  // a budget far above the slots (forced parts): the cache stops at kDeviceCacheMaxSlots slots
  const Plan big = plan_graph(*src, opts(Scheme::Pair, 4, 100 * in_core));
  EXPECT_EQ(big.device_cache_bytes, kDeviceCacheMaxSlots * big.slot_bytes);
  EXPECT_EQ(big.device_bytes, big.device_cache_bytes);
}

// In core shared by several workers: one slice per worker of the one unit, the plan's memory
// as in core (one slot), the work and uploads per slice; other plans are left as they are.
TEST(Planner, InCoreSlicesOnePerWorker) {
  const OrientedGraph g = oriented(test::skewed_graph(3000, 30000, 4));
  auto src = memory_source(g, 512);
  const Plan core = plan_graph(*src, opts(Scheme::Auto, 0));
  ASSERT_EQ(core.units.size(), 1u);
  ASSERT_LE(core.partition.p, 1u);
  for (std::uint32_t sharers : {2u, 3u, 8u}) {
    SCOPED_TRACE(sharers);
    Plan sliced = core;
    ASSERT_TRUE(plan_internal::slice_in_core(sliced, sharers, false));
    ASSERT_EQ(sliced.units.size(), sharers);
    EXPECT_EQ(sliced.slots, core.slots);
    EXPECT_EQ(sliced.in_flight, core.in_flight);
    EXPECT_EQ(sliced.device_bytes, core.device_bytes);
    EXPECT_EQ(sliced.slot_bytes, core.slot_bytes);
    EXPECT_EQ(sliced.device_cache_bytes, 0u);
    EXPECT_EQ(sliced.bytes_moved, sharers * core.bytes_moved);  // every worker uploads it all
    for (std::uint32_t x = 0; x < sharers; ++x) {
      EXPECT_EQ(sliced.units[x].slice, x);
      EXPECT_EQ(sliced.units[x].slices, sharers);
      EXPECT_DOUBLE_EQ(sliced.units[x].work, core.units[0].work / sharers);
    }
    EXPECT_FALSE(plan_internal::slice_in_core(sliced, sharers, false));  // (already sliced)
  }
  Plan one = core;
  EXPECT_FALSE(plan_internal::slice_in_core(one, 1, false));
  EXPECT_EQ(one.units.size(), 1u);
  Plan parts = plan_graph(*src, opts(Scheme::Range, 3));
  const std::size_t units = parts.units.size();
  EXPECT_FALSE(plan_internal::slice_in_core(parts, 4, false));
  EXPECT_EQ(parts.units.size(), units);
}

}  // namespace
}  // namespace tristream
