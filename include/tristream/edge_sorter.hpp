// tristream/edge_sorter.hpp — the converter's seam to an accelerator that removes the repeated
// edges and sorts the rows of G+ for it (docs/convert.md, "On the GPU"). cuda/edge_sorter.hpp
// makes one on a CUDA device; tests make one on the host.
//
// Contract, in the order the converter calls it:
//   0. ready(): whether it has started (its context and buffers made; it may have failed), so
//      that append would not wait; the converter keeps the blocks parsed before on the host and
//      appends them once it is ready.
//   1. append(keys) any number of times while the input is parsed, from several threads at once:
//      packed keys a << 32 | b with a < b < 2^32 in the input's ids; the sorter has taken them
//      when it returns (the caller may free them). It returns false (and takes nothing) when they
//      do not fit its memory or after close(); the converter then closes it, takes every key
//      back (take_back) and goes on without it, as it does when the input turns out to need more
//      than packed keys (ids of 2^32 or more, --names) or ids too sparse for per-id arrays.
//   2. close(): no append succeeds after it; it returns once the appends in flight have ended,
//      and size() is final. Then fits_ids(space): whether per-id arrays of `space` ids fit
//      beside the keys.
//   3. unique_and_degrees(space, degree): repeats removed; degree[v], v < space, the number of
//      unique keys with endpoint v. Returns the unique keys' count m.
//   4. rank_and_sort_rows(space, n, perm, row_length): the vertices (the n ids of degree above
//      0) ranked by (degree, id) ascending, perm[r] the id of rank r; every unique key {a, b}
//      becomes the edge min(rank a, rank b) -> max(...) of G+; the edges sorted by (row,
//      column); row_length[r] for r < n.
//   5. columns(first, count, out): the columns of sorted edges [first, first + count), any number
//      of calls, from any one thread at a time.
//   5b. start_tally(spec) (optional, once, after step 4, before release): starts the row tally
//      of the sorted rows (row_tally.hpp) beside the columns' copies; false when it cannot
//      (the default: no tally; the converter's observer then sees the rows on the host).
//      finish_tally() waits for the sums (after a start_tally that returned true).
//   6. release(): after the last columns(), its memory (the device's, its pinned buffers) freed
//      while the converter goes on writing; nothing but the destructor after it. Never throws.
// Errors throw tristream::Error. The result is the same set of keys in the same order as the
// converter's own sorts give, so the file is byte-identical either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tristream/row_tally.hpp"

namespace tristream {

class EdgeSorter {
 public:
  virtual ~EdgeSorter() = default;
  // What it runs on, for the summary ("CUDA device 0, NVIDIA H200").
  virtual std::string name() const = 0;
  virtual bool ready() const = 0;
  virtual bool append(const std::uint64_t* keys, std::size_t count) = 0;
  virtual void close() = 0;
  virtual std::uint64_t size() const = 0;  // keys appended
  // Keys [first, first + count) of those appended (in no particular order) to out.
  virtual void take_back(std::uint64_t first, std::size_t count, std::uint64_t* out) = 0;
  virtual bool fits_ids(std::uint64_t space) const = 0;
  virtual std::uint64_t unique_and_degrees(std::uint64_t space, std::uint32_t* degree) = 0;
  virtual void rank_and_sort_rows(std::uint64_t space, std::uint64_t n, std::uint32_t* perm,
                                  std::uint32_t* row_length) = 0;
  virtual void columns(std::uint64_t first, std::uint64_t count, std::uint32_t* out) = 0;
  virtual bool start_tally(const RowTallySpec& spec) {
    (void)spec;
    return false;
  }
  virtual RowTallySums finish_tally() { return {}; }
  virtual void release() noexcept = 0;
};

}  // namespace tristream
