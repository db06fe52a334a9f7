// scatter_test.cpp — the sorts' write-combined scatter (converter/scatter.hpp) and the
// partitioned id count (converter/count_ids.hpp): seeded keys scattered into regions that start
// and end anywhere inside cache lines (empty regions, one-key regions, regions of many lines)
// land exactly where a plain scatter puts them, for 4- and 8-byte keys; the ids counted equal a
// plain count for id spaces that are and are not powers of two, several spans, one thread and
// several, and enough keys for several waves; the in-bucket radix sort (digits laid over the
// varying bits, large sorts split by their top bits first) equals std::sort for keys whose
// varying bits take one to six digits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "converter/count_ids.hpp"
#include "converter/scatter.hpp"
#include "converter/util.hpp"

namespace tristream::conv {
namespace {

template <typename T>
void check_scatter(std::size_t buckets, std::size_t keys, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> key(keys);
  std::vector<std::size_t> bucket(keys), count(buckets, 0);
  for (std::size_t i = 0; i < keys; ++i) {
    // Skewed: a few buckets get most keys, many get none or one.
    bucket[i] = rng() % 3 == 0 ? rng() % buckets : rng() % (buckets / 8 + 1);
    key[i] = static_cast<T>(rng());
    ++count[bucket[i]];
  }
  // The regions start after a gap (another writer's keys, which must stay untouched).
  const std::size_t gap = 3;
  std::vector<std::size_t> cursor(buckets);
  std::size_t at = 5;
  for (std::size_t b = 0; b < buckets; ++b) {
    cursor[b] = at;
    at += count[b] + gap;
  }
  const T sentinel = static_cast<T>(0x5a5a5a5a5a5a5a5aull);
  BigBuffer<T> want(at + 1), got(at + 1);
  want.resize(at);
  got.resize(at);
  for (std::size_t i = 0; i < at; ++i) want[i] = got[i] = sentinel;
  std::vector<std::size_t> plain = cursor;
  for (std::size_t i = 0; i < keys; ++i) want[plain[bucket[i]]++] = key[i];
  LineScatter<T> o(got.data(), cursor.data(), buckets);
  for (std::size_t i = 0; i < keys; ++i) o.put(bucket[i], key[i]);
  o.finish();
  EXPECT_EQ(cursor, plain) << buckets << " " << keys << " " << seed;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < at; ++i) wrong += got[i] != want[i];
  EXPECT_EQ(wrong, 0u) << buckets << " " << keys << " " << seed;
}

TEST(LineScatter, RegionsStartingAndEndingInsideLinesGetThePlainScattersBytes) {
  for (std::size_t buckets : {1u, 7u, 64u, 4096u})
    for (std::size_t keys : {0u, 1u, 15u, 1000u, 100000u}) {
      check_scatter<std::uint64_t>(buckets, keys, buckets * 31 + keys);
      check_scatter<std::uint32_t>(buckets, keys, buckets * 17 + keys);
    }
}

void check_count(std::size_t space, std::vector<std::size_t> span_sizes, unsigned threads,
                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint64_t>> data;
  std::vector<KeySpan> spans;
  std::vector<std::uint32_t> want(space, 0), got(space, 7);
  for (std::size_t n : span_sizes) {
    data.emplace_back(n);
    for (auto& k : data.back()) {
      // Skewed ids: a quarter of the keys on the last few ids; the high half is noise.
      const std::uint64_t id = rng() % 4 == 0 && space > 3 ? space - 1 - rng() % 3 : rng() % space;
      k = (rng() << 32) | id;
      ++want[id];
    }
  }
  for (auto& d : data) spans.push_back({d.data(), d.size()});
  for (auto& w : want) w += 7;  // the counts add to what the array holds
  count_low_ids(spans, got.data(), space, threads);
  EXPECT_TRUE(got == want) << space << " " << threads << " " << seed;
}

TEST(CountLowIds, EqualsAPlainCount) {
  for (unsigned threads : {1u, 3u}) {
    check_count(1, {10}, threads, 1);
    check_count(1000, {}, threads, 2);
    check_count(1000, {0, 5, 0, 3000}, threads, 3);
    check_count((std::size_t{1} << 17) + 3, {70000, 1, 200000}, threads, 4);
    check_count(std::size_t{1} << 20, {300000, 300000}, threads, 5);
  }
}

TEST(CountLowIds, SeveralWavesOfKeys) {
  // 2^23 keys and more: waves of an eighth of them, over an id space of 2^23 + 5 ids.
  check_count((std::size_t{1} << 23) + 5, {std::size_t{1} << 22, (std::size_t{1} << 22) + 77}, 2,
              6);
}

TEST(RadixSortU64, EqualsStdSortForAnyVaryingBits) {
  std::mt19937_64 rng(9);
  // (varying bits as masks: none, a few, 36 in two runs as packed keys leave them, all 64)
  const std::uint64_t masks[] = {0,
                                 0x7ull << 40,
                                 (0xfffull << 32) | 0xffffffull,
                                 (0x3fffull << 32) | 0x3ffffffull,
                                 0xffff0000ffffull,
                                 ~0ull};
  std::vector<std::uint64_t> scratch;
  for (std::uint64_t mask : masks)
    for (std::size_t k : {0u, 1u, 255u, 256u, 5000u, 70000u, 300000u}) {
      std::vector<std::uint64_t> keys(k);
      for (auto& x : keys) x = (0x1234ull << 50 & ~mask) | (rng() & mask);
      std::vector<std::uint64_t> want = keys;
      std::sort(want.begin(), want.end());
      radix_sort_u64(keys.data(), keys.size(), scratch);
      EXPECT_TRUE(keys == want) << std::hex << mask << std::dec << " " << k;
    }
}

}  // namespace
}  // namespace tristream::conv
