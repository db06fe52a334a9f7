// idmap.hpp — converter internals: the monotone map from original 64-bit ids (a sorted set) to
// compact ids 0..n-1. Dense sets use a bitmap with a rank per word; sparse ones a sorted table
// with a bucket index over the value range for the binary searches.
#pragma once

#include <cstdint>

#include "util.hpp"

namespace tristream::conv {

class IdMap {
 public:
  // From a bitmap of present ids (bit x set = id x present).
  void from_bitmap(BigBuffer<std::uint64_t> bits);
  // From the sorted unique ids: a bitmap when it takes at most 16 bytes per id, else the table.
  void from_sorted(BigBuffer<std::uint64_t> ids);
  std::uint64_t n() const { return n_; }
  // The compact id of x. Precondition: x is in the set.
  std::uint64_t operator()(std::uint64_t x) const {
    if (dense_) {
      const std::uint64_t w = x >> 6;
      return word_rank_[w] + static_cast<std::uint64_t>(__builtin_popcountll(
                                 bits_[w] & ((std::uint64_t{1} << (x & 63)) - 1)));
    }
    return sparse_lookup(x);
  }
  // The sorted ids themselves (materialised from the bitmap for dense sets).
  BigBuffer<std::uint64_t>& ids();
  // Dense sets: a direct table (4 bytes per id up to the largest), for the fastest lookups;
  // table()[x] equals (*this)(x) for x in the set. Null without one.
  void make_table(unsigned threads);
  // The bytes make_table would take (0: sparse sets, which get none).
  std::uint64_t table_bytes() const {
    return dense_ && n_ <= (std::uint64_t{1} << 32) ? bits_.size() * 64 * 4 : 0;
  }
  const std::uint32_t* table() const { return table_.capacity() ? table_.data() : nullptr; }
  void drop_table() { table_.release(); }

 private:
  std::uint64_t sparse_lookup(std::uint64_t x) const;
  bool dense_ = false;
  std::uint64_t n_ = 0;
  BigBuffer<std::uint64_t> bits_, word_rank_;
  BigBuffer<std::uint64_t> ids_;
  BigBuffer<std::uint64_t> index_;
  BigBuffer<std::uint32_t> table_;
  int shift_ = 0;
};

}  // namespace tristream::conv
