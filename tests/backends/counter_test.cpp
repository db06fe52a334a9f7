// counter_test.cpp — the CPU counter against closed forms and a brute-force oracle.
#include <gtest/gtest.h>

#include <tuple>

#include "test_util.hpp"
#include "tristream/analysis.hpp"
#include "tristream/counter.hpp"

namespace tristream {
namespace {

using test::EdgeList;

count_t cpu_count(const EdgeList& e, unsigned threads = 0) {
  auto g = orient_edge_list(test::vertex_count(e), e);
  CounterOptions o;
  o.threads = threads;
  return make_cpu_counter(o)->count(g.csr.view());
}

std::uint64_t choose3(std::uint64_t n) {
  return n < 3 ? 0 : n * (n - 1) * (n - 2) / 6;
}

class ClosedForm : public ::testing::TestWithParam<unsigned> {};

TEST_P(ClosedForm, CompleteGraph) {
  const unsigned n = GetParam();
  EXPECT_EQ(cpu_count(test::complete_graph(n)), choose3(n));
}
TEST_P(ClosedForm, CompleteBipartiteHasNone) {
  const unsigned n = GetParam();
  EXPECT_EQ(cpu_count(test::complete_bipartite(n, n + 3)), 0u);
}
TEST_P(ClosedForm, Wheel) {
  const unsigned rim = GetParam() + 4;
  EXPECT_EQ(cpu_count(test::wheel(rim)), rim);
}
TEST_P(ClosedForm, Friendship) {
  const unsigned k = GetParam();
  EXPECT_EQ(cpu_count(test::friendship(k)), k);
}
TEST_P(ClosedForm, DisjointCliques) {
  const unsigned size = GetParam();
  EXPECT_EQ(cpu_count(test::disjoint_cliques(7, size)), 7 * choose3(size));
}
INSTANTIATE_TEST_SUITE_P(Sizes, ClosedForm, ::testing::Values(1u, 2u, 3u, 5u, 17u, 64u, 150u));

TEST(CpuCounter, EmptyAndTinyGraphs) {
  EXPECT_EQ(cpu_count({}), 0u);
  EXPECT_EQ(cpu_count({{0, 1}}), 0u);
  EXPECT_EQ(cpu_count({{0, 1}, {1, 2}, {2, 0}}), 1u);
  EXPECT_EQ(cpu_count({{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 0}, {2, 2}}), 1u);
}

// Seeded random and skewed graphs against the oracle, over sizes, seeds and thread counts.
class RandomGraphs
    : public ::testing::TestWithParam<std::tuple<unsigned, unsigned, std::uint64_t, unsigned>> {};

TEST_P(RandomGraphs, MatchesBruteForce) {
  const auto [n, avg_degree, seed, threads] = GetParam();
  for (bool skewed : {false, true}) {
    const std::uint64_t m = std::uint64_t{n} * avg_degree / 2;
    const EdgeList e = skewed ? test::skewed_graph(n, m, seed) : test::random_graph(n, m, seed);
    const std::uint64_t nv = test::vertex_count(e);
    EXPECT_EQ(cpu_count(e, threads), test::brute_force_triangles(nv, e))
        << "n=" << n << " m=" << m << " seed=" << seed << " skewed=" << skewed;
  }
}
INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphs,
                         ::testing::Combine(::testing::Values(10u, 200u, 3000u),
                                            ::testing::Values(4u, 40u),
                                            ::testing::Values(1ull, 7ull, 12345ull),
                                            ::testing::Values(1u, 3u)));

TEST(CpuCounter, PerVertexMatchesBruteForce) {
  for (std::uint64_t seed : {3ull, 4ull}) {
    const EdgeList e = test::skewed_graph(500, 6000, seed);
    const std::uint64_t n = test::vertex_count(e);
    std::vector<vid_t> new_of_old;
    auto g = orient_edge_list(n, e, &new_of_old);
    std::vector<count_t> pv(n, 0);
    const count_t total =
        make_cpu_counter()->count(g.csr.view(), PerVertexOut{pv.data(), pv.data(), pv.data()});
    const auto expect = test::brute_force_per_vertex(n, e);
    count_t sum = 0;
    for (std::uint64_t old = 0; old < n; ++old) {
      EXPECT_EQ(pv[new_of_old[old]], expect[old]) << "vertex " << old;
      sum += pv[new_of_old[old]];
    }
    EXPECT_EQ(sum, 3 * total);
  }
}

// count(A, B, C) over range blocks sums to the whole count: exercises the three-view contract.
TEST(CpuCounter, RangeBlocksSumToTotal) {
  const EdgeList e = test::random_graph(400, 8000, 99);
  auto g = orient_edge_list(test::vertex_count(e), e);
  const std::uint64_t n = g.n();
  const count_t whole = make_cpu_counter()->count(g.csr.view());
  const std::uint64_t p = 3;
  auto part_begin = [&](std::uint64_t i) { return n * i / p; };
  // block(i, j): rows of part i with local ids, columns of part j with local ids.
  auto block = [&](std::uint64_t i, std::uint64_t j) {
    Csr b;
    b.offsets.assign(1, 0);
    for (std::uint64_t u = part_begin(i); u < part_begin(i + 1); ++u) {
      for (const vid_t* q = g.csr.view().begin(u); q != g.csr.view().end(u); ++q)
        if (*q >= part_begin(j) && *q < part_begin(j + 1))
          b.cols.push_back(static_cast<vid_t>(*q - part_begin(j)));
      b.offsets.push_back(b.cols.size());
    }
    b.col_space = part_begin(j + 1) - part_begin(j);
    return b;
  };
  count_t sum = 0;
  auto counter = make_cpu_counter();
  for (std::uint64_t i = 0; i < p; ++i)
    for (std::uint64_t j = i; j < p; ++j)
      for (std::uint64_t k = j; k < p; ++k) {
        const Csr A = block(i, j), B = block(i, k), C = block(j, k);
        sum += counter->count(A.view(), B.view(), C.view());
      }
  EXPECT_EQ(sum, whole);
}

TEST(Analysis, ClusteringOfCompleteGraphIsOne) {
  auto g = orient_edge_list(6, test::complete_graph(6));
  std::vector<count_t> pv(6, 0);
  const count_t t =
      make_cpu_counter()->count(g.csr.view(), PerVertexOut{pv.data(), pv.data(), pv.data()});
  const auto d = undirected_degrees(g.csr.view());
  EXPECT_DOUBLE_EQ(transitivity(t, d), 1.0);
  EXPECT_DOUBLE_EQ(average_local_clustering(pv, d), 1.0);
}

TEST(Analysis, ClusteringOfStarIsZeroAndWheelKnown) {
  EdgeList star;
  for (vid_t i = 1; i <= 10; ++i) star.emplace_back(0, i);
  auto g = orient_edge_list(11, star);
  const auto d = undirected_degrees(g.csr.view());
  EXPECT_DOUBLE_EQ(transitivity(0, d), 0.0);
  // Wheel with rim 5: 5 triangles; hub degree 5 (10 wedges), rim degree 3 (3 wedges each).
  auto w = orient_edge_list(6, test::wheel(5));
  EXPECT_NEAR(transitivity(5, undirected_degrees(w.csr.view())), 15.0 / 25.0, 1e-12);
}

}  // namespace
}  // namespace tristream
