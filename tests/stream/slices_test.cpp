// slices_test.cpp — slice_bounds (tristream/pipeline.hpp): on seeded graphs of several sizes
// (below and above one vertex per bucket) and several slice counts, the boundaries equal a
// simple host reference (the exact work of every middle vertex, then the first row before which
// x / slices of it lies), with and without a thread pool; a graph without edges is cut by rows;
// the boundaries of a sliced in-core unit count every triangle once.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "common/thread_pool.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

// The in-core unit's layout: A = B = C = the whole oriented graph, dense.
UnitLayout in_core_layout(const OrientedGraph& g) {
  UnitLayout L;
  L.num_blocks = 1;
  L.a = L.b = L.c = 0;
  L.blocks[0].rows = g.n();
  L.blocks[0].edges = g.m();
  L.host_offsets[0] = g.csr.offsets.data();
  L.host_cols[0] = g.csr.cols.data();
  return L;
}

// The reference: work[v] = |C(v)| + sum over u -> v of (|B(u)| + 1); boundary x the first v
// with work[0, v) * slices >= total * x (C's rows when none).
std::vector<std::uint64_t> reference_bounds(const OrientedGraph& g, std::uint32_t slices) {
  const Csr& c = g.csr;
  const std::uint64_t n = c.rows();
  std::vector<std::uint64_t> work(n, 0);
  for (std::uint64_t v = 0; v < n; ++v) work[v] += c.offsets[v + 1] - c.offsets[v];
  for (std::uint64_t u = 0; u < n; ++u)
    for (eid_t e = c.offsets[u]; e < c.offsets[u + 1]; ++e)
      work[c.cols[e]] += c.offsets[u + 1] - c.offsets[u] + 1;
  const std::uint64_t total = std::accumulate(work.begin(), work.end(), std::uint64_t{0});
  std::vector<std::uint64_t> b(slices + 1, n);
  b[0] = 0;
  for (std::uint32_t x = 1; x < slices; ++x) {
    if (total == 0) {
      b[x] = chunk_range(n, slices, x).lo;
      continue;
    }
    std::uint64_t prefix = 0;
    for (std::uint64_t v = 0; v < n; ++v) {
      if (static_cast<unsigned __int128>(prefix) * slices >=
          static_cast<unsigned __int128>(total) * x) {
        b[x] = v;
        break;
      }
      prefix += work[v];
    }
  }
  return b;
}

class SliceBounds : public ::testing::TestWithParam<test::GraphCase> {};

TEST_P(SliceBounds, EqualTheReferenceWithAndWithoutAPool) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    const OrientedGraph g = test::case_graph(GetParam(), seed);
    const UnitLayout L = in_core_layout(g);
    ThreadPool pool(3);
    for (std::uint32_t slices : {1u, 2u, 3u, 7u, 64u}) {
      SCOPED_TRACE(slices);
      const auto want = reference_bounds(g, slices);
      EXPECT_EQ(slice_bounds(L, slices), want);
      EXPECT_EQ(slice_bounds(L, slices, &pool), want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, SliceBounds,
    ::testing::Values(test::GraphCase{40, 200, false}, test::GraphCase{600, 5000, true},
                      test::GraphCase{5000, 40000, false}, test::GraphCase{20000, 150000, true}),
    [](const ::testing::TestParamInfo<test::GraphCase>& i) { return test::case_name(i.param); });

TEST(SliceBoundsEdgeCases, AGraphWithoutEdgesIsCutByRows) {
  OrientedGraph g;
  g.csr.offsets.assign(11, 0);  // ten vertices, no edge
  g.csr.col_space = 10;
  const UnitLayout L = in_core_layout(g);
  ThreadPool pool(2);
  EXPECT_EQ(slice_bounds(L, 4, &pool), (std::vector<std::uint64_t>{0, 2, 5, 7, 10}));
}

// The slices' boundaries partition the middle vertices: the triangles counted per slice (by
// their middle vertex) add up to the graph's.
TEST(SliceBoundsEdgeCases, SlicesCountEveryTriangleOnce) {
  const auto e = test::skewed_graph(3000, 30000, 9);
  const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  const Csr& c = g.csr;
  ThreadPool pool(2);
  const auto bounds = slice_bounds(in_core_layout(g), 5, &pool);
  std::uint64_t whole = 0, sliced = 0;
  std::vector<char> mark(c.rows(), 0);
  for (std::uint64_t u = 0; u < c.rows(); ++u) {
    for (eid_t e0 = c.offsets[u]; e0 < c.offsets[u + 1]; ++e0) mark[c.cols[e0]] = 1;
    for (eid_t e0 = c.offsets[u]; e0 < c.offsets[u + 1]; ++e0) {
      const vid_t v = c.cols[e0];
      std::uint64_t t = 0;
      for (eid_t f = c.offsets[v]; f < c.offsets[v + 1]; ++f) t += mark[c.cols[f]];
      whole += t;
      for (std::size_t x = 0; x + 1 < bounds.size(); ++x)
        if (v >= bounds[x] && v < bounds[x + 1]) sliced += t;
    }
    for (eid_t e0 = c.offsets[u]; e0 < c.offsets[u + 1]; ++e0) mark[c.cols[e0]] = 0;
  }
  EXPECT_GT(whole, 0u);
  EXPECT_EQ(sliced, whole);
  for (std::size_t x = 0; x + 1 < bounds.size(); ++x) EXPECT_LE(bounds[x], bounds[x + 1]);
}

}  // namespace
}  // namespace tristream
