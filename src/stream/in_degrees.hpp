// stream/in_degrees.hpp — in-degrees counted from column arrays on several threads at once
// (streamed_degrees and streamed_wedges over the file's chunks, InCoreImage over its image).
//
// A degree-ordered graph's hubs have the highest ids, and most columns name them: one relaxed
// atomic increment per column then has every thread fight for the same few cache lines (a hub
// graph of 270 M edges took 2.8 s on 16 cores). So the top `hot` ids are counted per lane, in
// plain 32-bit counters (a vertex has fewer than n <= 2^32 in-neighbours, so a lane's share fits),
// and merged at the end; the other ids take atomics, where they rarely meet.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tristream/error.hpp"
#include "tristream/types.hpp"

namespace tristream::stream {

template <class T>
class InDegreeCounter {
 public:
  // The ids counted per lane by default: the top 2^18 (1 MiB per lane).
  static constexpr std::uint64_t kHot = std::uint64_t{1} << 18;
  static std::uint64_t lane_bytes(std::uint64_t hot) { return hot * sizeof(std::uint32_t); }

  // d: n counters, added to. lanes: the tasks that call add() (one thread per lane at a time).
  // hot: ids at or above n - hot are counted per lane (capped at n; 0 with a single lane, which
  // meets no contention).
  InDegreeCounter(T* d, std::uint64_t n, unsigned lanes, std::uint64_t hot = kHot)
      : d_(d), n_(n), hot_(lanes > 1 ? std::min(n, hot) : 0), hot0_(n - hot_), lanes_(lanes) {}

  // Counts the columns cols[0, count) in lane `lane`; an id >= n throws Error(Internal).
  void add(unsigned lane, const vid_t* cols, std::uint64_t count) {
    std::vector<std::uint32_t>& h = local_.at(lane);
    if (hot_ && h.empty()) h.assign(hot_, 0);
    for (std::uint64_t e = 0; e < count; ++e) {
      const vid_t v = cols[e];
      TS_CHECK(v < n_, "column id out of range");
      if (v >= hot0_)
        ++h[v - hot0_];
      else
        __atomic_fetch_add(&d_[v], T{1}, __ATOMIC_RELAXED);
    }
  }

  // Adds the lanes' counts into d; after every add().
  void merge() {
    for (auto& h : local_) {
      for (std::uint64_t x = 0; x < h.size(); ++x) d_[hot0_ + x] += h[x];
      std::vector<std::uint32_t>().swap(h);
    }
  }

 private:
  T* d_;
  std::uint64_t n_, hot_, hot0_;
  unsigned lanes_;
  std::vector<std::vector<std::uint32_t>> local_ = std::vector<std::vector<std::uint32_t>>(lanes_);
};

}  // namespace tristream::stream
