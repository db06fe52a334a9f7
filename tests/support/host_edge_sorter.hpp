// host_edge_sorter.hpp — an EdgeSorter (tristream/edge_sorter.hpp) on the host, for the tests:
// the contract done the plain way (std::sort), with a capacity in keys so that a test can make it
// full, and counts of its calls. Its appends take a lock. Its row tally is the reference
// (tally_rows_reference), unless can_tally is false.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tristream/edge_sorter.hpp"
#include "tristream/error.hpp"

namespace tristream::test {

class HostEdgeSorter final : public EdgeSorter {
 public:
  explicit HostEdgeSorter(std::uint64_t capacity = ~std::uint64_t{0}) : capacity_(capacity) {}

  std::string name() const override { return "host sorter (test)"; }
  bool ready() const override {
    if (!driver_sees_ready && std::this_thread::get_id() == made_on_) return false;
    return ready_after-- <= 0;
  }
  bool append(const std::uint64_t* keys, std::size_t count) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++appends;
    if (closed || keys_.size() + count > capacity_) return false;
    for (std::size_t i = 0; i < count; ++i) {
      TS_CHECK((keys[i] >> 32) < (keys[i] & 0xffffffffu), "a key with a >= b");
      keys_.push_back(keys[i]);
    }
    return true;
  }
  void close() override {
    std::lock_guard<std::mutex> lock(mu_);
    closed = true;
  }
  std::uint64_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_.size();
  }
  void take_back(std::uint64_t first, std::size_t count, std::uint64_t* out) override {
    TS_CHECK(closed, "take_back before close");
    ++taken_back;
    TS_CHECK(first + count <= keys_.size(), "take_back past the keys");
    std::copy_n(keys_.begin() + static_cast<std::ptrdiff_t>(first), count, out);
  }
  bool fits_ids(std::uint64_t space) const override { return space <= max_space; }
  std::uint64_t unique_and_degrees(std::uint64_t space, std::uint32_t* degree) override {
    TS_CHECK(closed, "unique_and_degrees before close");
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    std::fill(degree, degree + space, 0u);
    for (std::uint64_t k : keys_) {
      TS_CHECK((k & 0xffffffffu) < space, "an id past the space");
      ++degree[k >> 32];
      ++degree[k & 0xffffffffu];
    }
    return keys_.size();
  }
  void rank_and_sort_rows(std::uint64_t space, std::uint64_t n, std::uint32_t* perm,
                          std::uint32_t* row_length) override {
    // The ranks by (degree, id), from the degrees of the unique keys.
    std::vector<std::uint64_t> degree(space, 0);
    for (std::uint64_t k : keys_) {
      ++degree[k >> 32];
      ++degree[k & 0xffffffffu];
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> order;
    for (std::uint64_t v = 0; v < space; ++v)
      if (degree[v]) order.emplace_back(degree[v], static_cast<std::uint32_t>(v));
    TS_CHECK(order.size() == n, "the vertex count disagrees with the keys");
    std::sort(order.begin(), order.end());
    std::vector<std::uint64_t> rank(space, 0);
    for (std::uint64_t r = 0; r < n; ++r) {
      perm[r] = order[r].second;
      rank[order[r].second] = r;
    }
    // The edges of G+, sorted.
    for (std::uint64_t& k : keys_) {
      const std::uint64_t a = rank[k >> 32], b = rank[k & 0xffffffffu];
      k = a < b ? (a << 32 | b) : (b << 32 | a);
    }
    std::sort(keys_.begin(), keys_.end());
    std::fill(row_length, row_length + n, 0u);
    for (std::uint64_t k : keys_) ++row_length[k >> 32];
    sorted = true;
  }
  void columns(std::uint64_t first, std::uint64_t count, std::uint32_t* out) override {
    TS_CHECK(sorted && !released && first + count <= keys_.size(),
             "columns before rank_and_sort_rows, after release or past them");
    for (std::uint64_t i = 0; i < count; ++i) out[i] = static_cast<std::uint32_t>(keys_[first + i]);
  }

  bool start_tally(const RowTallySpec& spec) override {
    TS_CHECK(sorted && !released && !tally_started, "start_tally out of order");
    if (!can_tally) return false;
    tally_started = true;
    spec_ = spec;
    return true;
  }
  RowTallySums finish_tally() override {
    TS_CHECK(tally_started && !released, "finish_tally without start_tally or after release");
    // (the rows of G+ from the sorted keys: n from the spec's last bound)
    const std::uint64_t n = spec_.buckets.back();
    std::vector<std::uint64_t> offsets(n + 1, 0);
    std::vector<std::uint32_t> cols(keys_.size());
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      ++offsets[(keys_[i] >> 32) + 1];
      cols[i] = static_cast<std::uint32_t>(keys_[i]);
    }
    for (std::uint64_t r = 0; r < n; ++r) offsets[r + 1] += offsets[r];
    ++tallies;
    return tally_rows_reference(spec_, n, offsets.data(), cols.data());
  }

  void release() noexcept override {
    released = true;
    std::vector<std::uint64_t>().swap(keys_);
  }

  std::uint64_t max_space = ~std::uint64_t{0};  // fits_ids' answer
  mutable std::atomic<int> ready_after{0};      // ready() false this many times first
  bool driver_sees_ready = true;  // false: ready() is false on the thread that made the sorter
  bool can_tally = true;          // start_tally's answer
  int appends = 0, taken_back = 0, tallies = 0;
  bool closed = false, sorted = false, released = false, tally_started = false;

 private:
  mutable std::mutex mu_;
  std::uint64_t capacity_;
  std::thread::id made_on_ = std::this_thread::get_id();
  std::vector<std::uint64_t> keys_;
  RowTallySpec spec_;
};

}  // namespace tristream::test
