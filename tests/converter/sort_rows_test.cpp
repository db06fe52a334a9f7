// sort_rows_test.cpp — the in-memory row sorts (converter/sort_rows.hpp): sort_rows_narrow (rows
// packed with their columns into 32 bits, graphs of up to about 2^22 vertices) and sort_rows_wide
// (columns placed at their rows by a counting sort, any graph) give, for seeded unique edge keys
// row << 32 | col (row < col < n) in spans of uneven sizes, exactly the columns of a std::sort of
// the keys and every row's count; with a rank table the keys are oriented first; a repeated key
// is refused. Sizes: the fewest vertices whose buckets hold whole rows, a few thousand rows per
// bucket, a bucket too large for a core's cache (sorted in parts), and rows of one column to
// thousands (a hub). Every row is told placed (RowsPlaced) once, after its columns are final.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <random>
#include <unordered_set>
#include <vector>

#include "converter/sort_rows.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {
namespace {

// `m` unique keys row << 32 | col with row < col < n; a share of them in a few hub rows.
std::vector<std::uint64_t> random_keys(std::uint64_t n, std::size_t m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::unordered_set<std::uint64_t> seen;
  std::vector<std::uint64_t> keys;
  while (keys.size() < m) {
    std::uint64_t a = rng() % 8 == 0 ? rng() % 4 : rng() % n, b = rng() % n;
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    const std::uint64_t k = a << 32 | b;
    if (seen.insert(k).second) keys.push_back(k);
  }
  return keys;
}

struct Sorted {
  std::vector<std::uint32_t> cols;
  std::vector<std::uint32_t> fill;
};

// The reference: the keys sorted, their columns and rows' counts.
Sorted reference(std::vector<std::uint64_t> keys, std::uint64_t n) {
  std::sort(keys.begin(), keys.end());
  Sorted s;
  s.fill.assign(n, 0);
  for (std::uint64_t k : keys) {
    s.cols.push_back(static_cast<std::uint32_t>(k));
    ++s.fill[k >> 32];
  }
  return s;
}

// The columns and counts of the sort run() runs (what a RowsPlaced sees at its call).
const BigBuffer<std::uint32_t>* cols_seen = nullptr;
const std::vector<std::uint32_t>* fill_seen = nullptr;

// Runs the sort on a copy of keys cut into spans of uneven sizes.
Sorted run(bool wide, std::vector<std::uint64_t> keys, std::uint64_t n, unsigned threads,
           const std::uint32_t* rank = nullptr, const RowsPlaced& placed = nullptr) {
  SpanSortInput in;
  std::mt19937_64 rng(keys.size());
  for (std::size_t at = 0; at < keys.size();) {
    const std::size_t len = std::min<std::size_t>(keys.size() - at, 1 + rng() % 50000);
    in.spans.push_back({keys.data() + at, len});
    at += len;
  }
  in.max_key = (n - 2) << 32 | (n - 1);
  in.orient = rank;
  const int col_bits = 64 - __builtin_clzll(n - 1);
  BigBuffer<std::uint32_t> cols(keys.size() + 1);
  Sorted s;
  s.fill.assign(n, 0);
  cols_seen = &cols;
  fill_seen = &s.fill;
  const std::size_t m = wide ? sort_rows_wide(in, cols, s.fill.data(), threads, placed)
                             : sort_rows_narrow(in, col_bits, cols, s.fill.data(), threads, placed);
  EXPECT_EQ(m, keys.size());
  s.cols.assign(cols.data(), cols.data() + m);
  return s;
}

void check(bool wide, std::uint64_t n, std::size_t m, unsigned threads, std::uint64_t seed) {
  const std::vector<std::uint64_t> keys = random_keys(n, m, seed);
  const Sorted want = reference(keys, n);
  const Sorted got = run(wide, keys, n, threads);
  EXPECT_TRUE(got.cols == want.cols) << wide << " n " << n << " m " << m << " seed " << seed;
  EXPECT_TRUE(got.fill == want.fill) << wide << " n " << n << " m " << m << " seed " << seed;
}

TEST(SortRowsWide, EqualsStdSortOfTheKeys) {
  for (unsigned threads : {1u, 3u}) {
    check(true, 4096, 70000, threads, 10);            // columns of 12 bits: one digit
    check(true, 4099, 70000, threads, 1);             // the fewest vertices: two rows per bucket
    check(true, 100003, 200000, threads, 2);          // a few rows per bucket
    check(true, (1u << 23) + 5, 300000, threads, 3);  // thousands of rows per bucket
  }
}

// The sort tells of every row below n exactly once, with the edges of the rows before it as its
// first edge, and when it does, the row's columns and count are already the reference's.
void check_placed(bool wide, std::uint64_t n, std::size_t m, unsigned threads, std::uint64_t seed) {
  const std::vector<std::uint64_t> keys = random_keys(n, m, seed);
  const Sorted want = reference(keys, n);
  std::vector<std::uint64_t> before(n + 1, 0);
  for (std::uint64_t r = 0; r < n; ++r) before[r + 1] = before[r] + want.fill[r];
  std::mutex mu;
  std::vector<int> told(n, 0);
  std::size_t wrong_first = 0, wrong_rows = 0;
  const Sorted got = run(wide, keys, n, threads, nullptr,
                         [&](std::uint64_t row0, std::uint64_t rows, std::uint64_t first) {
                           std::lock_guard<std::mutex> lock(mu);
                           if (row0 < n && first != before[row0]) ++wrong_first;
                           for (std::uint64_t r = row0; r < std::min(n, row0 + rows); ++r) {
                             ++told[r];
                             const bool same = (*fill_seen)[r] == want.fill[r] &&
                                               std::equal(cols_seen->data() + before[r],
                                                          cols_seen->data() + before[r + 1],
                                                          want.cols.begin() + before[r]);
                             wrong_rows += !same;
                           }
                         });
  EXPECT_EQ(wrong_first, 0u) << wide << " n " << n << " threads " << threads;
  EXPECT_EQ(wrong_rows, 0u) << wide << " n " << n << " threads " << threads;
  EXPECT_EQ(std::count(told.begin(), told.end(), 1), static_cast<std::ptrdiff_t>(n))
      << wide << " n " << n << " threads " << threads;
  EXPECT_TRUE(got.cols == want.cols);
}

TEST(SortRowsWide, TellsEveryRowOnceItsColumnsAreInPlace) {
  for (unsigned threads : {1u, 4u}) {
    check_placed(true, 4099, 70000, threads, 11);
    check_placed(true, (1u << 16) + 3, 320000, threads, 12);  // a bucket sorted in parts
    check_placed(true, (1u << 23) + 5, 300000, threads, 13);  // buckets without a key
  }
}

TEST(SortRowsNarrow, TellsEveryRowOnceItsColumnsAreInPlace) {
  for (unsigned threads : {1u, 4u}) {
    check_placed(false, 4099, 70000, threads, 14);
    check_placed(false, (1u << 20) + 7, 250000, threads, 15);
  }
}

TEST(SortRowsWide, ABucketLargerThanACoresCacheIsSortedInParts) {
  // 2^16 + 3 vertices: 32 rows per bucket; the hub rows 0-3 put about 40000 keys into the first
  // bucket, which is split by its rows' top bits into parts (one of them holding the hubs).
  for (unsigned threads : {1u, 2u}) check(true, (1u << 16) + 3, 320000, threads, 9);
}

TEST(SortRowsNarrow, EqualsStdSortOfTheKeys) {
  for (unsigned threads : {1u, 3u}) {
    check(false, 4099, 70000, threads, 4);
    check(false, (1u << 20) + 7, 250000, threads, 5);
  }
}

TEST(SortRowsWide, OrientsTheKeysByTheRankTable) {
  // Keys a << 32 | b in any order of rank: the sort orients each to min(rank) << 32 | max(rank).
  const std::uint64_t n = (1u << 22) + 11;
  std::vector<std::uint32_t> rank(n);
  std::iota(rank.begin(), rank.end(), 0u);
  std::shuffle(rank.begin(), rank.end(), std::mt19937_64(6));
  const std::vector<std::uint64_t> keys = random_keys(n, 150000, 7);
  std::vector<std::uint64_t> oriented;
  for (std::uint64_t k : keys) {
    const std::uint64_t ra = rank[k >> 32], rb = rank[k & 0xffffffffu];
    oriented.push_back(std::min(ra, rb) << 32 | std::max(ra, rb));
  }
  const Sorted want = reference(oriented, n);
  const Sorted got = run(true, keys, n, 2, rank.data());
  EXPECT_TRUE(got.cols == want.cols);
  EXPECT_TRUE(got.fill == want.fill);
}

TEST(SortRowsWide, ARepeatedKeyIsRefused) {
  std::vector<std::uint64_t> keys = random_keys(100003, 80000, 8);
  keys.push_back(keys[12345]);
  EXPECT_THROW(run(true, keys, 100003, 2), Error);
}

}  // namespace
}  // namespace tristream::conv
