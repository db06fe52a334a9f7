// options.cpp — the API's small values: byte sizes given as text ("4G") or bytes, and the version.
#include <cctype>

#include "tristream/error.hpp"
#include "tristream/tristream.hpp"

#ifndef TRISTREAM_VERSION
#define TRISTREAM_VERSION "unknown"
#endif

namespace tristream {

namespace {

Error usage(const std::string& msg) {
  return Error(ErrorKind::Usage, msg);
}

}  // namespace

std::uint64_t parse_byte_size(const std::string& text, const std::string& what) {
  // 1. The digits: a non-negative integer that fits 64 bits.
  std::size_t i = 0;
  std::uint64_t base = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
    if (base > (UINT64_MAX - d) / 10) throw usage(what + ": size '" + text + "' is too large");
    base = base * 10 + d;
  }
  if (i == 0) throw usage(what + ": expected a size like 512M or 4G, got '" + text + "'");
  // 2. The suffix: none or B, K, M, G, T (optionally KB / KiB ...), binary multiples.
  std::string suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  const char* letters = "KMGT";
  for (int k = 0; k < 4; ++k) {
    const std::string l(1, letters[k]);
    if (suffix == l || suffix == l + "B" || suffix == l + "IB") shift = 10 * (k + 1);
  }
  if (shift < 0)
    throw usage(what + ": unknown size suffix '" + text.substr(i) + "' (use K, M, G or T)");
  if (shift > 0 && base > (UINT64_MAX >> shift))
    throw usage(what + ": size '" + text + "' is too large");
  return base << shift;
}

ByteSize::ByteSize(const std::string& text) {
  bytes_ = text.empty() ? 0 : parse_byte_size(text, "byte size");
}

std::string version() {
  return TRISTREAM_VERSION;
}

}  // namespace tristream
