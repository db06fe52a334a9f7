// replay_test.cpp — the device block cache (device_cache.hpp) and the planner's replay of it
// (src/plan/replay.cpp): Belady eviction, pins, room with many units in flight, seeded sequences
// against a naive replay, and the plan's upload estimate as a replay of its units.
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

// ---- the device block cache (device_cache.hpp) -------------------------------------------------

TEST(DeviceBlockCache, EvictsTheFurthestNextUseNeverAPinnedBlock) {
  DeviceBlockCache c(100);
  c.insert(1, 40, 5, 0);
  c.insert(2, 40, 2, 0);
  EXPECT_TRUE(c.make_room(20).empty());  // 80 + 20 fits
  EXPECT_THROW(c.make_room(21), Error);  // both pinned by owner 0
  c.release(0);
  EXPECT_EQ(c.make_room(30), (std::vector<std::uint64_t>{1}));  // next use 5 before 2
  EXPECT_FALSE(c.contains(1));
  EXPECT_EQ(c.used(), 40u);
  // a block held by two owners stays pinned until both release it
  EXPECT_TRUE(c.lookup(2, 7, 0));
  EXPECT_TRUE(c.lookup(2, 7, 1));
  c.release(0);
  EXPECT_THROW(c.make_room(61), Error);
  c.release(1);
  EXPECT_EQ(c.make_room(61), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(c.used(), 0u);
  EXPECT_FALSE(c.lookup(2, 9, 0));
  EXPECT_THROW(c.insert(0, 1, 1, 0), Error);  // key 0 means "not cached"
}

// A naive replay of the same rule (linear scans; victim = the unpinned block with the largest
// (next use, key)), for comparison with the class and with the planner's estimate.
struct NaiveCache {
  struct E {
    std::uint64_t bytes, next;
    std::uint32_t pins;
  };
  std::uint64_t cap = 0, used = 0;
  std::map<std::uint64_t, E> m;
  // Runs one unit's distinct blocks (key, bytes, next use) for `owner`; returns the misses.
  std::vector<bool> unit(const std::vector<std::array<std::uint64_t, 3>>& blocks, int owner) {
    for (auto& kv : m) kv.second.pins &= ~(1u << owner);
    std::vector<bool> miss(blocks.size(), true);
    for (std::size_t x = 0; x < blocks.size(); ++x) {
      auto it = m.find(blocks[x][0]);
      if (it == m.end()) continue;
      miss[x] = false;
      it->second.next = blocks[x][2];
      it->second.pins |= 1u << owner;
    }
    for (std::size_t x = 0; x < blocks.size(); ++x) {
      if (!miss[x]) continue;
      while (used + blocks[x][1] > cap) {
        auto victim = m.end();
        for (auto it = m.begin(); it != m.end(); ++it)
          if (!it->second.pins && (victim == m.end() || it->second.next >= victim->second.next))
            victim = it;
        if (victim == m.end()) throw std::runtime_error("no room");
        used -= victim->second.bytes;
        m.erase(victim);
      }
      m[blocks[x][0]] = E{blocks[x][1], blocks[x][2], 1u << owner};
      used += blocks[x][1];
    }
    return miss;
  }
  void release(int owner) {
    for (auto& kv : m) kv.second.pins &= ~(1u << owner);
  }
  // Whether a unit's blocks find room beside the pinned ones (DeviceBlockCache::fits).
  bool fits(const std::vector<std::array<std::uint64_t, 3>>& blocks) const {
    std::uint64_t need = pinned();
    for (const auto& b : blocks) {
      const auto it = m.find(b[0]);
      need += it == m.end() ? b[1] : (it->second.pins ? 0 : it->second.bytes);
    }
    return need <= cap;
  }
  std::uint64_t pinned() const {
    std::uint64_t n = 0;
    for (const auto& kv : m) n += kv.second.pins ? kv.second.bytes : 0;
    return n;
  }
};

// Seeded units for the cache tests: key sizes 1..50 (size[key], keys 1..keys), units of 1 to 3
// distinct keys, and the bytes of the largest unit.
struct RandomUnits {
  std::vector<std::uint64_t> size;
  std::vector<std::vector<std::uint64_t>> units;
  std::uint64_t largest = 0;
  RandomUnits(std::mt19937_64& rng, std::size_t keys, std::size_t count)
      : size(keys + 1), units(count) {
    for (auto& b : size) b = 1 + rng() % 50;
    for (auto& u : units) {
      const std::size_t k = 1 + rng() % 3;
      while (u.size() < std::min(k, keys)) {
        const std::uint64_t key = 1 + rng() % keys;
        if (std::find(u.begin(), u.end(), key) == u.end()) u.push_back(key);
      }
      std::uint64_t b = 0;
      for (auto key : u) b += size[key];
      largest = std::max(largest, b);
    }
  }
};

// With more units in flight than two, a unit may not fit beside the pinned blocks: fits() says
// so exactly when a naive count does, the pipeline's early collection (release the oldest unit
// in flight until it fits) always makes room, and admit then never throws.
TEST(DeviceBlockCache, FitsWithManyUnitsInFlight) {
  for (std::uint64_t seed : {11u, 12u, 13u})
    for (int lanes : {2, 3, 8, 31}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " lanes " + std::to_string(lanes));
      std::mt19937_64 rng(seed);
      const RandomUnits r(rng, 40, 300);
      const auto& size = r.size;
      const auto& units = r.units;
      const std::uint64_t largest = r.largest;
      DeviceBlockCache c(2 * largest);
      NaiveCache ref;
      ref.cap = 2 * largest;
      std::deque<std::size_t> flying;
      std::uint64_t early = 0, wrong = 0;
      for (std::size_t u = 0; u < units.size(); ++u) {
        const int owner = static_cast<int>(u % static_cast<std::size_t>(lanes));
        if (!flying.empty() && flying.front() + static_cast<std::size_t>(lanes) == u) {
          c.release(owner);
          ref.release(owner);
          flying.pop_front();
        }
        std::vector<std::array<std::uint64_t, 3>> blocks;
        DeviceBlockCache::Request req[3];
        int n = 0;
        for (auto key : units[u]) {
          blocks.push_back({key, size[key], rng() % 1000});
          req[n++] = {key, size[key], blocks.back()[2]};
        }
        for (;;) {
          const bool fits = c.fits(req, n);
          wrong += fits != ref.fits(blocks);
          if (fits || flying.empty()) break;
          const int old = static_cast<int>(flying.front() % static_cast<std::size_t>(lanes));
          c.release(old);
          ref.release(old);
          flying.pop_front();
          ++early;
        }
        bool hit[3];
        EXPECT_NO_THROW(c.admit(req, n, owner, hit));
        ref.unit(blocks, owner);
        flying.push_back(u);
        wrong += c.pinned() != ref.pinned();
        EXPECT_LE(c.used(), c.capacity());
      }
      EXPECT_EQ(wrong, 0u);
      if (lanes == 2) {
        EXPECT_EQ(early, 0u);  // two units of at most half the capacity always fit
      } else if (lanes == 31) {
        EXPECT_GT(early, 0u);  // the cache, not the lanes, limits how far uploads run ahead
      }
    }
}

