// host_edge_sorter.hpp — an EdgeSorter (tristream/edge_sorter.hpp) on the host, for the tests:
// the contract done the plain way (std::sort), with a capacity in keys so that a test can make it
// full, and counts of its calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tristream/edge_sorter.hpp"
#include "tristream/error.hpp"

namespace tristream::test {

class HostEdgeSorter final : public EdgeSorter {
 public:
  explicit HostEdgeSorter(std::uint64_t capacity = ~std::uint64_t{0}) : capacity_(capacity) {}

  std::string name() const override { return "host sorter (test)"; }
  bool append(const std::uint64_t* keys, std::size_t count) override {
    ++appends;
    if (keys_.size() + count > capacity_) return false;
    for (std::size_t i = 0; i < count; ++i) {
      TS_CHECK((keys[i] >> 32) < (keys[i] & 0xffffffffu), "a key with a >= b");
      keys_.push_back(keys[i]);
    }
    return true;
  }
  std::uint64_t size() const override { return keys_.size(); }
  void take_back(std::uint64_t first, std::size_t count, std::uint64_t* out) override {
    ++taken_back;
    TS_CHECK(first + count <= keys_.size(), "take_back past the keys");
    std::copy_n(keys_.begin() + static_cast<std::ptrdiff_t>(first), count, out);
  }
  bool fits_ids(std::uint64_t space) const override { return space <= max_space; }
  std::uint64_t unique_and_degrees(std::uint64_t space, std::uint32_t* degree) override {
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
  void sort_rows(const std::uint32_t* rank, std::uint64_t space, std::uint64_t n,
                 std::uint32_t* row_length) override {
    for (std::uint64_t& k : keys_) {
      TS_CHECK((k & 0xffffffffu) < space, "an id past the space");
      const std::uint64_t a = rank[k >> 32], b = rank[k & 0xffffffffu];
      TS_CHECK(a < n && b < n && a != b, "ranks out of range");
      k = a < b ? (a << 32 | b) : (b << 32 | a);
    }
    std::sort(keys_.begin(), keys_.end());
    std::fill(row_length, row_length + n, 0u);
    for (std::uint64_t k : keys_) ++row_length[k >> 32];
    sorted = true;
  }
  void columns(std::uint64_t first, std::uint64_t count, std::uint32_t* out) override {
    TS_CHECK(sorted && first + count <= keys_.size(), "columns before sort_rows or past them");
    for (std::uint64_t i = 0; i < count; ++i) out[i] = static_cast<std::uint32_t>(keys_[first + i]);
  }

  std::uint64_t max_space = ~std::uint64_t{0};  // fits_ids' answer
  int appends = 0, taken_back = 0;
  bool sorted = false;

 private:
  std::uint64_t capacity_;
  std::vector<std::uint64_t> keys_;
};

}  // namespace tristream::test
