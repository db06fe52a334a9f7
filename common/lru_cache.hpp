// common/lru_cache.hpp — a byte-capped least-recently-used cache with a keep predicate.
//
// Entries have a size in bytes; the cache never evicts on its own: evict_for(add, keep) evicts
// the least recently used entries that keep(key) does not keep until `add` more bytes fit the
// capacity, and says whether they do. find() marks an entry used. peak() is the most bytes held
// at once. Not thread-safe (the owner locks).
#pragma once

#include <cstdint>
#include <map>
#include <utility>

namespace tristream {

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(std::uint64_t capacity = 0) : cap_(capacity) {}
  std::uint64_t capacity() const { return cap_; }
  void set_capacity(std::uint64_t bytes) { cap_ = bytes; }
  std::uint64_t used() const { return used_; }
  std::uint64_t peak() const { return peak_; }
  std::size_t size() const { return map_.size(); }
  bool contains(const Key& k) const { return map_.count(k) != 0; }
  // The entry's value marked most recently used, or null.
  Value* find(const Key& k) {
    auto it = map_.find(k);
    if (it == map_.end()) return nullptr;
    it->second.tick = ++tick_;
    return &it->second.value;
  }
  // Adds an entry as the most recently used, `bytes` in size; false (nothing changes) when the
  // key is there already. The caller makes room first (evict_for).
  bool insert(const Key& k, Value v, std::uint64_t bytes) {
    const bool added = map_.emplace(k, Entry{std::move(v), bytes, ++tick_}).second;
    if (added) used_ += bytes;
    if (used_ > peak_) peak_ = used_;
    return added;
  }
  void erase(const Key& k) {
    auto it = map_.find(k);
    if (it == map_.end()) return;
    used_ -= it->second.bytes;
    map_.erase(it);
  }
  void clear() {
    map_.clear();
    used_ = 0;
  }
  // Evicts the least recently used entries that keep(key) does not keep until `add` more bytes
  // fit the capacity; false when they do not fit even then.
  template <class Keep>
  bool evict_for(std::uint64_t add, const Keep& keep) {
    while (used_ + add > cap_) {
      auto victim = map_.end();
      for (auto x = map_.begin(); x != map_.end(); ++x)
        if (!keep(x->first) && (victim == map_.end() || x->second.tick < victim->second.tick))
          victim = x;
      if (victim == map_.end()) return false;
      used_ -= victim->second.bytes;
      map_.erase(victim);
    }
    return true;
  }

 private:
  struct Entry {
    Value value;
    std::uint64_t bytes = 0;
    std::uint64_t tick = 0;
  };
  std::map<Key, Entry> map_;
  std::uint64_t cap_ = 0, used_ = 0, peak_ = 0, tick_ = 0;
};

}  // namespace tristream
