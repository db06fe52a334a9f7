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
  const std::string expected =
      what + ": expected a size like 512M, 1.5G or 4096, got '" + text + "'";
  const std::string too_large = what + ": size '" + text + "' is too large";
  // 1. The number: digits, optionally '.' and up to 18 more digits (so the fraction fits).
  auto digits = [&](std::size_t& i, std::uint64_t& value, std::uint64_t& scale) {
    const std::size_t i0 = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
      if (value > (UINT64_MAX - d) / 10) throw usage(too_large);
      value = value * 10 + d;
      scale *= 10;
    }
    return i - i0;
  };
  std::size_t i = 0;
  std::uint64_t whole = 0, frac = 0, ignored = 1, frac_scale = 1;
  if (digits(i, whole, ignored) == 0) throw usage(expected);
  if (i < text.size() && text[i] == '.') {
    std::size_t n = 0;
    while (i + 1 + n < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1 + n])))
      ++n;
    if (n == 0 || n > 18) throw usage(expected);
    ++i;
    digits(i, frac, frac_scale);
  }
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
  if (frac_scale > 1 && shift == 0)
    throw usage(what + ": a fractional size needs a suffix (K, M, G or T), got '" + text + "'");
  // 3. whole * 2^shift + floor(frac * 2^shift / frac_scale), without overflow.
  if (whole > (UINT64_MAX >> shift)) throw usage(too_large);
  const unsigned __int128 part =
      (static_cast<unsigned __int128>(frac) << shift) / static_cast<unsigned __int128>(frac_scale);
  const std::uint64_t base = whole << shift;
  if (part > UINT64_MAX - base) throw usage(too_large);
  return base + static_cast<std::uint64_t>(part);
}

ByteSize::ByteSize(const std::string& text) {
  bytes_ = text.empty() ? 0 : parse_byte_size(text, "byte size");
}

std::string version() {
  return TRISTREAM_VERSION;
}

}  // namespace tristream
