// rows_in_memory.hpp — converter internals: the tail's steps for unique keys in memory
// (write_graph.hpp): the rows of G+ sorted from the keys (sort_rows.hpp), and, where the row sort
// places whole rows bucket by bucket, the rows streamed into the writer while later buckets are
// still sorted (RowStream), the census taken once the last row is placed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "tristream/convert.hpp"
#include "tristream/format.hpp"
#include "tristream/wedges.hpp"
#include "util.hpp"
#include "write_graph.hpp"

namespace tristream::conv::tail {

// The rows of G+ that the row sort has placed, told by its workers in any order (RowsPlaced),
// and the longest prefix of rows 0, 1, ... that is complete: their columns in place and their
// offsets written. Thread-safe; the consumer waits on the prefix.
class RowStream {
 public:
  // offsets: room for n + 1 entries (offsets[0] set to 0 here), or (`written`) the whole prefix
  // sum of fill already, left as it is; fill: the rows' lengths, as the sort counts them (read
  // for the rows told placed).
  RowStream(std::uint64_t n, eid_t* offsets, const std::uint32_t* fill, bool written = false);

  // Rows [row0, row0 + rows) placed from first_edge on: their offsets written (unless written
  // before; rows at or past n ignored), then the prefix grown past them where it reaches them.
  void placed(std::uint64_t row0, std::uint64_t rows, std::uint64_t first_edge);
  // The sort ended: every row placed (error null), or it threw `error`.
  void finish(std::exception_ptr error);

  // Blocks until the prefix holds at least min_edges edges past row `from`'s first, or every row,
  // or the sort ended; returns where the prefix ends (> from unless from == n). Rethrows the
  // sort's exception; Error(Internal) if it ended without placing every row.
  std::uint64_t wait(std::uint64_t from, std::uint64_t min_edges);

  std::uint64_t max_out_degree();

 private:
  const std::uint64_t n_;
  eid_t* const offsets_;
  const std::uint32_t* const fill_;
  const bool written_;
  std::mutex mu_;
  std::condition_variable grown_;
  std::uint64_t ready_ = 0;                         // the prefix [0, ready_)
  std::map<std::uint64_t, std::uint64_t> waiting_;  // placed past the prefix: row0 -> end
  std::uint64_t max_out_degree_ = 0;
  bool ended_ = false;
  std::exception_ptr error_;
};

// The observer's marks of rows [r0, r1) (columns cols from offsets[r0]) on all threads, in pieces
// of about equal edges.
void mark_range(RowObserver& obs, const eid_t* offsets, std::uint64_t r0, std::uint64_t r1,
                const vid_t* cols, unsigned threads);

// Step 5b of either path: the observer's looks at rows [r0, r1) (columns cols from offsets[r0]):
// the marks when no earlier pass showed it the edges, then the counts, on all threads in pieces
// of about equal edges (count_rows' thread index below `threads`).
void observe_range(RowObserver& obs, const eid_t* offsets, std::uint64_t r0, std::uint64_t r1,
                   const vid_t* cols, bool mark, unsigned threads);

// Step 2 in memory where the row sort cannot stream (rows_streamable false: fewer than 2^16
// edges, or too few vertices for a bucket of the row sort to hold whole rows): the keys in
// *src.mem oriented and sorted as 8-byte keys (row << 32 | col) in place; returns the row offsets.
std::vector<eid_t> sort_rows_in_memory(const KeySource& src, std::uint64_t n,
                                       const std::uint32_t* rank, unsigned threads,
                                       std::uint64_t& max_out_degree);

// Whether the m unique keys of a graph of n vertices sort bucket by bucket into whole rows (the
// row sorts of sort_rows.hpp), so that stream_rows takes them.
bool rows_streamable(std::uint64_t n, std::uint64_t m);

// Steps 2 to 5 in memory, for keys that rows_streamable takes: the row sort on a thread of its
// own fills `narrow` with the columns and `offsets` (n + 1 entries) while this thread hands the
// rows to the writer as they are placed, in runs of about 2^26 edges (the writer compresses
// each run where it lies); once every row is placed the observer (if any) is started and takes
// the rows on all threads beside the writer's last run and its sections (tcsr::Writer::
// write_sections: the caller's finish() adds the census and the header). *src.mem is released.
void stream_rows(const KeySource& src, std::uint64_t n, const std::uint32_t* rank, unsigned threads,
                 BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                 tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                 std::uint64_t& max_out_degree);

// Steps 3 and 4 of stream_rows, for rows that another thread (`placer`, joined here) places and
// tells `rows` of: the rows into the writer as they come, in runs of about 2^26 edges (their
// columns in `cols`, read once placed; `offsets` as `rows` writes them, or all written before);
// once the last row is placed (the stage `placed_stage` ends there) the observer (if any) on all
// threads beside the writer's last run and its sections (tcsr::Writer::write_sections): started
// and shown the marks then, or (`marked`) its counts alone, the placer having started it and
// shown it every edge. Rethrows the placer's and the observer's exceptions.
void write_placed_rows(RowStream& rows, std::thread& placer, std::uint64_t n,
                       const BigBuffer<std::uint32_t>& cols, const std::vector<eid_t>& offsets,
                       tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                       unsigned threads, const char* placed_stage, bool marked = false);

}  // namespace tristream::conv::tail
