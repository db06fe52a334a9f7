// planner_test.cpp — the planner's choices (src/plan/planner.cpp, candidates.cpp, explain.cpp):
// budgets and edge cases (fits exactly, one byte short, a row larger than the budget, the empty
// graph), forced schemes and p, JSON.
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

TEST(Planner, InCoreWhenItFits) {
  auto g = oriented(test::complete_graph(30));
  auto src = memory_source(g, 64);
  const std::uint64_t need = in_core_bytes(g.n(), g.m(), false);
  Plan p = plan_graph(*src, opts(Scheme::Auto, 0, need));
  EXPECT_EQ(p.partition.p, 1u);
  ASSERT_EQ(p.units.size(), 1u);
  EXPECT_EQ(p.device_bytes, need);  // fits exactly
  EXPECT_NE(p.reason.find("in-core"), std::string::npos);
  EXPECT_EQ(p.bytes_moved, need);
}

TEST(Planner, OneByteShortGoesOutOfCore) {
  auto g = oriented(test::random_graph(2000, 30000, 3));
  auto src = memory_source(g, 512);
  const std::uint64_t need = in_core_bytes(g.n(), g.m(), false);
  Plan p = plan_graph(*src, opts(Scheme::Auto, 0, need - 1));
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.device_bytes, need - 1);
  EXPECT_EQ(p.slots, 2);
  EXPECT_LE(2 * p.slot_bytes, need - 1);
  EXPECT_FALSE(p.reason.empty());
  for (const auto& u : p.units) EXPECT_LE(u.device_bytes, p.slot_bytes);
}

TEST(Planner, EveryForcedSchemeFitsAQuarter) {
  auto g = oriented(test::skewed_graph(3000, 40000, 9));
  auto src = memory_source(g, 1000);
  const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / 4;
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Auto}) {
    SCOPED_TRACE(scheme_name(s));
    Plan p = plan_graph(*src, opts(s, 0, budget));
    EXPECT_GT(p.partition.p, 1u);
    EXPECT_LE(p.device_bytes, budget);
    if (s != Scheme::Auto) {
      EXPECT_EQ(p.partition.scheme, s);
    }
    EXPECT_GT(p.total_work, 0);
  }
  // LSTC's proxy rows (the hubs' edges) keep the vertex scheme from fitting a quarter of a
  // skewed graph: a usage error that says so, and a plan for a larger budget.
  try {
    Plan p = plan_graph(*src, opts(Scheme::Vertex, 0, budget));
    EXPECT_LE(p.device_bytes, budget);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no partition fits"), std::string::npos);
  }
  Plan v = plan_graph(*src, opts(Scheme::Vertex, 0, in_core_bytes(g.n(), g.m(), false) * 2));
  EXPECT_EQ(v.partition.p, 1u);  // in-core is cheapest when it fits
}

// auto compares estimated bytes moved (plus 1 MiB per unit), with hash plans' bytes counted
// 1.25 times (their kernels are slower per edge: bench/RESULTS.md). The forced schemes' plans
// are the candidates auto chooses among, so its choice follows from their costs. (On these small
// graphs the two schemes' costs differ by more than the factor, so this checks the comparison,
// not the factor's value; the factor's effect is measured at scales 25 and 26.)
TEST(Planner, AutoPicksTheCheapestOfRangeHashAndPair) {
  const PlanRates rates;  // a unit costs its fixed kernel seconds' worth of uploaded bytes
  auto cost = [&](const Plan& p) {
    return static_cast<double>(p.bytes_moved + p.bytes_decompressed) +
           static_cast<double>(p.units.size()) * rates.kernel_s_per_unit * rates.upload_bytes_per_s;
  };
  int decided = 0;
  for (std::uint64_t seed : {3u, 9u, 21u}) {
    SCOPED_TRACE(seed);
    auto g = oriented(test::skewed_graph(3000, 40000, seed));
    auto src = memory_source(g, 1000);
    for (std::uint64_t div : {3u, 4u, 6u, 8u}) {
      SCOPED_TRACE(div);
      const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / div;
      const Plan a = plan_graph(*src, opts(Scheme::Auto, 0, budget));
      const Plan r = plan_graph(*src, opts(Scheme::Range, 0, budget));
      const Plan h = plan_graph(*src, opts(Scheme::Hash, 0, budget));
      const Plan pr = plan_graph(*src, opts(Scheme::Pair, 0, budget));
      if (a.partition.scheme == Scheme::Vertex) continue;
      std::vector<std::pair<double, Scheme>> c = {
          {cost(r), Scheme::Range}, {1.25 * cost(h), Scheme::Hash}, {cost(pr), Scheme::Pair}};
      std::sort(c.begin(), c.end());
      if (c[1].first - c[0].first < 0.01 * c[0].first) continue;  // near ties: other criteria
      EXPECT_EQ(a.partition.scheme, c[0].second)
          << "range " << cost(r) << ", hash x1.25 " << 1.25 * cost(h) << ", pair " << cost(pr);
      ++decided;
    }
  }
  EXPECT_GT(decided, 0);
}

