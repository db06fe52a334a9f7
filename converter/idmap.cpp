// idmap.cpp — the monotone original-id -> compact-id map (idmap.hpp).
#include "idmap.hpp"

#include <algorithm>

namespace tristream::conv {

void IdMap::from_bitmap(BigBuffer<std::uint64_t> bits) {
  dense_ = true;
  bits_ = std::move(bits);
  const std::size_t W = bits_.size();
  word_rank_.reserve(W + 1);
  word_rank_.resize(W + 1);
  std::uint64_t run = 0;
  for (std::size_t w = 0; w < W; ++w) {
    word_rank_[w] = run;
    run += static_cast<std::uint64_t>(__builtin_popcountll(bits_[w]));
  }
  word_rank_[W] = run;
  n_ = run;
}

void IdMap::from_sorted(BigBuffer<std::uint64_t> ids) {
  ids_ = std::move(ids);
  n_ = ids_.size();
  if (n_ == 0) return;
  const std::uint64_t words = ids_[n_ - 1] / 64 + 1;
  if (ids_[n_ - 1] < (std::uint64_t{1} << 40) && words <= n_) {
    BigBuffer<std::uint64_t> bits(words);
    bits.resize(words);
    for (std::uint64_t x : ids_) bits[x >> 6] |= std::uint64_t{1} << (x & 63);
    from_bitmap(std::move(bits));
    return;
  }
  dense_ = false;
  const std::uint64_t lo = ids_[0], span = ids_[n_ - 1] - lo;
  int kbits = 1;
  while ((std::uint64_t{1} << kbits) < n_ / 4 && kbits < 30) ++kbits;
  shift_ = 0;
  while (shift_ < 64 && (span >> shift_) >= (std::uint64_t{1} << kbits)) ++shift_;
  const std::size_t nb = static_cast<std::size_t>((span >> shift_) + 2);
  index_.reserve(nb);
  index_.resize(nb);
  std::size_t pos = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    while (pos < n_ && ((ids_[pos] - lo) >> shift_) < b) ++pos;
    index_[b] = pos;
  }
}

std::uint64_t IdMap::sparse_lookup(std::uint64_t x) const {
  const std::uint64_t b = (x - ids_[0]) >> shift_;
  const std::uint64_t* f =
      std::lower_bound(ids_.data() + index_[b], ids_.data() + index_[b + 1], x);
  return static_cast<std::uint64_t>(f - ids_.data());
}

void IdMap::make_table(unsigned threads) {
  if (table_bytes() == 0) return;
  const std::size_t W = bits_.size();
  table_.reserve(W * 64);
  table_.resize(W * 64);
  parallel_for(threads, W, 1 << 12, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t w = lo; w < hi; ++w) {
      std::uint32_t r = static_cast<std::uint32_t>(word_rank_[w]);
      const std::uint64_t word = bits_[w];
      for (unsigned j = 0; j < 64; ++j) {
        table_[w * 64 + j] = r;
        r += static_cast<std::uint32_t>((word >> j) & 1);
      }
    }
  });
}

BigBuffer<std::uint64_t>& IdMap::ids() {
  if (dense_ && ids_.size() != n_) {
    ids_.reserve(n_ + 1);
    std::size_t k = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      std::uint64_t word = bits_[w];
      while (word) {
        ids_[k++] = (static_cast<std::uint64_t>(w) << 6) +
                    static_cast<std::uint64_t>(__builtin_ctzll(word));
        word &= word - 1;
      }
    }
    ids_.resize(k);
  }
  return ids_;
}

}  // namespace tristream::conv
