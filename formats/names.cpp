// names.cpp — decodes and validates the names section (names.hpp).
#include "names.hpp"

#include <cstring>

#include "layout.hpp"

namespace tristream::tcsr::detail {

std::string decode_names(const unsigned char* data, std::uint64_t size, std::uint64_t n,
                         Names& out) {
  // 1. The offsets fit, and the bytes after them are what the last offset says.
  if (size / 8 < n + 1)
    return std::to_string(size) + " bytes cannot hold the " + std::to_string(n + 1) +
           " offsets of n = " + std::to_string(n) + " names";
  const std::uint64_t offsets_bytes = (n + 1) * 8;
  const std::uint64_t bytes = size - offsets_bytes;
  std::vector<std::uint64_t> offsets(n + 1);
  std::memcpy(offsets.data(), data, offsets_bytes);
  if (offsets[0] != 0) return "offsets[0] = " + std::to_string(offsets[0]) + ", not 0";
  if (offsets[n] != bytes)
    return "offsets[n] = " + std::to_string(offsets[n]) + " but " + std::to_string(bytes) +
           " name bytes follow the offsets";
  // 2. Every name is 1..kMaxNameBytes bytes (offsets increase, so all lie inside the section).
  for (std::uint64_t k = 0; k < n; ++k)
    if (offsets[k + 1] <= offsets[k] || offsets[k + 1] - offsets[k] > kMaxNameBytes)
      return "name " + std::to_string(k) + " has " +
             (offsets[k + 1] < offsets[k]
                  ? std::string("a negative length")
                  : std::to_string(offsets[k + 1] - offsets[k]) + " bytes (expected 1.." +
                        std::to_string(kMaxNameBytes) + ")");
  out.offsets = std::move(offsets);
  out.bytes.assign(reinterpret_cast<const char*>(data + offsets_bytes), bytes);
  return {};
}

}  // namespace tristream::tcsr::detail
