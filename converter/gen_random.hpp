// gen_random.hpp — converter internals: the generators' randomness. Every random word is a pure
// function of (seed, stream, counter): the SplitMix64 finaliser over a Weyl sequence. No state
// is carried from one edge or piece to the next, so any split of the work over threads gives the
// same graph.
#pragma once

#include <cmath>
#include <cstdint>

namespace tristream::conv {

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// The key of a seed (and a stream within one model: a model with several random processes keys
// each with its own salt).
inline std::uint64_t seed_key(std::uint64_t seed, std::uint64_t salt = 0) {
  return mix64(seed * kGolden + 0x632be59bd9b4e019ull) ^ mix64(salt * 0xd1b54a32d192ed03ull);
}

// Word `i` of the stream `key`.
inline std::uint64_t word(std::uint64_t key, std::uint64_t i) {
  return mix64(key + i * kGolden);
}

// A double uniform in (0, 1] from a random word (53 bits).
inline double unit_open0(std::uint64_t r) {
  return (static_cast<double>(r >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// The number of failures before the next success of Bernoulli(p) trials, from a random word;
// `cap` or more means "at least cap". Precondition: 0 < p <= 1.
inline std::uint64_t geometric_gap(std::uint64_t r, double p, std::uint64_t cap) {
  if (p >= 1.0) return 0;
  const double g = std::floor(std::log(unit_open0(r)) / std::log1p(-p));
  return g >= static_cast<double>(cap) ? cap : static_cast<std::uint64_t>(g);
}

// A bijection of [0, 2^scale) keyed by the seed (odd multipliers and xor-shifts mod 2^scale), so
// that a model's special vertices (hubs) are not the low ids.
class Scramble {
 public:
  Scramble(std::uint64_t key, unsigned scale)
      : scale_(scale), mask_(scale >= 64 ? ~0ull : (std::uint64_t{1} << scale) - 1) {
    m1_ = mix64(key ^ 0x1111) | 1;
    m2_ = mix64(key ^ 0x2222) | 1;
    k1_ = mix64(key ^ 0x3333) & mask_;
    k2_ = mix64(key ^ 0x4444) & mask_;
  }
  std::uint64_t operator()(std::uint64_t x) const {
    const unsigned h = scale_ / 2 + 1;
    x = (x * m1_ + k1_) & mask_;
    x ^= x >> h;
    x = (x * m2_ + k2_) & mask_;
    x ^= x >> h;
    return x;
  }

 private:
  unsigned scale_;
  std::uint64_t mask_, m1_, m2_, k1_, k2_;
};

}  // namespace tristream::conv
