// xxh64.cpp — XXH64 from its specification; see xxh64.hpp.
#include "xxh64.hpp"

#include <algorithm>
#include <cstring>

#include "layout.hpp"

namespace tristream::tcsr::detail {
namespace {

constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t kP5 = 0x27D4EB2F165667C5ull;

inline std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

// Lanes are little-endian; layout.hpp refuses big-endian hosts, so its plain loads are right.

inline std::uint64_t round(std::uint64_t acc, std::uint64_t lane) {
  acc += lane * kP2;
  acc = rotl(acc, 31);
  return acc * kP1;
}

inline std::uint64_t merge(std::uint64_t acc, std::uint64_t v) {
  acc ^= round(0, v);
  return acc * kP1 + kP4;
}

inline void stripe(std::uint64_t acc[4], const unsigned char* p) {
  acc[0] = round(acc[0], get_u64(p));
  acc[1] = round(acc[1], get_u64(p + 8));
  acc[2] = round(acc[2], get_u64(p + 16));
  acc[3] = round(acc[3], get_u64(p + 24));
}

// Steps 2-6 of the specification: converge the accumulators (if a stripe was consumed), add
// the length, consume the remaining < 32 bytes, avalanche.
std::uint64_t finish(const std::uint64_t acc[4], bool had_stripe, std::uint64_t seed,
                     std::uint64_t total, const unsigned char* p, std::size_t rest) {
  std::uint64_t h;
  if (had_stripe) {
    h = rotl(acc[0], 1) + rotl(acc[1], 7) + rotl(acc[2], 12) + rotl(acc[3], 18);
    for (int i = 0; i < 4; ++i) h = merge(h, acc[i]);
  } else {
    h = seed + kP5;
  }
  h += total;
  while (rest >= 8) {
    h ^= round(0, get_u64(p));
    h = rotl(h, 27) * kP1 + kP4;
    p += 8;
    rest -= 8;
  }
  if (rest >= 4) {
    h ^= static_cast<std::uint64_t>(get_u32(p)) * kP1;
    h = rotl(h, 23) * kP2 + kP3;
    p += 4;
    rest -= 4;
  }
  while (rest > 0) {
    h ^= static_cast<std::uint64_t>(*p) * kP5;
    h = rotl(h, 11) * kP1;
    ++p;
    --rest;
  }
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

}  // namespace

std::uint64_t xxh64(const void* data, std::size_t size, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t acc[4] = {seed + kP1 + kP2, seed + kP2, seed, seed - kP1};
  const std::size_t stripes = size / 32;
  for (std::size_t i = 0; i < stripes; ++i) stripe(acc, p + 32 * i);
  return finish(acc, stripes > 0, seed, size, p + 32 * stripes, size % 32);
}

Xxh64::Xxh64(std::uint64_t seed)
    : seed_(seed), acc_{seed + kP1 + kP2, seed + kP2, seed, seed - kP1} {}

void Xxh64::add(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += size;
  if (held_ > 0) {  // complete the held stripe first
    const std::size_t take = std::min(size, 32 - held_);
    std::memcpy(buf_ + held_, p, take);
    held_ += take;
    p += take;
    size -= take;
    if (held_ < 32) return;
    stripe(acc_, buf_);
    held_ = 0;
  }
  for (; size >= 32; p += 32, size -= 32) stripe(acc_, p);
  std::memcpy(buf_, p, size);
  held_ = size;
}

std::uint64_t Xxh64::digest() const {
  return finish(acc_, total_ >= 32, seed_, total_, buf_, held_);
}

}  // namespace tristream::tcsr::detail
