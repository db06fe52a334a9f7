// partition.cpp — scheme names and the partition of the vertices into parts (tristream/plan.hpp):
// which part a vertex falls in, its local id there, and row boundaries balanced by edges or by
// wedges. Depends on nothing else of the planner.
#include <algorithm>
#include <cmath>

#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {

std::string scheme_name(Scheme s) {
  switch (s) {
    case Scheme::Auto:
      return "auto";
    case Scheme::Range:
      return "range";
    case Scheme::Hash:
      return "hash";
    case Scheme::Vertex:
      return "vertex";
    case Scheme::Pair:
      return "pair";
  }
  return "?";
}

Scheme parse_scheme(const std::string& name) {
  if (name == "auto") return Scheme::Auto;
  if (name == "range") return Scheme::Range;
  if (name == "hash") return Scheme::Hash;
  if (name == "vertex") return Scheme::Vertex;
  if (name == "pair") return Scheme::Pair;
  throw Error(ErrorKind::Usage,
              "--scheme: unknown scheme '" + name + "' (use auto, range, hash, vertex or pair)");
}

std::uint32_t Partition::part_of(std::uint64_t x) const {
  if (p <= 1) return 0;
  if (scheme == Scheme::Hash) return static_cast<std::uint32_t>(x % p);
  auto it = std::upper_bound(bounds.begin(), bounds.end(), x);
  return static_cast<std::uint32_t>(it - bounds.begin() - 1);
}

std::uint64_t Partition::local_of(std::uint64_t x) const {
  if (p <= 1) return x;
  if (scheme == Scheme::Hash) return x / p;
  return x - bounds[part_of(x)];
}

std::uint64_t Partition::global_of(std::uint32_t a, std::uint64_t l) const {
  if (p <= 1) return l;
  if (scheme == Scheme::Hash) return l * p + a;
  return bounds[a] + l;
}

std::uint64_t Partition::rows(std::uint32_t a) const {
  if (p <= 1) return n;
  if (scheme == Scheme::Hash) return a < n ? (n - a + p - 1) / p : 0;
  return bounds[a + 1] - bounds[a];
}

std::vector<std::uint64_t> balanced_bounds(std::uint64_t n, const eid_t* off, std::uint32_t p,
                                           bool by_wedges) {
  std::vector<std::uint64_t> b(p + 1, 0);
  b[p] = n;
  if (p <= 1) return b;
  auto weight = [&](std::uint64_t r) -> double {
    const double d = static_cast<double>(off[r + 1] - off[r]);
    return by_wedges ? d * (d - 1) / 2 + d : d;
  };
  double total = 0;
  if (by_wedges) {
    for (std::uint64_t r = 0; r < n; ++r) total += weight(r);
  } else {
    total = static_cast<double>(n ? off[n] - off[0] : 0);
  }
  if (total <= 0) {
    for (std::uint32_t a = 1; a < p; ++a) b[a] = n * a / p;
    return b;
  }
  if (!by_wedges) {
    for (std::uint32_t a = 1; a < p; ++a) {
      const eid_t target = off[0] + static_cast<eid_t>(std::ceil(total * a / p));
      // first row r whose prefix (edges of rows < r) reaches the target
      b[a] = static_cast<std::uint64_t>(std::lower_bound(off, off + n + 1, target) - off);
      b[a] = std::min<std::uint64_t>(std::max(b[a], b[a - 1]), n);
    }
    return b;
  }
  double acc = 0;
  std::uint32_t a = 1;
  for (std::uint64_t r = 0; r < n && a < p; ++r) {
    acc += weight(r);
    while (a < p && acc >= total * a / p) b[a++] = r + 1;
  }
  for (; a < p; ++a) b[a] = n;
  return b;
}

}  // namespace tristream
