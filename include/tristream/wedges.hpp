// tristream/wedges.hpp — an exact count of wedges (paths of length two): the sum over vertices of
// d (d - 1) / 2 in 128 bits, so that every way of taking it (from a degree array, streamed from a
// file, stored in the file at conversion) gives the same number and the same double.
#pragma once

#include <cmath>
#include <cstdint>

namespace tristream {

struct WedgeSum {
  std::uint64_t lo = 0, hi = 0;  // the sum is hi * 2^64 + lo

  // Adds d (d - 1) / 2; exact for d <= 2^32 (the term then fits 63 bits).
  void add_degree(std::uint64_t d) {
    add(d < 2 ? 0 : (d & 1 ? d * ((d - 1) / 2) : (d / 2) * (d - 1)));
  }
  void add(std::uint64_t x) {
    lo += x;
    hi += lo < x;
  }
  void add(const WedgeSum& o) {
    add(o.lo);
    hi += o.hi;
  }
  double value() const { return std::ldexp(static_cast<double>(hi), 64) + static_cast<double>(lo); }
  bool operator==(const WedgeSum& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const WedgeSum& o) const { return !(*this == o); }
};

}  // namespace tristream
