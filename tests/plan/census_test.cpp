// census_test.cpp — the block census (src/plan/census.cpp): its histograms sum to the graph's
// blocks, and the exact proxy pass is skipped when no vertex plan can fit.
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

TEST(Census, BlockSumsMatchTheGraph) {
  auto g = oriented(test::random_graph(300, 2500, 11));
  auto src = memory_source(g, 37);
  CensusOptions co;
  co.fine = 50;
  co.hash_mod = 6;
  co.vertex_groups = 4;
  co.threads = 3;
  Census c = take_census(*src, co);
  EXPECT_EQ(std::accumulate(c.fine_hist.begin(), c.fine_hist.end(), eid_t{0}), g.m());
  EXPECT_EQ(std::accumulate(c.hash_hist.begin(), c.hash_hist.end(), eid_t{0}), g.m());
  // exact hash cells
  std::vector<eid_t> h(36, 0);
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t e = g.csr.offsets[u]; e < g.csr.offsets[u + 1]; ++e)
      ++h[(u % 6) * 6 + g.csr.cols[e] % 6];
  EXPECT_EQ(h, c.hash_hist);
  // vertex candidates: p = 1, 2, 4; the proxies of p = 1 are the vertices with in-degree > 0
  ASSERT_EQ(c.vertex.size(), 3u);
  std::set<vid_t> heads(g.csr.cols.begin(), g.csr.cols.end());
  EXPECT_EQ(c.vertex[0].p, 1u);
  EXPECT_EQ(c.vertex[0].proxies[0], heads.size());
  EXPECT_GE(c.decompressed_bytes, g.m() * sizeof(vid_t));  // two passes (exact proxies)
}

TEST(Census, ExactProxyPassSkippedWhenNoVertexPlanCanFit) {
  OrientedGraph g = oriented(test::skewed_graph(20000, 200000, 5));
  auto src = memory_source(g, 4096);
  const std::uint64_t in_core = in_core_bytes(g.n(), g.m(), false);
  int skipped_runs = 0;
  for (std::uint64_t div : {2u, 4u, 8u, 16u}) {
    SCOPED_TRACE("budget in-core / " + std::to_string(div));
    const PlanOptions o = opts(Scheme::Auto, 0, in_core / div);
    CensusOptions co;
    ASSERT_TRUE(census_needed(g.n(), g.m(), o, &co));
    EXPECT_EQ(co.device_budget, in_core / div);
    const Census fast = take_census(*src, co);
    co.device_budget = 0;  // unknown budget: always exact
    const Census exact = take_census(*src, co);
    EXPECT_TRUE(exact.vertex_exact);
    EXPECT_GT(exact.decompressed_bytes, g.m() * sizeof(vid_t));  // a second pass
    if (!fast.vertex_exact) {
      ++skipped_runs;
      EXPECT_EQ(fast.decompressed_bytes, g.m() * sizeof(vid_t));
    }
    const Plan a = make_plan(g.n(), g.m(), g.csr.offsets.data(), src->chunks(), fast, o);
    const Plan b = make_plan(g.n(), g.m(), g.csr.offsets.data(), src->chunks(), exact, o);
    EXPECT_EQ(a.to_json(), b.to_json());
  }
  EXPECT_GT(skipped_runs, 0);  // the budgets above include ones no vertex plan fits
}

}  // namespace
}  // namespace tristream
