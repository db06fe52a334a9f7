// build_test.cpp — a candidate's units (src/plan/build.cpp) and a forced p against the graph:
// p is capped at the rows, and the tasks are exactly those whose three blocks hold edges, found
// without visiting all p^3 triples (a large forced p on a small graph plans at once); a
// candidate's device floor never exceeds the plan's device bytes (the planner skips candidates
// by it without building them); the units' work from row_work's table equals a pass over the rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <set>
#include <tuple>

#include "plan/build.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

// K4 on 0..3 and the triangle 3, 4, 5: six vertices, five triangles.
test::EdgeList six_vertices() {
  return {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {3, 4}, {3, 5}, {4, 5}};
}

PlanOptions forced(Scheme s, std::uint32_t p) {
  PlanOptions o;
  o.scheme = s;
  o.parts = p;
  o.threads = 2;
  return o;
}

TEST(PlanParts, DeviceFloorIsALowerBoundOfTheBuiltPlan) {
  for (std::uint64_t seed : {1u, 2u}) {
    const auto e =
        seed == 1 ? test::skewed_graph(3000, 30000, 3) : test::random_graph(2000, 20000, 8);
    const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
    auto src = memory_source(g, 256);
    CensusOptions co;
    co.fine = 64;
    co.hash_mod = 12;
    co.vertex = false;
    co.threads = 2;
    const Census c = take_census(*src, co);
    for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair})
      for (std::uint32_t p : {2u, 3u, 4u, 6u, 12u, 40u}) {
        if (s == Scheme::Hash && 12 % p != 0) continue;
        for (int v = 0; v < (s == Scheme::Hash ? 1 : plan_internal::kRangeCuts); ++v)
          for (std::uint64_t room : {std::uint64_t{0}, std::uint64_t{1} << 30}) {
            SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " v" + std::to_string(v));
            const std::uint64_t floor = plan_internal::device_floor(s, p, v, g.n(), g.m(), c);
            const Plan plan = plan_internal::build_plan(s, p, v, g.n(), g.m(), g.csr.offsets.data(),
                                                        c, false, room);
            EXPECT_GT(floor, 0u);
            EXPECT_LE(floor, plan.device_bytes);
            // exact for two slots without the device cache
            if (room == 0 && plan.slots == 2) {
              EXPECT_EQ(floor, plan.device_bytes);
            }
          }
      }
  }
}

// The in-core and vertex units' work read from row_work's table equals a pass over their rows,
// for every vertex p of the census, and a census without vertex groups falls back to the whole.
TEST(PlanParts, RowWorkTableEqualsAPassOverTheRows) {
  const OrientedGraph g = test::case_graph({3000, 30000, true}, 5);
  auto src = memory_source(g, 256);
  CensusOptions co;
  co.threads = 2;
  const Census c = take_census(*src, co);
  ASSERT_FALSE(c.vertex.empty());
  const plan_internal::RowWork t = plan_internal::row_work(g.n(), g.csr.offsets.data(), c);
  EXPECT_EQ(t.bounds, c.vertex_bounds);
  const eid_t* off = g.csr.offsets.data();
  for (std::uint32_t p : {1u, 2u, 4u, 8u, 16u}) {
    SCOPED_TRACE(p);
    const Scheme s = p == 1 ? Scheme::Range : Scheme::Vertex;
    const Plan with = plan_internal::build_plan(s, p, 0, g.n(), g.m(), off, c, false, 0, &t);
    const Plan without = plan_internal::build_plan(s, p, 0, g.n(), g.m(), off, c, false);
    ASSERT_EQ(with.units.size(), without.units.size());
    for (std::size_t u = 0; u < with.units.size(); ++u)
      EXPECT_EQ(with.units[u].work, without.units[u].work);  // (integers: exact in any order)
  }
  const plan_internal::RowWork whole = plan_internal::row_work(g.n(), off, Census{});
  EXPECT_EQ(whole.bounds, (std::vector<std::uint64_t>{0, g.n()}));
  Plan in_core;
  plan_internal::in_core_unit(in_core, g.n(), g.m(), off, &whole);
  Plan passed;
  plan_internal::in_core_unit(passed, g.n(), g.m(), off);
  EXPECT_EQ(in_core.units.at(0).work, passed.units.at(0).work);
  EXPECT_THROW(whole.of(1, g.n()), Error);  // not a group's bound
}

