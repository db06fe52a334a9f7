// tristream/row_tally.hpp — a tally of the edges of G+ by classes of their two ends: what a
// converter's RowObserver (convert.hpp) may ask an EdgeSorter (edge_sorter.hpp) to count where
// the sorted rows are (on a device), instead of being shown every row on the host. The planner's
// stored census is such a tally (docs/convert.md, "On the GPU").
//
// Every vertex v of G+ (the n rows; ids are ranks) has
//   bucket(v): the f with buckets[f] <= v < buckets[f + 1] (F = buckets.size() - 1 buckets,
//              F < 2^16);
//   group(v):  likewise over `groups` (G = groups.size() - 1 groups, 1 <= G <= 16);
//   mask(v):   the OR of 1 << group(u) over the edges u -> v (0 when no edge enters v);
//   bits(v):   fold[mask(v)] (fold has 2^G entries of 32 bits; fold[0] = 0).
// The sums, over every edge u -> v of G+ and every vertex v:
//   pairs[bucket(u) * F + bucket(v)]            += 1    (F x F)
//   hashed[(u % H) * H + v % H]                 += 1    (H x H, H = hash_mod, 1 to 4096)
//   both[b]        for every bit b of bits(u) & bits(v)          += 1
//   marked[b]      for every vertex v and bit b of bits(v)        += 1
//   marked_out[b]  likewise                                       += out-degree of v
// Each is a sum of integers, the same whoever adds them in whatever order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tristream {

struct RowTallySpec {
  std::vector<std::uint64_t> buckets;  // F + 1 ascending bounds, from 0 to n
  std::vector<std::uint64_t> groups;   // G + 1 ascending bounds, from 0 to n
  std::uint32_t hash_mod = 1;          // H
  std::vector<std::uint32_t> fold;     // 2^G entries
};

struct RowTallySums {
  std::vector<std::uint64_t> pairs;   // F x F
  std::vector<std::uint64_t> hashed;  // H x H
  std::array<std::uint64_t, 32> both{}, marked{}, marked_out{};
};

// What breaks the rules above for a graph of n vertices, or nullptr when nothing does.
inline const char* row_tally_spec_problem(const RowTallySpec& s, std::uint64_t n) {
  if (s.buckets.size() < 2 || s.buckets.size() - 1 >= (std::size_t{1} << 16))
    return "the tally's buckets are not 1 to 2^16 - 1";
  if (s.groups.size() < 2 || s.groups.size() - 1 > 16) return "the tally's groups are not 1 to 16";
  if (s.hash_mod == 0 || s.hash_mod > 4096) return "the tally's hash modulus is not 1 to 4096";
  if (s.fold.size() != std::size_t{1} << (s.groups.size() - 1))
    return "the tally's fold table has not 2^groups entries";
  if (s.fold[0] != 0) return "the tally's fold table gives bits to vertices no edge enters";
  for (const std::vector<std::uint64_t>* b : {&s.buckets, &s.groups}) {
    if (b->front() != 0 || b->back() != n) return "the tally's bounds do not run from 0 to n";
    for (std::size_t i = 1; i < b->size(); ++i)
      if ((*b)[i] < (*b)[i - 1]) return "the tally's bounds are not ascending";
  }
  return nullptr;
}

// The sums the plain way, from the rows of G+ (n rows, offsets[r]..offsets[r + 1] into cols): the
// reference an EdgeSorter's tally is tested against. Throws tristream::Error for a spec that
// breaks the rules above.
RowTallySums tally_rows_reference(const RowTallySpec& spec, std::uint64_t n,
                                  const std::uint64_t* offsets, const std::uint32_t* cols);

}  // namespace tristream
