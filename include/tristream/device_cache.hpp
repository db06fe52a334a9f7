// tristream/device_cache.hpp — which blocks stay on the device between work units (the
// device-resident block cache). Header-only and free of CUDA: the planner runs it to estimate
// the bytes a plan uploads, the CUDA backend runs it to decide what to upload and what to free,
// and the tests' device double runs it to check the pipeline's block keys.
//
// Why: the two staging slots are sized for the largest unit, but most units of a skewed graph
// are far smaller, and a range block G_ab is used by up to p + 2 units (as A, B and C). Kept
// in one pool of the two slots' bytes, the blocks a later unit needs are often still there.
//
// The policy is Belady's: when room is needed, the evictable block whose next use lies
// furthest in the future goes first (the pipeline knows the whole unit order). A block is
// evictable when no unit in flight holds it: a unit pins its blocks when its upload is planned
// (`lookup`/`insert` with its slot as owner) and unpins them when its count has been collected
// (`release(owner)`). With two owners (slots) and every unit's distinct blocks at most
// capacity / 2 bytes, room for a unit always exists; with more units in flight (owners up to
// 31), `fits` says whether it does, and the pipeline collects the oldest unit until it does.
//
// Contract: keys are nonzero and name a block's content for the whole run; next_use is the
// index of the next unit after the current one that uses the block (kNeverUsed when none).
#pragma once

#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tristream/error.hpp"
#include "tristream/types.hpp"

namespace tristream {

constexpr std::uint64_t kNeverUsed = ~std::uint64_t{0};

// The bytes a block takes on the device (in a slot or in the cache): its rows + 1 dense offsets,
// then its columns, each aligned to 256 bytes.
inline std::uint64_t device_block_bytes(std::uint64_t rows, std::uint64_t edges) {
  auto align = [](std::uint64_t x) { return (x + 255) / 256 * 256; };
  return align((rows + 1) * sizeof(eid_t)) + align(edges * sizeof(vid_t));
}

class DeviceBlockCache {
 public:
  explicit DeviceBlockCache(std::uint64_t capacity = 0) : capacity_(capacity) {}

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return used_; }
  std::uint64_t pinned() const { return pinned_; }
  std::size_t size() const { return entries_.size(); }
  bool contains(std::uint64_t key) const { return entries_.count(key) != 0; }

  // A resident block: pins it for `owner` (0..31), records its next use, returns true.
  // Otherwise returns false and changes nothing.
  bool lookup(std::uint64_t key, std::uint64_t next_use, int owner) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    Entry& e = it->second;
    if (e.pins == 0) {
      evictable_.erase({e.next_use, key});
      pinned_ += e.bytes;
    }
    e.next_use = next_use;
    if (!(e.pins & bit(owner))) owned_[owner].push_back(key);
    e.pins |= bit(owner);
    return true;
  }

  // Makes room for `bytes` more and returns the keys evicted to do so (their memory may be
  // freed: no unit in flight uses them). Throws Error(Internal) when the pinned blocks leave
  // too little room (a unit larger than the plan's slot).
  std::vector<std::uint64_t> make_room(std::uint64_t bytes) {
    std::vector<std::uint64_t> out;
    while (used_ + bytes > capacity_) {
      if (evictable_.empty())
        throw Error(ErrorKind::Internal, "device block cache: " + std::to_string(bytes) +
                                             " bytes do not fit (" + std::to_string(used_) +
                                             " of " + std::to_string(capacity_) +
                                             " bytes held by units in flight)");
      const auto victim = std::prev(evictable_.end());  // the furthest next use
      const std::uint64_t key = victim->second;
      evictable_.erase(victim);
      used_ -= entries_.at(key).bytes;
      entries_.erase(key);
      out.push_back(key);
    }
    return out;
  }

  // Adds a block (after make_room(bytes)), pinned for `owner`.
  void insert(std::uint64_t key, std::uint64_t bytes, std::uint64_t next_use, int owner) {
    TS_CHECK(key != 0 && !contains(key), "device block cache: a key inserted twice or zero");
    TS_CHECK(used_ + bytes <= capacity_, "device block cache: insert without room");
    entries_[key] = Entry{bytes, next_use, bit(owner)};
    owned_[owner].push_back(key);
    used_ += bytes;
    pinned_ += bytes;
  }

  // A block a unit needs: its key, its bytes on the device and its next use.
  struct Request {
    std::uint64_t key = 0, bytes = 0, next_use = kNeverUsed;
  };
  // Admits a unit's distinct blocks for `owner`, as every user of the cache runs it: 1. the
  // blocks already there are pinned (hit[x] = true), so that making room cannot evict them;
  // 2. each other block in turn gets room and is inserted, pinned. Returns the keys evicted to
  // make the room (their memory may be freed before the missing blocks are allocated).
  std::vector<std::uint64_t> admit(const Request* blocks, int n, int owner, bool* hit) {
    for (int x = 0; x < n; ++x) hit[x] = lookup(blocks[x].key, blocks[x].next_use, owner);
    std::vector<std::uint64_t> evicted;
    for (int x = 0; x < n; ++x) {
      if (hit[x]) continue;
      for (const std::uint64_t key : make_room(blocks[x].bytes)) evicted.push_back(key);
      insert(blocks[x].key, blocks[x].bytes, blocks[x].next_use, owner);
    }
    return evicted;
  }

  // Whether admit(blocks, n, ...) would find room now: the blocks pinned by units in flight,
  // the requested blocks already resident (admit pins them first) and the missing ones together
  // fit the capacity. With more than two units in flight the pipeline collects the oldest until
  // this holds (a unit alone always fits: its distinct blocks are at most capacity / 2).
  bool fits(const Request* blocks, int n) const {
    std::uint64_t need = pinned_;
    for (int x = 0; x < n; ++x) {  // distinct blocks, as admit takes them
      const auto it = entries_.find(blocks[x].key);
      if (it == entries_.end())
        need += blocks[x].bytes;
      else if (it->second.pins == 0)
        need += it->second.bytes;
    }
    return need <= capacity_;
  }

  // The unit of `owner` has finished: its blocks become evictable unless another owner holds
  // them.
  void release(int owner) {
    const std::uint32_t b = bit(owner);
    for (const std::uint64_t key : owned_[owner]) {
      const auto it = entries_.find(key);  // (pinned, so never evicted meanwhile)
      if (it == entries_.end() || !(it->second.pins & b)) continue;
      Entry& e = it->second;
      e.pins &= ~b;
      if (e.pins == 0) {
        evictable_.insert({e.next_use, key});
        pinned_ -= e.bytes;
      }
    }
    owned_[owner].clear();
  }

  // Every key, in no particular order (for freeing all memory at the end).
  std::vector<std::uint64_t> keys() const {
    std::vector<std::uint64_t> out;
    out.reserve(entries_.size());
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }
  void clear() {
    for (auto& o : owned_) o.clear();
    entries_.clear();
    evictable_.clear();
    used_ = pinned_ = 0;
  }

 private:
  struct Entry {
    std::uint64_t bytes = 0;
    std::uint64_t next_use = kNeverUsed;
    std::uint32_t pins = 0;  // a bit per owner holding it
  };
  static std::uint32_t bit(int owner) {
    TS_CHECK(owner >= 0 && owner < 32, "device block cache: owner out of range");
    return std::uint32_t{1} << owner;
  }
  std::uint64_t capacity_ = 0, used_ = 0, pinned_ = 0;  // pinned_: bytes held by some owner
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> evictable_;  // (next use, key), unpinned
  std::vector<std::uint64_t> owned_[32];  // per owner: the keys it pinned (release's work)
};

}  // namespace tristream