// Many rows (the pieces on all cores): each group's work equals a plain 128-bit sum of d (d - 1) /
// 2 over its rows, for groups of one row, of rows spanning several pieces and of most of the rows,
// and for rows of 2^32 edges or more (the 64-bit product's limit); only the offsets are read.
TEST(PlanParts, RowWorkOfManyRowsEqualsAPlainSumPerGroup) {
  using u128 = unsigned __int128;
  const std::uint64_t n = (std::uint64_t{1} << 22) + 12345;
  std::vector<eid_t> off(n + 1, 0);
  std::mt19937_64 rng(41);
  for (std::uint64_t r = 0; r < n; ++r) {
    eid_t d = rng() % 40;
    if (r % 1000003 == 7) d = (eid_t{1} << 32) + rng() % 1000;  // (beyond a 64-bit product)
    if (r % 99991 == 3) d = (eid_t{1} << 32) - 1 - rng() % 2;   // (just below it)
    off[r + 1] = off[r] + d;
  }
  Census c;
  c.vertex_bounds = {0, 1, 2, 3000, (std::uint64_t{1} << 21) + 7, n - 5, n};
  const plan_internal::RowWork t = plan_internal::row_work(n, off.data(), c);
  ASSERT_EQ(t.bounds, c.vertex_bounds);
  ASSERT_EQ(t.prefix.size(), c.vertex_bounds.size());
  double expect = 0;
  for (std::size_t g = 0; g + 1 < c.vertex_bounds.size(); ++g) {
    u128 w = 0;
    for (std::uint64_t r = c.vertex_bounds[g]; r < c.vertex_bounds[g + 1]; ++r) {
      const u128 d = off[r + 1] - off[r];
      w += d == 0 ? 0 : d * (d - 1) / 2;
    }
    expect += static_cast<double>(w);
    EXPECT_EQ(t.prefix[g + 1], expect) << "group " << g;
  }
}

TEST(PlanParts, ForcedPartsAboveTheRowsAreCappedAtTheRows) {
  const test::EdgeList e = six_vertices();
  const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 2);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair}) {
    const Plan plan = plan_graph(*src, forced(s, static_cast<std::uint32_t>(kMaxParts)));
    EXPECT_EQ(plan.partition.scheme, s);
    EXPECT_EQ(plan.partition.p, 6u) << scheme_name(s);
    EXPECT_NE(plan.reason.find("--parts 4096 capped at the graph's 6 rows"), std::string::npos)
        << plan.reason;
    ASSERT_FALSE(plan.units.empty());
    for (const WorkUnit& w : plan.units) {
      EXPECT_GT(w.a.edges, 0u);
      EXPECT_GT(w.b.edges, 0u);
      if (s != Scheme::Vertex) {
        EXPECT_GT(w.c.edges, 0u);
      }
    }
  }
  // At most the rows: unchanged.
  EXPECT_EQ(plan_graph(*src, forced(Scheme::Range, 6)).partition.p, 6u);
  EXPECT_EQ(plan_graph(*src, forced(Scheme::Range, 5)).partition.p, 5u);
}

TEST(PlanParts, LargePartsOnATinyGraphCountExactly) {
  test::TempDir tmp;
  const std::string el = tmp.file("six.el");
  test::write_edge_list(el, six_vertices());
  for (const char* scheme : {"range", "hash", "vertex"}) {
    const test::RunResult r = test::run_cli("count '" + el + "' --backend cpu --json --parts " +
                                            std::to_string(kMaxParts) + " --scheme " + scheme);
    ASSERT_EQ(r.status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\"triangles\":([0-9]+)"))) << r.out;
    EXPECT_EQ(m[1], "5") << scheme;
    EXPECT_NE(r.out.find("\"parts\":6"), std::string::npos) << r.out;
  }
}

