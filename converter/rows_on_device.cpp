// rows_on_device.cpp — the tail's steps for unique keys held by an EdgeSorter (rows_on_device.hpp).
#include "rows_on_device.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include "progress.hpp"
#include "rows_in_memory.hpp"
#include "tristream/error.hpp"

namespace tristream::conv::tail {
namespace {

// Edges a copy from the sorter holds at least (but the last): a few large copies, each on many
// threads (EdgeSorter::columns), so that the columns are here before the writer's threads take
// every core; the first one smaller, so that the writer starts early.
constexpr std::uint64_t kFirstCopyEdges = std::uint64_t{1} << 26;
constexpr std::uint64_t kCopyEdges = std::uint64_t{1} << 28;

}  // namespace

void rank_rows_on_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                         std::uint64_t space, unsigned threads, std::vector<orig_id_t>& perm,
                         BigBuffer<std::uint32_t>& fill) {
  // 1. Ranks and rows there; the ranks' ids (4 bytes each there) and the rows' lengths here.
  BigBuffer<std::uint32_t> ids(n + 1);
  ids.resize(n);
  fill.reserve(n + 1);
  fill.resize(n);
  sorter.rank_and_sort_rows(space, n, ids.data(), fill.data());
  // 2. The permutation, and a check of the rows' lengths.
  perm.resize(n);
  std::vector<std::uint64_t> part(std::max(threads, 1u), 0);
  parallel_for(std::max(threads, 1u), n, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned w) {
    std::uint64_t sum = 0;
    for (std::size_t r = lo; r < hi; ++r) {
      perm[r] = ids[r];
      sum += fill[r];
    }
    part[w] += sum;
  });
  std::uint64_t total = 0;
  for (std::uint64_t x : part) total += x;
  TS_CHECK(total == m, "the device's rows hold " + std::to_string(total) + " edges, not " +
                           std::to_string(m));
}

void copy_rows_from_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                           const BigBuffer<std::uint32_t>& fill, unsigned threads,
                           BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                           tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                           std::uint64_t& max_out_degree) {
  // 1. The columns copied in runs of whole rows on a thread of its own, each run told to the
  //    stream once it is here.
  narrow.reserve(m + 1);
  narrow.resize(m);
  offsets.assign(n + 1, 0);
  RowStream rows(n, offsets.data(), fill.data());
  std::thread copier([&] {
    std::exception_ptr error;
    try {
      for (std::uint64_t r = 0, e = 0; r < n;) {
        std::uint64_t r1 = r, e1 = e;
        const std::uint64_t want = r == 0 ? kFirstCopyEdges : kCopyEdges;
        while (r1 < n && (r1 == r || e1 - e < want)) e1 += fill[r1++];
        sorter.columns(e, e1 - e, narrow.data() + e);
        rows.placed(r, r1 - r, e);
        r = r1;
        e = e1;
      }
    } catch (...) {
      error = std::current_exception();
    }
    rows.finish(error);
  });
  const JoinOnExit join_copier{copier};
  // 2. The rows into the writer as they come; the census beside the last run.
  write_placed_rows(rows, copier, n, narrow, offsets, writer, observer, wedges, threads,
                    "copy rows from the device, writing beside");
  max_out_degree = std::max(max_out_degree, rows.max_out_degree());
}

}  // namespace tristream::conv::tail