// Each unit is charged its fixed kernel seconds (PlanRates::kernel_s_per_unit) priced as the
// bytes the copy engine uploads meanwhile: the dearer a unit, the fewer units auto may take (with
// units nearly free it takes the fewest bytes; with a charge of the wrong sign it would take the
// most parts that fit).
TEST(Planner, DearerUnitsNeverGiveMoreParts) {
  for (std::uint64_t seed : {3u, 9u}) {
    SCOPED_TRACE(seed);
    auto g = oriented(test::skewed_graph(3000, 40000, seed));
    auto src = memory_source(g, 1000);
    for (Scheme s : {Scheme::Range, Scheme::Auto})
      for (std::uint64_t div : {3u, 5u, 8u}) {
        SCOPED_TRACE(div);
        const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / div;
        std::uint32_t last_p = ~0u;
        Scheme last_scheme = Scheme::Auto;
        std::size_t last_units = ~std::size_t{0};
        for (double k : {1e-9, 4e-4, 4e-3}) {
          PlanOptions o = opts(s, 0, budget);
          o.rates.kernel_s_per_unit = k;
          const Plan plan = plan_graph(*src, o);
          // (a scheme change may take more parts in fewer units: pair's p(p+1)/2 against hash's
          // p^3)
          if (plan.partition.scheme == last_scheme) {
            EXPECT_LE(plan.partition.p, last_p) << "kernel_s_per_unit " << k;
          }
          last_scheme = plan.partition.scheme;
          if (plan.partition.scheme == Scheme::Range) {
            // and the range p is the fewest that fit: the cheapest in bytes on these graphs
            PlanOptions fewer = opts(Scheme::Range, plan.partition.p - 1, budget);
            EXPECT_THROW(plan_graph(*src, fewer), Error) << "p = " << plan.partition.p;
          }
          last_p = plan.partition.p;
          // (the units before the tail cover cut its donors into slices)
          const std::size_t units =
              plan.units.size() - plan.tail_cover_slices + plan.tail_cover_units;
          EXPECT_LE(units, last_units);
          last_units = units;
        }
      }
  }
}

TEST(Planner, ForcedPartsAndTaskCounts) {
  auto g = oriented(test::complete_graph(40));  // dense: no block is empty
  auto src = memory_source(g, 50);
  for (std::uint32_t p : {2u, 3u, 4u}) {
    Plan r = plan_graph(*src, opts(Scheme::Range, p));
    EXPECT_EQ(r.partition.p, p);
    EXPECT_EQ(r.units.size(), p * (p + 1) * (p + 2) / 6);
    Plan h = plan_graph(*src, opts(Scheme::Hash, p));
    EXPECT_EQ(h.units.size(), p * p * p);
    Plan v = plan_graph(*src, opts(Scheme::Vertex, p));
    EXPECT_LE(v.units.size(), p);
    // range units by descending i, so a unit needs only row parts >= its i (built from the
    // last row part down); inside a task by ascending j >= i, then k >= j (the row order), or
    // by k, then j (the column order); the slot's cached A is reused when the same
    for (std::size_t u = 0; u < r.units.size(); ++u) {
      const WorkUnit& w = r.units[u];
      EXPECT_TRUE(w.i <= w.j && w.j <= w.k);
      if (u == 0) continue;
      const WorkUnit& prev = r.units[u - 1];
      const std::uint32_t pa = r.column_order ? prev.k : prev.j,
                          pb = r.column_order ? prev.j : prev.k;
      const std::uint32_t wa = r.column_order ? w.k : w.j, wb = r.column_order ? w.j : w.k;
      EXPECT_TRUE(prev.i > w.i || (prev.i == w.i && (pa < wa || (pa == wa && pb < wb))))
          << "unit " << u << (r.column_order ? " (column order)" : " (row order)");
    }
    EXPECT_EQ(r.units.front().i, p - 1);
    for (std::size_t u = 2; u < r.units.size(); ++u)
      EXPECT_EQ(r.units[u].reuse_a,
                r.units[u].i == r.units[u - 2].i && r.units[u].j == r.units[u - 2].j);
  }
  Plan one = plan_graph(*src, opts(Scheme::Vertex, 1));
  EXPECT_EQ(one.partition.p, 1u);
  EXPECT_EQ(one.units.size(), 1u);
}