// A forced p in the thousands on a graph of many more vertices: the census's fine buckets (whose
// square each census thread holds) stay at most 8192, and still at least p.
TEST(PlanParts, LargeForcedPartsKeepTheCensusHistogramBounded) {
  PlanOptions o = forced(Scheme::Range, static_cast<std::uint32_t>(kMaxParts));
  CensusOptions co;
  ASSERT_TRUE(census_needed(100000, 400000, o, &co));
  EXPECT_LE(co.fine, 8192u);
  EXPECT_GE(co.fine, kMaxParts);
  o.parts = 100;  // small p: 1024 buckets, as before
  ASSERT_TRUE(census_needed(100000, 400000, o, &co));
  EXPECT_EQ(co.fine, 1024u);
}

// The range units of p = n on a sparse graph (a ring with chords): the tasks are exactly the
// triples i <= j <= k whose blocks G_ij, G_ik and G_jk all hold edges, in the planner's order
// (i descending, then j, then k), and every triangle's task is among them.
TEST(PlanParts, RangeTasksAreExactlyThoseWithThreeNonemptyBlocks) {
  const vid_t n = 1500;
  test::EdgeList e;
  for (vid_t v = 0; v < n; ++v) {
    e.emplace_back(v, (v + 1) % n);
    if (v % 3 == 0) e.emplace_back(v, (v + 2) % n);
  }
  const OrientedGraph g = orient_edge_list(n, e);
  auto src = memory_source(g, 100);
  const Plan plan = plan_graph(*src, forced(Scheme::Range, n));
  const Partition& P = plan.partition;
  ASSERT_EQ(P.p, n);
  // the nonempty blocks, from the oriented edges
  std::set<std::pair<std::uint32_t, std::uint32_t>> blocks;
  const eid_t* off = g.csr.offsets.data();
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t x = off[u]; x < off[u + 1]; ++x)
      blocks.insert({P.part_of(u), P.part_of(g.csr.cols[x])});
  auto has = [&](std::uint32_t a, std::uint32_t b) { return blocks.count({a, b}) != 0; };
  // the expected tasks: for every row part, pairs of its nonempty blocks closed by a third
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> want;
  for (std::uint32_t i = P.p; i-- > 0;) {
    std::vector<std::uint32_t> cols;
    for (auto it = blocks.lower_bound({i, 0}); it != blocks.end() && it->first == i; ++it)
      cols.push_back(it->second);
    for (std::size_t y = 0; y < cols.size(); ++y)
      for (std::size_t z = y; z < cols.size(); ++z)
        if (has(cols[y], cols[z])) want.emplace_back(i, cols[y], cols[z]);
  }
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> got;
  for (const WorkUnit& w : plan.units) got.emplace_back(w.i, w.j, w.k);
  if (!plan.column_order) {
    EXPECT_EQ(got, want);
  } else {
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
  // every triangle's task is planned
  const std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> tasks(got.begin(),
                                                                                got.end());
  std::size_t triangles = 0;
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t x = off[u]; x < off[u + 1]; ++x)
      for (eid_t y = x + 1; y < off[u + 1]; ++y) {
        std::uint64_t v = g.csr.cols[x], w = g.csr.cols[y];
        if (v > w) std::swap(v, w);
        if (!std::binary_search(g.csr.cols.begin() + static_cast<std::ptrdiff_t>(off[v]),
                                g.csr.cols.begin() + static_cast<std::ptrdiff_t>(off[v + 1]),
                                static_cast<vid_t>(w)))
          continue;
        ++triangles;
        EXPECT_TRUE(tasks.count({P.part_of(u), P.part_of(v), P.part_of(w)})) << u;
      }
  EXPECT_EQ(triangles, n / 3);
}

}  // namespace
}  // namespace tristream
