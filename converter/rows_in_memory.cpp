// rows_in_memory.cpp — the tail's steps for unique keys in memory (rows_in_memory.hpp).
#include "rows_in_memory.hpp"

#include <algorithm>
#include <thread>

#include "common/interrupt.hpp"
#include "progress.hpp"
#include "sort_rows.hpp"
#include "tristream/error.hpp"

namespace tristream::conv::tail {

namespace {

// Edges a run handed to the writer holds at least (but the last): a batch of chunks or more, so
// that the writer compresses it where it lies.
constexpr std::uint64_t kRunEdges = std::uint64_t{1} << 26;

// The largest oriented key of a graph of n vertices (row < col < n).
std::uint64_t max_oriented_key(std::uint64_t n) {
  return n >= 2 ? (n - 2) << 32 | (n - 1) : 1;
}

// The row sort's input: the keys, oriented by the sort while it takes its histogram, their pages
// dropped as they are scattered.
SpanSortInput oriented_input(const KeySource& src, std::uint64_t n, const std::uint32_t* rank,
                             unsigned threads) {
  SpanSortInput in;
  in.spans = src.runs.empty() ? key_spans(src.mem->data(), src.count, threads) : src.runs;
  in.max_key = max_oriented_key(n);
  in.orient = rank;
  in.drop_read = true;
  return in;
}

}  // namespace

RowStream::RowStream(std::uint64_t n, eid_t* offsets, const std::uint32_t* fill, bool written)
    : n_(n), offsets_(offsets), fill_(fill), written_(written) {
  if (!written_) offsets_[0] = 0;
}

void RowStream::placed(std::uint64_t row0, std::uint64_t rows, std::uint64_t first_edge) {
  if (row0 >= n_) return;
  // 1. The rows' offsets (each entry written by the one bucket that holds its row).
  const std::uint64_t end = std::min(n_, row0 + rows);
  std::uint64_t most = 0;
  eid_t e = first_edge;
  for (std::uint64_t r = row0; r < end; ++r) {
    e += fill_[r];
    if (!written_) offsets_[r + 1] = e;
    most = std::max<std::uint64_t>(most, fill_[r]);
  }
  // 2. The prefix grown through them and through the rows placed before that waited for them.
  std::lock_guard<std::mutex> lock(mu_);
  max_out_degree_ = std::max(max_out_degree_, most);
  if (row0 != ready_) {
    waiting_.emplace(row0, end);
    return;
  }
  ready_ = end;
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first == ready_;
       it = waiting_.erase(it))
    ready_ = it->second;
  grown_.notify_all();
}

void RowStream::finish(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
  error_ = error;
  grown_.notify_all();
}

std::uint64_t RowStream::wait(std::uint64_t from, std::uint64_t min_edges) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    if (ready_ == n_) return n_;
    if (ready_ > from && offsets_[ready_] - offsets_[from] >= min_edges) return ready_;
    if (ended_) {
      TS_CHECK(false, "the row sort ended with rows " + std::to_string(ready_) + " of " +
                          std::to_string(n_) + " placed");
    }
    grown_.wait(lock);
  }
}

std::uint64_t RowStream::max_out_degree() {
  std::lock_guard<std::mutex> lock(mu_);
  return max_out_degree_;
}

namespace {

// Rows [r0, r1) cut into pieces of about equal edges, at most 8 per thread.
std::vector<std::uint64_t> edge_pieces(const eid_t* offsets, std::uint64_t r0, std::uint64_t r1,
                                       unsigned threads) {
  const std::size_t pieces =
      std::max<std::size_t>(1, std::min<std::uint64_t>(r1 - r0, 8 * threads));
  const eid_t base = offsets[r0], edges = offsets[r1] - base;
  std::vector<std::uint64_t> cut(pieces + 1, r1);
  cut[0] = r0;
  for (std::size_t p = 1; p < pieces; ++p) {
    const eid_t target = base + edges * p / pieces;
    cut[p] = std::max<std::uint64_t>(
        cut[p - 1],
        static_cast<std::uint64_t>(std::lower_bound(offsets + r0, offsets + r1, target) - offsets));
  }
  return cut;
}

void mark_pieces(RowObserver& obs, const eid_t* offsets, const std::vector<std::uint64_t>& cut,
                 const vid_t* cols, unsigned threads) {
  const eid_t base = offsets[cut.front()];
  parallel_for(threads, cut.size() - 1, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t p = lo; p < hi; ++p)
      obs.mark_rows(cut[p], cut[p + 1], cols + (offsets[cut[p]] - base));
  });
}

}  // namespace

void mark_range(RowObserver& obs, const eid_t* offsets, std::uint64_t r0, std::uint64_t r1,
                const vid_t* cols, unsigned threads) {
  mark_pieces(obs, offsets, edge_pieces(offsets, r0, r1, threads), cols, threads);
}

void observe_range(RowObserver& obs, const eid_t* offsets, std::uint64_t r0, std::uint64_t r1,
                   const vid_t* cols, bool mark, unsigned threads) {
  const std::vector<std::uint64_t> cut = edge_pieces(offsets, r0, r1, threads);
  if (mark) mark_pieces(obs, offsets, cut, cols, threads);
  const eid_t base = offsets[r0];
  parallel_for(threads, cut.size() - 1, 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
    for (std::size_t p = lo; p < hi; ++p)
      obs.count_rows(w, cut[p], cut[p + 1], cols + (offsets[cut[p]] - base));
  });
}

