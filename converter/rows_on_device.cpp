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

// Touches every page of `buf` (its pages made while the device works, not while it is filled).
void touch_pages(BigBuffer<std::uint32_t>& buf, unsigned threads) {
  constexpr std::size_t kPage = 4096 / sizeof(std::uint32_t);
  std::uint32_t* const p = buf.data();
  parallel_for(std::max(threads, 1u), (buf.size() + kPage - 1) / kPage, 1 << 10,
               [p](std::size_t lo, std::size_t hi, unsigned) {
                 for (std::size_t i = lo; i < hi; ++i) p[i * kPage] = 0;
               });
}

}  // namespace

void rank_rows_on_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n, std::uint64_t space,
                         unsigned threads, std::vector<orig_id_t>& perm,
                         BigBuffer<std::uint32_t>& fill, BigBuffer<std::uint32_t>& narrow) {
  // 1. Ranks and rows there; the ranks' ids (4 bytes each there) and the rows' lengths here, the
  //    columns' pages made meanwhile.
  BigBuffer<std::uint32_t> ids(n + 1);
  ids.resize(n);
  fill.reserve(n + 1);
  fill.resize(n);
  narrow.reserve(m + 1);
  narrow.resize(m);
  std::thread pages([&narrow, threads] { touch_pages(narrow, threads); });
  const JoinOnExit join_pages{pages};
  sorter.rank_and_sort_rows(space, n, ids.data(), fill.data());
  pages.join();
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
  TS_CHECK(total == m,
           "the device's rows hold " + std::to_string(total) + " edges, not " + std::to_string(m));
}

void copy_rows_from_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                           const BigBuffer<std::uint32_t>& fill, unsigned threads,
                           BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                           tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                           std::uint64_t& max_out_degree) {
  TS_CHECK(narrow.size() == m, "the columns' buffer is not ready");
  // 1. The offsets from the rows' lengths; the observer started with them, so that it marks
  //    each run of rows as it comes, or, where its figures are a row tally the sorter can take,
  //    the tally started there (beside the copies; then this side marks and counts nothing).
  offsets.assign(n + 1, 0);
  (void)row_offsets_from_lengths(fill.data(), n, offsets.data(), threads);
  if (observer) observer->start(n, offsets.data(), threads, wedges);
  RowTallySpec spec;
  const bool tallied = observer && observer->tally_spec(&spec) && sorter.start_tally(spec);
  RowObserver* const shown = tallied ? nullptr : observer;
  RowTallySums sums;
  // 2. The columns copied in runs of whole rows on a thread of its own, each run marked and then
  //    told to the stream (the offsets written already); the tally's sums before the sorter's
  //    memory is freed.
  RowStream rows(n, offsets.data(), fill.data(), /*written=*/true);
  std::thread copier([&] {
    std::exception_ptr error;
    try {
      for (std::uint64_t r = 0; r < n;) {
        const std::uint64_t e = offsets[r], want = r == 0 ? kFirstCopyEdges : kCopyEdges;
        const std::uint64_t r1 = std::max<std::uint64_t>(
            r + 1,
            static_cast<std::uint64_t>(
                std::lower_bound(offsets.begin() + static_cast<std::ptrdiff_t>(r),
                                 offsets.begin() + static_cast<std::ptrdiff_t>(n), e + want) -
                offsets.begin()));
        const std::uint64_t end = std::min(r1, n);
        sorter.columns(e, offsets[end] - e, narrow.data() + e);
        if (shown) mark_range(*shown, offsets.data(), r, end, narrow.data() + e, threads);
        rows.placed(r, end - r, e);
        r = end;
      }
      if (tallied) sums = sorter.finish_tally();
    } catch (...) {
      error = std::current_exception();
    }
    rows.finish(error);
    sorter.release();  // (its memory freed while the writer goes on)
  });
  const JoinOnExit join_copier{copier};
  // 3. The rows into the writer as they come; the census's counts beside the last run (or the
  //    tally's sums to the observer).
  write_placed_rows(rows, copier, n, narrow, offsets, writer, shown, wedges, threads,
                    "copy rows from the device, writing beside", /*marked=*/true);
  if (tallied) observer->take_tally(std::move(sums));
  max_out_degree = std::max(max_out_degree, rows.max_out_degree());
}

}  // namespace tristream::conv::tail
