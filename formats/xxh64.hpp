// xxh64.hpp — XXH64, written from its published specification (xxhash.com, "xxHash fast digest
// algorithm", v0.1.1). Internal to formats/: the checksum of every .tcsr section zstd does not
// check. Input may have any alignment; lanes are read little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tristream::tcsr::detail {

std::uint64_t xxh64(const void* data, std::size_t size, std::uint64_t seed = 0);

}  // namespace tristream::tcsr::detail