// Below 2^16 edges the sort takes every key as one bucket and its rows are counted from it in
// cache; else (too few vertices for a bucket to hold whole rows) a pass over the sorted keys
// counts them.
std::vector<eid_t> sort_rows_in_memory(const KeySource& src, std::uint64_t n,
                                       const std::uint32_t* rank, unsigned threads,
                                       std::uint64_t& max_out_degree) {
  BigBuffer<std::uint64_t>& keys = *src.mem;
  const std::uint64_t m = src.count;
  SpanSortInput in = oriented_input(src, n, rank, threads);
  TS_CHECK(!rows_sortable(in.max_key, m), "rows that stream sorted as keys");
  BigBuffer<std::uint32_t> fill(n + 1);  // out-degree per row
  fill.resize(n);
  const bool small = m < (std::uint64_t{1} << 16);  // sorted as one bucket
  if (small)
    in.on_bucket = [&](const std::uint64_t* k, std::size_t cnt, unsigned) {
      for (std::size_t i = 0; i < cnt; ++i) ++fill[k[i] >> 32];
    };
  BigBuffer<std::uint64_t> sorted(m + 1);
  const SortedRuns runs = sort_unique_spans(in, sorted, threads);
  TS_CHECK(runs.total == m, "duplicate oriented edges");
  join_runs(runs, sorted, keys, threads);  // no repeats: sorted's memory becomes keys'
  sorted.release();
  if (!small)
    for (std::uint64_t i = 0; i < m; ++i) ++fill[keys[i] >> 32];
  std::vector<eid_t> offsets(n + 1, 0);
  max_out_degree =
      std::max(max_out_degree, row_offsets_from_lengths(fill.data(), n, offsets.data(), threads));
  TS_CHECK(offsets[n] == m, "out-degrees do not add up");
  return offsets;
}

bool rows_streamable(std::uint64_t n, std::uint64_t m) {
  return rows_sortable(max_oriented_key(n), m);
}

void stream_rows(const KeySource& src, std::uint64_t n, const std::uint32_t* rank, unsigned threads,
                 BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                 tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                 std::uint64_t& max_out_degree) {
  TS_CHECK(src.mem && rows_streamable(n, src.count), "rows that do not stream");
  // 1. The sort's input, the rows' lengths and offsets.
  SpanSortInput in = oriented_input(src, n, rank, threads);
  BigBuffer<std::uint32_t> fill(n + 1);  // out-degree per row (fresh pages: zero)
  fill.resize(n);
  offsets.assign(n + 1, 0);
  RowStream rows(n, offsets.data(), fill.data());
  // 2. The sort on a thread of its own, telling the stream of every bucket it places.
  std::thread sorter([&] {
    std::exception_ptr error;
    try {
      sort_rows(in, narrow, fill.data(), threads,
                [&rows](std::uint64_t row0, std::uint64_t k, std::uint64_t first) {
                  rows.placed(row0, k, first);
                });
    } catch (...) {
      error = std::current_exception();
    }
    rows.finish(error);
  });
  const JoinOnExit join_sorter{sorter};
  // 3. The rows into the writer as the sort places them; the census beside the last run.
  write_placed_rows(rows, sorter, n, narrow, offsets, writer, observer, wedges, threads,
                    "orient and sort rows, writing beside");
  TS_CHECK(offsets[n] == src.count, "out-degrees do not add up");
  max_out_degree = std::max(max_out_degree, rows.max_out_degree());
  src.mem->release();
}

void write_placed_rows(RowStream& rows, std::thread& placer, std::uint64_t n,
                       const BigBuffer<std::uint32_t>& cols, const std::vector<eid_t>& offsets,
                       tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                       unsigned threads, const char* placed_stage, bool marked) {
  // 1. The rows into the writer as they come, in runs of kRunEdges; once the last row is placed
  //    (the offsets whole) the census on threads of its own beside the writer's last run.
  std::thread census;
  std::exception_ptr census_error;
  const JoinOnExit join_census{census};
  bool last_placed = false;  // (the stage clock's split of this step)
  for (std::uint64_t r = 0; r < n;) {
    throw_if_interrupted();
    const std::uint64_t r1 = rows.wait(r, kRunEdges);
    if (r1 == n && !last_placed) {
      last_placed = true;
      stage_done(placed_stage);
    }
    if (observer && r1 == n && !census.joinable())
      census = std::thread([&] {
        try {
          if (!marked) observer->start(n, offsets.data(), threads, wedges);
          observe_range(*observer, offsets.data(), 0, n, cols.data(), !marked, threads);
        } catch (...) {
          census_error = std::current_exception();
        }
      });
    writer.append_rows(cols.data() + offsets[r], offsets.data() + r, r1 - r);
    r = r1;
  }
  // 2. The file's sections while the census goes on; the placer's end (its checks) and the
  //    census's.
  writer.write_sections();
  stage_done("write rows and sections");
  placer.join();
  (void)rows.wait(n, 0);
  if (census.joinable()) census.join();
  if (census_error) std::rethrow_exception(census_error);
  if (observer) stage_done("census beside the last rows");
}

}  // namespace tristream::conv::tail
