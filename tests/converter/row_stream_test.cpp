// row_stream_test.cpp — the prefix of placed rows that the in-memory tail hands to the writer
// while the row sort goes on (converter/rows_in_memory.hpp, RowStream): buckets told in a seeded
// shuffled order from several threads give the offsets of a prefix sum and a prefix that only
// grows and never passes a row not yet told; rows at or past n are ignored; offsets written
// before are left alone; the sort's exception reaches the waiting consumer; a sort that ends
// short of the last row is an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "converter/rows_in_memory.hpp"
#include "tristream/error.hpp"

namespace tristream::conv::tail {
namespace {

struct Bucket {
  std::uint64_t row0, rows, first;
};

// n rows of seeded lengths cut into buckets of `per` rows (the last past n), with their first
// edges.
std::vector<Bucket> buckets_of(const std::vector<std::uint32_t>& fill, std::uint64_t per) {
  std::vector<Bucket> out;
  std::uint64_t edge = 0;
  for (std::uint64_t r = 0; r < fill.size(); r += per) {
    out.push_back({r, per, edge});
    for (std::uint64_t x = r; x < std::min<std::uint64_t>(fill.size(), r + per); ++x)
      edge += fill[x];
  }
  out.push_back({out.size() * per, per, edge});  // rows past n only (ignored)
  return out;
}

std::vector<std::uint32_t> seeded_fill(std::uint64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> fill(n);
  for (auto& f : fill) f = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() % 300 : rng() % 3);
  return fill;
}

TEST(RowStream, ShuffledBucketsFromSeveralThreadsGiveAGrowingPrefix) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::uint64_t n = 10000 + seed * 777, per = 64;
    const std::vector<std::uint32_t> fill = seeded_fill(n, seed);
    std::vector<Bucket> b = buckets_of(fill, per);
    std::shuffle(b.begin(), b.end(), std::mt19937_64(seed));
    std::vector<eid_t> offsets(n + 1, 99);
    RowStream rows(n, offsets.data(), fill.data());
    std::vector<std::thread> sorters;
    const unsigned T = 4;
    for (unsigned t = 0; t < T; ++t)
      sorters.emplace_back([&, t] {
        for (std::size_t i = t; i < b.size(); i += T) rows.placed(b[i].row0, b[i].rows, b[i].first);
      });
    // The consumer: every prefix it gets is whole (offsets written) and grows.
    std::vector<eid_t> want(n + 1, 0);
    for (std::uint64_t r = 0; r < n; ++r) want[r + 1] = want[r] + fill[r];
    std::uint64_t at = 0, steps = 0;
    bool whole = true;
    while (at < n) {
      const std::uint64_t next = rows.wait(at, 500);
      if (next <= at) {
        ADD_FAILURE() << "the prefix did not grow past " << at;
        break;
      }
      for (std::uint64_t r = at; r <= next; ++r) whole &= offsets[r] == want[r];
      at = next;
      ++steps;
    }
    for (std::thread& t : sorters) t.join();
    rows.finish(nullptr);
    EXPECT_TRUE(whole) << seed;
    EXPECT_EQ(rows.wait(n, 0), n);
    EXPECT_TRUE(offsets == want) << seed;
    EXPECT_EQ(rows.max_out_degree(), *std::max_element(fill.begin(), fill.end()));
    EXPECT_GE(steps, 1u);
  }
}

TEST(RowStream, WaitsForTheRowsBeforeARowToldEarly) {
  const std::vector<std::uint32_t> fill{2, 0, 5, 1};
  std::vector<eid_t> offsets(5, 0);
  RowStream rows(4, offsets.data(), fill.data());
  rows.placed(2, 2, 2);  // rows 2 and 3 first: the prefix stays empty
  std::thread late([&] { rows.placed(0, 2, 0); });
  EXPECT_EQ(rows.wait(0, 0), 4u);  // (returns only once rows 0-1 came)
  late.join();
  EXPECT_EQ(offsets, (std::vector<eid_t>{0, 2, 2, 7, 8}));
}

TEST(RowStream, OffsetsWrittenBeforeAreLeftAsTheyAre) {
  // (the device's rows: the offsets whole before the first run is told; a reader may use them)
  const std::vector<std::uint32_t> fill{3, 0, 4};
  std::vector<eid_t> offsets{0, 3, 3, 7};
  const std::vector<eid_t> before = offsets;
  RowStream rows(3, offsets.data(), fill.data(), /*written=*/true);
  rows.placed(1, 2, 3);
  rows.placed(0, 1, 0);
  EXPECT_EQ(rows.wait(0, 0), 3u);
  EXPECT_EQ(rows.max_out_degree(), 4u);
  EXPECT_EQ(offsets, before);
}

TEST(RowStream, MinEdgesHoldsTheConsumerBackUntilEnoughRowsCome) {
  const std::vector<std::uint32_t> fill{1, 1, 1, 1, 1, 1};
  std::vector<eid_t> offsets(7, 0);
  RowStream rows(6, offsets.data(), fill.data());
  rows.placed(0, 2, 0);
  std::thread more([&] { rows.placed(2, 2, 2); });
  EXPECT_EQ(rows.wait(0, 3), 4u);  // two edges are not enough: waits for rows 2-3
  more.join();
  rows.placed(4, 2, 4);
  EXPECT_EQ(rows.wait(4, 100), 6u);  // every row: returns whatever the edges
}

TEST(RowStream, TheSortsExceptionReachesTheConsumer) {
  const std::vector<std::uint32_t> fill{1, 1};
  std::vector<eid_t> offsets(3, 0);
  RowStream rows(2, offsets.data(), fill.data());
  rows.placed(0, 1, 0);
  std::thread sorter(
      [&] { rows.finish(std::make_exception_ptr(Error(ErrorKind::Interrupted, "interrupted"))); });
  EXPECT_THROW(rows.wait(1, 0), Error);
  sorter.join();
  EXPECT_THROW(rows.wait(1, 0), Error);  // (and at every later wait)
}

TEST(RowStream, ASortThatEndsShortOfTheLastRowIsAnError) {
  const std::vector<std::uint32_t> fill{1, 1, 1};
  std::vector<eid_t> offsets(4, 0);
  RowStream rows(3, offsets.data(), fill.data());
  rows.placed(0, 2, 0);
  rows.finish(nullptr);
  EXPECT_EQ(rows.wait(0, 1), 2u);
  EXPECT_THROW(rows.wait(2, 0), Error);
}

}  // namespace
}  // namespace tristream::conv::tail
