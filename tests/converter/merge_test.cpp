// merge_test.cpp — merge_unique (converter/merge.hpp): seeded sorted streams of random lengths,
// with repeats inside a stream and across streams and empty streams among them, for 1 to 100
// streams, merged into each distinct value once, in order, as a simple reference (everything
// sorted, repeats removed) gives them; also for the converter's 16-byte edge records.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "converter/merge.hpp"
#include "converter/util.hpp"

namespace tristream::conv {
namespace {

template <typename T, typename Make>
void check(std::size_t k, std::uint64_t seed, Make make) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<T>> data(k);
  std::vector<T> all;
  for (auto& d : data) {
    const std::size_t len = rng() % 4 == 0 ? 0 : rng() % 300;              // a quarter empty
    for (std::size_t i = 0; i < len; ++i) d.push_back(make(rng() % 500));  // repeats
    std::sort(d.begin(), d.end());
    all.insert(all.end(), d.begin(), d.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<SpanReader<T>> spans;
  for (auto& d : data) spans.push_back({d.data(), d.data() + d.size()});
  std::vector<SpanReader<T>*> ptrs;
  for (auto& s : spans) ptrs.push_back(&s);
  std::vector<T> got;
  merge_unique<T>(ptrs, [&](const T& x) { got.push_back(x); });
  EXPECT_TRUE(got == all) << "k " << k << " seed " << seed;
}

TEST(MergeUnique, EqualsSortUniqueForAnyNumberOfStreams) {
  for (std::size_t k : {0u, 1u, 2u, 3u, 5u, 8u, 17u, 64u, 100u})
    for (std::uint64_t seed = 1; seed <= 5; ++seed)
      check<std::uint64_t>(k, seed, [](std::uint64_t x) { return x; });
}

TEST(MergeUnique, EdgeRecords) {
  for (std::size_t k : {1u, 4u, 33u})
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      check<Edge64>(k, seed, [](std::uint64_t x) { return Edge64{x % 23, x / 23}; });
}

TEST(MergeUnique, OneValueEverywhere) {
  std::vector<std::vector<std::uint64_t>> data(7, std::vector<std::uint64_t>(10, 42));
  std::vector<SpanReader<std::uint64_t>> spans;
  for (auto& d : data) spans.push_back({d.data(), d.data() + d.size()});
  std::vector<SpanReader<std::uint64_t>*> ptrs;
  for (auto& s : spans) ptrs.push_back(&s);
  std::vector<std::uint64_t> got;
  merge_unique<std::uint64_t>(ptrs, [&](std::uint64_t x) { got.push_back(x); });
  EXPECT_EQ(got, std::vector<std::uint64_t>{42});
}

}  // namespace
}  // namespace tristream::conv