TEST(DeviceBlockCache, SeededSequencesMatchANaiveReplay) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u})
    for (std::size_t keys : {3u, 8u, 30u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " keys " + std::to_string(keys));
      std::mt19937_64 rng(seed);
      // units of 1 to 3 distinct keys; the cache holds two of the largest
      const RandomUnits r(rng, keys, 200);
      const auto& size = r.size;
      const auto& units = r.units;
      const std::uint64_t largest = r.largest;
      // next uses, by brute force
      auto next_use = [&](std::size_t u, std::uint64_t key) {
        for (std::size_t v = u + 1; v < units.size(); ++v)
          if (std::find(units[v].begin(), units[v].end(), key) != units[v].end()) return v;
        return static_cast<std::size_t>(kNeverUsed);
      };
      DeviceBlockCache c(2 * largest);
      NaiveCache ref;
      ref.cap = 2 * largest;
      std::uint64_t misses = 0, wrong = 0;
      for (std::size_t u = 0; u < units.size(); ++u) {
        const int owner = static_cast<int>(u % 2);
        c.release(owner);
        std::vector<std::array<std::uint64_t, 3>> blocks;
        for (auto key : units[u]) blocks.push_back({key, size[key], next_use(u, key)});
        const std::vector<bool> expect = ref.unit(blocks, owner);
        std::vector<bool> hit(blocks.size());
        for (std::size_t x = 0; x < blocks.size(); ++x)
          hit[x] = c.lookup(blocks[x][0], blocks[x][2], owner);
        for (std::size_t x = 0; x < blocks.size(); ++x) {
          wrong += hit[x] == expect[x];
          if (hit[x]) continue;
          ++misses;
          c.make_room(blocks[x][1]);
          c.insert(blocks[x][0], blocks[x][1], blocks[x][2], owner);
        }
        EXPECT_LE(c.used(), c.capacity());
        for (auto key : units[u]) wrong += !c.contains(key);
      }
      EXPECT_EQ(wrong, 0u);
      EXPECT_GE(misses, 1u);
      if (keys <= 3) {
        EXPECT_LE(misses, keys);  // everything fits: each block is uploaded once
      }
    }
}

