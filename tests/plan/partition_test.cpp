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
#include <string>

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

// The one-thread loop balanced_bounds runs for few rows (its double sums), as a reference.
std::vector<std::uint64_t> wedge_bounds_loop(std::uint64_t n, const eid_t* off, std::uint32_t p) {
  std::vector<std::uint64_t> b(p + 1, 0);
  b[p] = n;
  double total = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    const double d = static_cast<double>(off[r + 1] - off[r]);
    total += d * (d - 1) / 2 + d;
  }
  if (total <= 0) {
    for (std::uint32_t a = 1; a < p; ++a) b[a] = n * a / p;
    return b;
  }
  double acc = 0;
  std::uint32_t a = 1;
  for (std::uint64_t r = 0; r < n && a < p; ++r) {
    const double d = static_cast<double>(off[r + 1] - off[r]);
    acc += d * (d - 1) / 2 + d;
    while (a < p && acc >= total * a / p) b[a++] = r + 1;
  }
  for (; a < p; ++a) b[a] = n;
  return b;
}

// Millions of rows (summed on several threads): the same bounds as the loop, for heavy-tailed
// degrees, empty rows, a row too long for an exact weight, and every row empty.
TEST(Partition, WedgeBoundsOfMillionsOfRowsEqualTheLoop) {
  const std::uint64_t n = 5000000;
  std::mt19937_64 rng(17);
  for (const char* shape : {"heavy", "sparse", "long row", "empty"}) {
    SCOPED_TRACE(shape);
    std::vector<eid_t> off(n + 1, 0);
    for (std::uint64_t r = 0; r < n; ++r) {
      std::uint64_t d = 0;
      if (shape == std::string("heavy")) d = rng() % 1000 == 0 ? rng() % 20000 : rng() % 8;
      if (shape == std::string("sparse")) d = rng() % 50 == 0 ? 1 + rng() % 3 : 0;
      if (shape == std::string("long row")) d = r == n / 3 ? (eid_t{1} << 26) : rng() % 4;
      off[r + 1] = off[r] + d;
    }
    for (std::uint32_t p : {2u, 7u, 16u, 1000u}) {
      SCOPED_TRACE(p);
      EXPECT_EQ(balanced_bounds(n, off.data(), p, true), wedge_bounds_loop(n, off.data(), p));
    }
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
