// lru_cache_test.cpp — the LRU cache: eviction order, the keep predicate, the byte cap, the peak.
#include "common/lru_cache.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tristream {
namespace {

TEST(LruCache, EvictsLeastRecentlyUsedFirst) {
  LruCache<int, std::string> c(30);
  c.insert(1, "a", 10);
  c.insert(2, "b", 10);
  c.insert(3, "c", 10);
  ASSERT_NE(c.find(1), nullptr);  // 2 is now the least recently used
  EXPECT_TRUE(c.evict_for(10, [](int) { return false; }));
  EXPECT_FALSE(c.contains(2));
  EXPECT_TRUE(c.contains(1));
  EXPECT_TRUE(c.contains(3));
  EXPECT_EQ(c.used(), 20u);
}

TEST(LruCache, KeepPredicateProtectsEntries) {
  LruCache<int, int> c(20);
  c.insert(1, 1, 10);
  c.insert(2, 2, 10);
  EXPECT_TRUE(c.evict_for(10, [](int k) { return k == 1; }));
  EXPECT_TRUE(c.contains(1));
  EXPECT_FALSE(c.contains(2));
  // nothing left that may go: the room cannot be made
  EXPECT_FALSE(c.evict_for(15, [](int k) { return k == 1; }));
  EXPECT_TRUE(c.contains(1));
}

TEST(LruCache, InsertOfPresentKeyChangesNothing) {
  LruCache<int, int> c(100);
  EXPECT_TRUE(c.insert(1, 5, 10));
  EXPECT_FALSE(c.insert(1, 6, 20));
  EXPECT_EQ(*c.find(1), 5);
  EXPECT_EQ(c.used(), 10u);
}

TEST(LruCache, PeakStaysWithinCapWhenRoomIsMadeFirst) {
  LruCache<int, int> c(25);
  for (int k = 0; k < 50; ++k) {
    ASSERT_TRUE(c.evict_for(10, [](int) { return false; }));
    c.insert(k, k, 10);
    EXPECT_LE(c.used(), c.capacity());
  }
  EXPECT_EQ(c.peak(), 20u);
  c.erase(49);
  EXPECT_EQ(c.used(), 10u);
  c.clear();
  EXPECT_EQ(c.used(), 0u);
  EXPECT_EQ(c.size(), 0u);
}

TEST(LruCache, ZeroCapacityHoldsNothingAfterEviction) {
  LruCache<int, int> c(0);
  EXPECT_TRUE(c.evict_for(0, [](int) { return false; }));
  EXPECT_FALSE(c.evict_for(1, [](int) { return false; }));
}

}  // namespace
}  // namespace tristream
