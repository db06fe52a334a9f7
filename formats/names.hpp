// names.hpp — the names section of a version-2 .tcsr file (FORMAT.md, "Names"): decoding and
// validating its bytes. Internal to formats/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tristream/format.hpp"

namespace tristream::tcsr::detail {

// Decodes a names section of `size` bytes (checksum already verified) for n vertices. Returns
// an empty string and fills `out` when it is valid, else what is wrong: the section holds n + 1
// offsets (8 bytes each) and the name bytes; offsets[0] = 0, every name 1..kMaxNameBytes bytes,
// offsets[n] = the bytes that follow the offsets.
std::string decode_names(const unsigned char* data, std::uint64_t size, std::uint64_t n,
                         Names& out);

}  // namespace tristream::tcsr::detail