TEST(Planner, EmptyGraph) {
  for (std::uint64_t n : {0u, 7u}) {
    OrientedGraph g;
    g.csr.offsets.assign(n + 1, 0);
    g.csr.col_space = n;
    auto src = memory_source(g, 16);
    for (Scheme s : {Scheme::Auto, Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
      Plan p = plan_graph(*src, opts(s, 0, 1));
      EXPECT_TRUE(p.units.empty());
      EXPECT_EQ(p.bytes_moved, 0u);
      EXPECT_NE(p.reason.find("empty"), std::string::npos);
      Plan q = plan_graph(*src, opts(s, 4));
      EXPECT_TRUE(q.units.empty());
    }
  }
}

OrientedGraph big_row_graph() {
  // Row 0 has 1000 out-neighbours 1..1000, which form a path: 999 triangles (0, v, v + 1).
  OrientedGraph g;
  const std::uint64_t n = 1001;
  g.csr.offsets.assign(n + 1, 0);
  for (vid_t v = 1; v <= 1000; ++v) g.csr.cols.push_back(v);
  g.csr.offsets[1] = 1000;
  for (vid_t v = 1; v <= 1000; ++v) {
    if (v < 1000) g.csr.cols.push_back(v + 1);
    g.csr.offsets[v + 1] = g.csr.cols.size();
  }
  g.csr.col_space = n;
  return g;
}

TEST(Planner, RowLargerThanTheBudgetIsAClearError) {
  OrientedGraph g = big_row_graph();
  auto src = memory_source(g, 128);
  try {
    plan_graph(*src, opts(Scheme::Auto, 0, 1024));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("row, 0,"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1000 out-neighbours"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1.0 KiB"), std::string::npos) << msg;
  }
}

TEST(Planner, RangeSplitsARowLargerThanASlot) {
  // The in-core graph needs 16 KiB; 8 KiB for two units splits row 0 over column parts.
  OrientedGraph g = big_row_graph();
  auto src = memory_source(g, 128);
  ASSERT_EQ(in_core_bytes(g.n(), g.m(), false), 16384u);
  Plan p = plan_graph(*src, opts(Scheme::Range, 0, 8192));
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.device_bytes, 8192u);
  EXPECT_LT(p.slot_bytes, block_bytes(1, 1000));
}

TEST(Planner, HostBudgetLimitsTheSlots) {
  auto g = oriented(test::random_graph(4000, 40000, 21));
  auto src = memory_source(g, 2048);
  const std::uint64_t host = (g.n() + 1) * 8 + g.m() * 4 / 2;
  PlanOptions o = opts(Scheme::Auto, 0, 0, host);
  o.device_is_host = true;
  Plan p = plan_graph(*src, o);
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.host_bytes, host);
}

TEST(Planner, JsonHasTheContractFields) {
  auto g = oriented(test::random_graph(500, 4000, 2));
  auto src = memory_source(g, 100);
  Plan p = plan_graph(*src, opts(Scheme::Range, 3));
  const std::string j = p.to_json();
  for (const char* key :
       {"\"scheme\":\"range\"", "\"parts\":3", "\"units\":[", "\"device_bytes\":", "\"work\":",
        "\"bytes_moved\":", "\"total_estimated_bytes\":", "\"reason\":"})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_NE(j.find(p.column_order ? "\"unit_order\":\"column\"" : "\"unit_order\":\"row\""),
            std::string::npos);
}

// The vertex statistics' exact second pass is skipped when no vertex candidate could fit the
// device budget even with empty proxy blocks: one pass over the columns instead of two, and
// the same plan as with the exact counts (their upper bounds rule the vertex plans out as well).

}  // namespace
}  // namespace tristream
