// xxh64.hpp — XXH64, written from its published specification (xxhash.com, "xxHash fast digest
// algorithm", v0.1.1). Internal to formats/: the checksum of every .tcsr section zstd does not
// check. Input may have any alignment; lanes are read little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tristream::tcsr::detail {

std::uint64_t xxh64(const void* data, std::size_t size, std::uint64_t seed = 0);

// The same digest over input given in pieces (a frame read a piece at a time): add() the
// pieces in order, then digest() equals xxh64() of their concatenation.
class Xxh64 {
 public:
  explicit Xxh64(std::uint64_t seed = 0);
  void add(const void* data, std::size_t size);
  std::uint64_t digest() const;

 private:
  std::uint64_t seed_;
  std::uint64_t acc_[4];
  std::uint64_t total_ = 0;
  unsigned char buf_[32] = {};  // the bytes of an unfinished stripe
  std::size_t held_ = 0;
};

}  // namespace tristream::tcsr::detail
