// partition_test.cpp — partitions and scheme names (src/plan/partition.cpp): parts, local ids
// and back, balanced boundaries, an unknown scheme.
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

TEST(Partition, RoundTrips) {
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
    Partition P;
    P.scheme = s;
    P.p = 4;
    P.n = 23;
    if (s != Scheme::Hash) P.bounds = {0, 5, 5, 17, 23};
    std::uint64_t total = 0;
    for (std::uint32_t a = 0; a < P.p; ++a) total += P.rows(a);
    EXPECT_EQ(total, 23u);
    if (s == Scheme::Vertex) continue;
    for (std::uint64_t x = 0; x < 23; ++x) {
      const auto a = P.part_of(x);
      EXPECT_LT(P.local_of(x), P.rows(a));
      EXPECT_EQ(P.global_of(a, P.local_of(x)), x);
    }
  }
}

TEST(Partition, BalancedBoundsAreMonotone) {
  auto g = oriented(test::skewed_graph(400, 3000, 5));
  for (bool w : {false, true})
    for (std::uint32_t p : {1u, 2u, 3u, 7u, 16u, 1000u}) {
      auto b = balanced_bounds(g.n(), g.csr.offsets.data(), p, w);
      ASSERT_EQ(b.size(), p + 1u);
      EXPECT_EQ(b.front(), 0u);
      EXPECT_EQ(b.back(), g.n());
      EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
    }
}

TEST(Partition, UnknownSchemeIsAUsageError) {
  EXPECT_THROW(parse_scheme("diagonal"), Error);
  EXPECT_EQ(parse_scheme("vertex"), Scheme::Vertex);
  EXPECT_EQ(parse_scheme("pair"), Scheme::Pair);
  EXPECT_EQ(scheme_name(Scheme::Pair), "pair");
}

}  // namespace
}  // namespace tristream
