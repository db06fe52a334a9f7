// partition.cpp — scheme names and the partition of the vertices into parts (tristream/plan.hpp):
// which part a vertex falls in, its local id there, and row boundaries balanced by edges or by
// wedges. Depends on nothing else of the planner.
#include <algorithm>
#include <cmath>

#include "common/thread_pool.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

// Rows from which the wedge-balanced bounds are summed on several threads.
constexpr std::uint64_t kParallelRows = std::uint64_t{1} << 22;

// balanced_bounds by wedges for many rows, on all cores: the weights d (d - 1) / 2 + d are
// integers, and while their sum stays below 2^53 every partial sum of the one-thread loop is
// exact in a double, so summing pieces as integers and scanning only the piece where each
// boundary falls gives the loop's bounds bit for bit. False (b untouched) when a sum could
// reach 2^53 or a row is too long for its weight to be exact: the caller runs the loop.
bool parallel_wedge_bounds(std::uint64_t n, const eid_t* off, std::uint32_t p,
                           std::vector<std::uint64_t>& b) {
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
  auto weight = [&](std::uint64_t r) -> std::uint64_t {
    const std::uint64_t d = off[r + 1] - off[r];
    return d * (d - 1) / 2 + d;
  };
  // 1. The pieces' sums (every row at most 2^25 long: its weight exact, far below 2^53).
  ThreadPool pool(resolve_threads(0));
  // (pieces of at most 64 Ki rows: a boundary's scan reads one)
  const std::uint64_t P = std::max<std::uint64_t>(std::uint64_t{pool.threads()} * 8, n >> 16);
  std::vector<std::uint64_t> sum(P, 0);
  std::vector<char> long_row(P, 0);
  pool.for_each_item(P, [&](std::size_t k, unsigned) {
    const std::uint64_t r0 = n * k / P, r1 = n * (k + 1) / P;
    std::uint64_t s = 0;
    bool too_long = false;
    for (std::uint64_t r = r0; r < r1; ++r) {
      too_long |= off[r + 1] - off[r] > (eid_t{1} << 25);
      s += weight(r);
    }
    sum[k] = s;
    long_row[k] = too_long;
  });
  std::uint64_t total = 0;
  for (std::uint64_t k = 0; k < P; ++k) {
    if (long_row[k] || sum[k] >= kExact - total) return false;
    total += sum[k];
  }
  if (total == 0) return false;  // (the loop splits the rows evenly then)
  // 2. Each boundary: the piece where the running sum reaches total * a / p, then its rows.
  const double t = static_cast<double>(total);
  std::uint64_t k = 0, before = 0;  // before: the sum of the pieces ahead of piece k
  for (std::uint32_t a = 1; a < p; ++a) {
    const double want = t * a / p;
    while (k < P && static_cast<double>(before + sum[k]) < want) before += sum[k++];
    if (k == P) {
      b[a] = n;
      continue;
    }
    std::uint64_t acc = before;
    std::uint64_t r = n * k / P;
    for (; static_cast<double>(acc + weight(r)) < want; ++r) acc += weight(r);
    b[a] = r + 1;
  }
  return true;
}

}  // namespace

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
  if (by_wedges && n >= kParallelRows && parallel_wedge_bounds(n, off, p, b)) return b;
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
