// row_tally.cpp — the row tally's reference (tristream/row_tally.hpp): every sum added the plain
// way, one edge and one vertex at a time, for the tests of an EdgeSorter's tally.
#include "tristream/row_tally.hpp"

#include <algorithm>

#include "tristream/error.hpp"

namespace tristream {
namespace {

std::uint32_t bound_index(const std::vector<std::uint64_t>& bounds, std::uint64_t x) {
  return static_cast<std::uint32_t>(std::upper_bound(bounds.begin(), bounds.end(), x) -
                                    bounds.begin() - 1);
}

}  // namespace

RowTallySums tally_rows_reference(const RowTallySpec& spec, std::uint64_t n,
                                  const std::uint64_t* offsets, const std::uint32_t* cols) {
  if (const char* problem = row_tally_spec_problem(spec, n))
    throw Error(ErrorKind::Internal, problem);
  const std::size_t F = spec.buckets.size() - 1;
  const std::uint64_t H = spec.hash_mod;
  // 1. The masks.
  std::vector<std::uint32_t> mask(n, 0);
  for (std::uint64_t u = 0; u < n; ++u)
    for (std::uint64_t e = offsets[u]; e < offsets[u + 1]; ++e) {
      TS_CHECK(cols[e] < n, "a column past the vertices");
      mask[cols[e]] |= 1u << bound_index(spec.groups, u);
    }
  // 2. The edges' sums.
  RowTallySums s;
  s.pairs.assign(F * F, 0);
  s.hashed.assign(H * H, 0);
  for (std::uint64_t u = 0; u < n; ++u)
    for (std::uint64_t e = offsets[u]; e < offsets[u + 1]; ++e) {
      const std::uint64_t v = cols[e];
      ++s.pairs[bound_index(spec.buckets, u) * F + bound_index(spec.buckets, v)];
      ++s.hashed[(u % H) * H + v % H];
      const std::uint32_t y = spec.fold[mask[u]] & spec.fold[mask[v]];
      for (unsigned b = 0; b < 32; ++b) s.both[b] += y >> b & 1;
    }
  // 3. The vertices' sums.
  for (std::uint64_t v = 0; v < n; ++v)
    for (unsigned b = 0; b < 32; ++b)
      if (spec.fold[mask[v]] >> b & 1) {
        ++s.marked[b];
        s.marked_out[b] += offsets[v + 1] - offsets[v];
      }
  return s;
}

}  // namespace tristream
