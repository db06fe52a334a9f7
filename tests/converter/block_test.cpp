// block_test.cpp — a parsed block's key buffer (converter/parse.hpp): the keys a worker gives
// back (once they went to the device) are the next block's buffer on the same thread, written
// afresh (size and keys those of the new block, whatever the old one held); a spare more than
// twice the need is not taken for a small block but kept for a large one; another thread never
// sees it; a block that turns wide on the spare still parses exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "converter/parse.hpp"

namespace tristream::conv {
namespace {

// `n` seeded bin32 records with ids below `ids` (some self-loops among them).
std::vector<char> records32(std::size_t n, std::uint32_t ids, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> bytes(n * 8);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = static_cast<std::uint32_t>(rng() % ids);
    const std::uint32_t b = i % 7 == 0 ? a : static_cast<std::uint32_t>(rng() % ids);
    std::memcpy(&bytes[8 * i], &a, 4);
    std::memcpy(&bytes[8 * i + 4], &b, 4);
  }
  return bytes;
}

// The canonical keys of bin32 records, self-loops dropped, in input order.
std::vector<std::uint64_t> expected_keys(const std::vector<char>& bytes) {
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    std::uint32_t a, b;
    std::memcpy(&a, &bytes[i], 4);
    std::memcpy(&b, &bytes[i + 4], 4);
    if (a == b) continue;
    keys.push_back(std::uint64_t{std::min(a, b)} << 32 | std::max(a, b));
  }
  return keys;
}

std::vector<std::uint64_t> keys_of(const Block& b) {
  return std::vector<std::uint64_t>(b.keys.begin(), b.keys.end());
}

TEST(BlockKeys, KeysGivenBackAreTheNextBlocksBufferWrittenAfresh) {
  std::thread([] {
    const auto first = records32(40000, 1000, 1), second = records32(30000, 50, 2);
    Block a;
    parse_binary(first.data(), first.size(), false, a);
    ASSERT_FALSE(a.wide);
    ASSERT_EQ(keys_of(a), expected_keys(first));
    const std::uint64_t* const buffer = a.keys.data();
    const std::size_t capacity = a.keys.capacity();
    give_back_keys(a.keys);
    EXPECT_EQ(a.keys.capacity(), 0u);
    EXPECT_EQ(a.keys.data(), nullptr);
    // Had the buffer been unmapped, a mapping of its size now would likely take its address.
    BigBuffer<std::uint64_t> decoy(capacity);
    Block b;
    parse_binary(second.data(), second.size(), false, b);
    EXPECT_EQ(b.keys.data(), buffer);
    EXPECT_EQ(keys_of(b), expected_keys(second));  // not a key of the first block left over
    EXPECT_EQ(b.records, 30000u);
  }).join();
}

TEST(BlockKeys, ASpareOfMoreThanTwiceTheNeedIsKeptForALargerBlock) {
  std::thread([] {
    const auto large = records32(100000, 5000, 3), small = records32(100, 20, 4);
    Block a;
    parse_binary(large.data(), large.size(), false, a);
    const std::uint64_t* const buffer = a.keys.data();
    const std::size_t capacity = a.keys.capacity();
    give_back_keys(a.keys);
    BigBuffer<std::uint64_t> decoy(capacity);  // (as in the test before)
    Block b;
    parse_binary(small.data(), small.size(), false, b);
    EXPECT_NE(b.keys.data(), buffer);
    EXPECT_EQ(keys_of(b), expected_keys(small));
    Block c;
    parse_binary(large.data(), large.size(), false, c);
    EXPECT_EQ(c.keys.data(), buffer);
    EXPECT_EQ(keys_of(c), expected_keys(large));
  }).join();
}

TEST(BlockKeys, AnotherThreadDoesNotTakeTheSpare) {
  std::thread([] {
    const auto bytes = records32(20000, 300, 5);
    Block a;
    parse_binary(bytes.data(), bytes.size(), false, a);
    const std::uint64_t* const buffer = a.keys.data();
    give_back_keys(a.keys);
    std::thread([&] {
      Block b;
      parse_binary(bytes.data(), bytes.size(), false, b);
      EXPECT_NE(b.keys.data(), buffer);
      EXPECT_EQ(keys_of(b), expected_keys(bytes));
    }).join();
  }).join();
}

TEST(BlockKeys, ABlockTurningWideOnTheSpareParsesExactly) {
  std::thread([] {
    const auto narrow = records32(10000, 100, 6);
    Block a;
    parse_binary(narrow.data(), narrow.size(), false, a);
    give_back_keys(a.keys);
    // bin64: two pairs below 2^32, then one above.
    const std::uint64_t pairs[] = {5, 3, 7, 7, 1, 2, std::uint64_t{1} << 40, 9};
    std::vector<char> wide(sizeof pairs);
    std::memcpy(wide.data(), pairs, sizeof pairs);
    Block b;
    parse_binary(wide.data(), wide.size(), true, b);
    ASSERT_TRUE(b.wide);
    ASSERT_EQ(b.edges.size(), 3u);
    EXPECT_EQ(b.edges[0], (Edge64{3, 5}));
    EXPECT_EQ(b.edges[1], (Edge64{1, 2}));
    EXPECT_EQ(b.edges[2], (Edge64{9, std::uint64_t{1} << 40}));
    EXPECT_EQ(b.loops, 1u);
    EXPECT_EQ(b.max_id, std::uint64_t{1} << 40);
  }).join();
}

}  // namespace
}  // namespace tristream::conv