// The planner's estimate is the cache run over its units: every range and hash plan with p > 1
// has a cache of its two slots, its units' upload_bytes are what a naive replay uploads (with the
// next uses recomputed by brute force, and the pipeline's units in flight: the lane's previous
// unit collected, the oldest early while there is no room) and sum to bytes_moved, never more
// than without the cache.
TEST(Planner, DeviceCacheEstimateIsAReplayOfTheUnits) {
  auto g = oriented(test::skewed_graph(3000, 40000, 29));
  auto src = memory_source(g, 97);
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {2u, 3u, 5u, 9u}) {
      SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p));
      Plan plan = plan_graph(*src, opts(s, p));
      ASSERT_EQ(plan.partition.p, p);
      ASSERT_EQ(plan.slots, 2);
      EXPECT_EQ(plan.device_cache_bytes, 2 * plan.slot_bytes);
      EXPECT_TRUE(plan.in_flight == 2 || plan.in_flight == 4 || plan.in_flight == 8 ||
                  plan.in_flight == kDeviceCacheInFlight)
          << plan.in_flight;
      const std::size_t lanes = static_cast<std::size_t>(plan.in_flight);
      std::deque<std::size_t> flying;  // the pipeline's units in flight
      const auto next = device_cache_next_uses(plan);
      ASSERT_EQ(next.size(), 3 * plan.units.size());
      NaiveCache ref;
      ref.cap = plan.device_cache_bytes;
      std::uint64_t moved = 0, without = 0, wrong_next = 0;
      std::set<std::uint64_t> keys;
      for (std::size_t u = 0; u < plan.units.size(); ++u) {
        const WorkUnit& w = plan.units[u];
        const BlockInfo* roles[3] = {&w.a, w.b_is_a ? nullptr : &w.b,
                                     w.c_is_a || w.c_is_b ? nullptr : &w.c};
        std::vector<std::array<std::uint64_t, 3>> blocks;
        std::vector<std::uint64_t> up;
        for (int r = 0; r < 3; ++r) {
          if (!roles[r]) continue;
          const std::uint64_t key = device_cache_key(plan, *roles[r]);
          keys.insert(key);
          std::uint64_t nu = kNeverUsed;  // brute force over the later units
          for (std::size_t v = u + 1; v < plan.units.size() && nu == kNeverUsed; ++v) {
            const WorkUnit& x = plan.units[v];
            for (const BlockInfo* b : {&x.a, &x.b, &x.c})
              if (b->row_part == roles[r]->row_part && b->col_part == roles[r]->col_part) nu = v;
          }
          wrong_next += next[3 * u + static_cast<std::size_t>(r)] != nu;
          blocks.push_back({key, roles[r]->bytes, nu});
          up.push_back(roles[r]->upload_bytes);
          without += roles[r]->upload_bytes;
        }
        // the lane's previous unit is collected, and the oldest early while there is no room
        if (!flying.empty() && flying.front() + lanes == u) {
          ref.release(static_cast<int>(u % lanes));
          flying.pop_front();
        }
        while (!ref.fits(blocks) && !flying.empty()) {
          ref.release(static_cast<int>(flying.front() % lanes));
          flying.pop_front();
        }
        const std::vector<bool> miss = ref.unit(blocks, static_cast<int>(u % lanes));
        flying.push_back(u);
        std::uint64_t unit_up = 0;
        for (std::size_t x = 0; x < miss.size(); ++x) unit_up += miss[x] ? up[x] : 0;
        EXPECT_EQ(w.upload_bytes, unit_up) << "unit " << u;
        moved += unit_up;
      }
      EXPECT_EQ(wrong_next, 0u);
      EXPECT_EQ(plan.bytes_moved, moved);
      EXPECT_LE(plan.bytes_moved, without);
      EXPECT_EQ(keys.count(0), 0u);
      if (s == Scheme::Range) {
        EXPECT_EQ(keys.size(), p * (p + 1) / 2);  // the blocks on and above the diagonal
      }
    }
  // no cache in core or for the vertex scheme (its blocks are used once)
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Range, 1)).device_cache_bytes, 0u);
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Vertex, 4)).device_cache_bytes, 0u);
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Vertex, 4)).in_flight, 2);
}

}  // namespace
}  // namespace tristream
