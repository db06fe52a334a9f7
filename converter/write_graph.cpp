// write_graph.cpp — rank, orient, fill the rows of G+ range by range, write (write_graph.hpp);
// the steps for keys in a spill file are rows_out_of_core.cpp's.
//
// Per-vertex memory: rank 4, out-degree 4 then offsets 8, the writer's offsets 8 and the
// permutation 8 bytes; out of core these (32 bytes per vertex) come out of the limit before the
// row ranges are sized.
#include "write_graph.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "common/interrupt.hpp"
#include "rows_in_memory.hpp"
#include "rows_on_device.hpp"
#include "rows_out_of_core.hpp"
#include "sort_rows.hpp"
#include "tristream/format.hpp"

namespace tristream::conv {
namespace {

using tail::bucket_rows;
using tail::copy_rows_from_device;
using tail::gather_range;
using tail::key_block;
using tail::observe_range;
using tail::orient_and_count;
using tail::Orienter;
using tail::rank_rows_on_device;
using tail::row_ranges;
using tail::rows_streamable;
using tail::sort_range_rows;
using tail::sort_rows_in_memory;
using tail::stream_rows;

// Rank order: vertex v gets rank[v]; perm[r] is the original id of rank r.
struct Ranking {
  BigBuffer<std::uint32_t> rank;
  std::vector<orig_id_t> perm;
  std::uint64_t max_degree = 0;
  WedgeSum wedges;  // of the undirected graph: d (d - 1) / 2 summed over the degrees
};

// Step 1a: the largest degree and the wedges, from the degrees (the vertices left unranked: on a
// device they are ranked with the rows).
Ranking degree_figures(const BigBuffer<std::uint32_t>& degree, unsigned threads) {
  Ranking out;
  const std::size_t space = degree.size();
  const unsigned t = std::max(threads, 1u);
  std::vector<std::uint64_t> part_max(t, 0);
  std::vector<WedgeSum> part_wedges(t);
  parallel_for(t, space, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned w) {
    std::uint64_t x = 0;
    WedgeSum ws;
    for (std::size_t v = lo; v < hi; ++v) {
      x = std::max<std::uint64_t>(x, degree[v]);
      ws.add_degree(degree[v]);
    }
    part_max[w] = std::max(part_max[w], x);
    part_wedges[w].add(ws);
  });
  for (auto x : part_max) out.max_degree = std::max(out.max_degree, x);
  for (const WedgeSum& ws : part_wedges) out.wedges.add(ws);
  return out;
}

// Step 1: rank by (degree, id) over the id space (degree.size() ids, n of them vertices: the ids
// of degree 0 are skipped). A counting sort by degree, stable in the id, on all threads: slice s
// of the ids places its vertices of degree d after every vertex of lower degree and those of
// degree d in earlier slices. Degrees from kTailDegree on share the last bucket (so that the
// slices' counts stay a few MiB whatever the largest degree); the few vertices there are then
// ordered by (degree, id) among themselves.
Ranking rank_vertices(std::uint64_t n, const BigBuffer<std::uint32_t>& degree, IdMap* idmap,
                      unsigned threads) {
  constexpr std::uint64_t kTailDegree = std::uint64_t{1} << 16;
  const std::size_t space = degree.size();
  const unsigned t = std::max(threads, 1u);
  // 1. The largest degree and the wedges.
  Ranking out = degree_figures(degree, threads);
  out.rank.reserve(space + 1);
  out.perm.resize(n);
  const std::uint64_t* ids = idmap ? idmap->ids().data() : nullptr;
  auto place = [&](std::size_t r, std::size_t v) {
    out.rank[v] = static_cast<std::uint32_t>(r);
    out.perm[r] = ids ? ids[v] : v;
  };
  // 2. The counting sort over the buckets 0..D-1 (the last one every degree from D - 1 on).
  const std::uint64_t D = std::min(out.max_degree + 1, kTailDegree);
  auto bucket = [D](std::uint32_t d) { return std::min<std::uint64_t>(d, D - 1); };
  const std::size_t slice = std::max<std::size_t>((space + t - 1) / t, 1);
  const std::size_t slices = space ? (space + slice - 1) / slice : 0;
  std::vector<std::uint64_t> at(slices * D, 0);  // slice s, bucket d: at[s * D + d]
  parallel_for(t, slices, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t s = lo; s < hi; ++s)
      for (std::size_t v = s * slice; v < std::min(space, (s + 1) * slice); ++v)
        ++at[s * D + bucket(degree[v])];
  });
  bucket_places(at, slices, static_cast<std::size_t>(D));
  const std::uint64_t zeros = slices ? at[D > 1 ? 1 : 0] : 0;  // the ids of degree 0
  TS_CHECK(D > 1 ? zeros == space - n : n == 0, "vertex count disagrees with the degrees");
  // 3. The places, but the last bucket's vertices (degree D - 1 or more: the last ranks), which
  //    each slice collects, then all ordered by (degree, id).
  const bool tail_sorted = out.max_degree + 1 > D;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> part(slices);
  parallel_for(t, slices, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t s = lo; s < hi; ++s)
      for (std::size_t v = s * slice; v < std::min(space, (s + 1) * slice); ++v) {
        if (!degree[v]) continue;
        if (tail_sorted && degree[v] >= D - 1)
          part[s].emplace_back(degree[v], v);
        else
          place(at[s * D + bucket(degree[v])]++ - zeros, v);
      }
  });
  if (tail_sorted) {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> tail;  // (degree, id)
    for (const auto& p : part) tail.insert(tail.end(), p.begin(), p.end());
    std::sort(tail.begin(), tail.end());
    const std::size_t r0 = n - tail.size();
    for (std::size_t i = 0; i < tail.size(); ++i) place(r0 + i, tail[i].second);
  }
  return out;
}

}  // namespace

TailResult write_graph(const KeySource& src, std::uint64_t n, BigBuffer<std::uint32_t>& degree,
                       IdMap* idmap, const TailContext& ctx) {
  TailResult res;
  res.n = n;
  Progress& progress = *ctx.progress;
  const unsigned threads = ctx.threads;
  // 1. Rank (on a device: there, with the rows, step 2); the degrees and the id map are no longer
  //    needed.
  progress.stage("ranking vertices");
  Ranking ranking =
      src.device ? degree_figures(degree, threads) : rank_vertices(n, degree, idmap, threads);
  res.max_degree = ranking.max_degree;
  const std::uint64_t space = degree.size();
  // (ranks over an id space larger than the vertices: 4 bytes more per absent id)
  const std::uint64_t absent_ids_bytes = degree.size() > n ? 4 * (degree.size() - n) : 0;
  if (idmap) *idmap = IdMap();
  degree.release();
  stage_done("rank");
  const Orienter orient{ranking.rank.data()};

  // 2. Orient and count the rows of G+ (in memory: sort them too, unless the row sort places
  //    them bucket by bucket, or the keys are on a device: then that runs beside the writer,
  //    step 3).
  std::vector<eid_t> offsets;
  BigBuffer<std::uint32_t> narrow;  // streamed (stream_rows, copy_rows_from_device): the columns
  BigBuffer<std::uint32_t> fill;    // on a device: the rows' lengths
  const bool streamed = src.device || (src.mem && rows_streamable(n, src.count));
  if (src.device) {
    progress.stage("ranking and sorting rows on the device");
    rank_rows_on_device(*src.device, src.count, n, space, threads, ranking.perm, fill, narrow);
    stage_done("rank and sort rows on the device");
  } else if (streamed) {
    // (below)
  } else if (src.mem) {
    progress.stage("sorting rows");
    offsets = sort_rows_in_memory(src, n, ranking.rank.data(), threads, res.max_out_degree);
    stage_done("orient and sort rows");
  } else {
    progress.stage("orienting edges");
    offsets = orient_and_count(src, n, orient, threads, key_block(ctx.limit), res.max_out_degree);
    stage_done("orient");
  }

  // 3. The writer; streamed, the rows sorted into it and the census taken (stream_rows), else
  //    the row ranges that fit the limit.
  tcsr::WriteOptions wo = ctx.options.write;
  if (wo.threads == 0) wo.threads = threads;
  tcsr::Writer writer(ctx.output, n, wo);
  writer.set_permutation(std::move(ranking.perm));
  writer.set_max_degree(res.max_degree);
  if (ctx.names) writer.set_names(std::move(*ctx.names));
  RowObserver* const observer = ctx.options.observer;
  BigBuffer<std::uint64_t> buf, tmp;
  BigBuffer<std::uint32_t> range_cols;
  if (src.device) {
    progress.stage("copying rows from the device and writing");
    copy_rows_from_device(*src.device, src.count, n, fill, threads, narrow, offsets, writer,
                          observer, ranking.wedges, res.max_out_degree);
  } else if (streamed) {
    progress.stage("sorting and writing rows");
    stream_rows(src, n, ranking.rank.data(), threads, narrow, offsets, writer, observer,
                ranking.wedges, res.max_out_degree);
  } else {
    // The census takes a quarter of the threads (at least one) beside the writer's.
    const unsigned census_threads = std::max(1u, threads / 4);
    if (observer) observer->start(n, offsets.data(), census_threads, ranking.wedges);
    const std::vector<std::uint64_t> start =
        row_ranges(src, offsets, n, ctx.limit,
                   absent_ids_bytes + (observer ? observer->memory_bytes(n, census_threads) : 0));
    const std::size_t ranges = start.size() - 1;

    // 4. Several ranges from a spill file: bucket the oriented keys by range first (then the
    //    source's file is read no more); the files close behind the work once read.
    CloseBehind close_behind;
    std::unique_ptr<TempFile> buckets;
    if (!src.mem && ranges > 1) {
      buckets = bucket_rows(src, offsets, start, orient, ctx);
      if (ctx.source_read) ctx.source_read();
    }

    // 5. Range by range: gather the keys, sort them (rows in order, each row sorted), take the
    //    columns and stream the rows into the writer.
    for (std::size_t ri = 0; ri < ranges; ++ri) {
      const std::uint64_t r0 = start[ri], r1 = start[ri + 1];
      const eid_t base = offsets[r0], range_m = offsets[r1] - base;
      // The columns: in memory packed in place into the sorted keys; out of core written by the
      // range's row sort, or packed in place likewise.
      const vid_t* cols = nullptr;
      if (src.mem) {
        cols = narrow_in_place(*src.mem, threads);
      } else {
        gather_range(src, buckets.get(), base, range_m, orient, key_block(ctx.limit), threads, buf);
        if (ri + 1 == ranges) {  // (the last range: the keys' files are read no more)
          if (buckets)
            close_behind.add(std::move(buckets));
          else if (ctx.source_read)
            ctx.source_read();
        }
        progress.stage("sorting rows");
        // (oriented keys (row - r0) << 32 | col with col < n)
        if (sort_range_rows(buf, r1 - r0, n, offsets.data() + r0, threads, range_cols)) {
          cols = range_cols.data();
        } else {
          if (tmp.capacity() < range_m + 1) tmp.reserve(range_m + 1);
          parallel_sort_unique_u64(buf, tmp, threads, n >= 2 ? (r1 - r0 - 1) << 32 | (n - 1) : 0);
          TS_CHECK(buf.size() == range_m, "duplicate oriented edges");
          cols = narrow_in_place(buf, threads);
        }
      }
      stage_done(src.mem ? "columns" : "sort rows");
      // The census of the range on threads of its own while the writer compresses the same rows,
      // so that it fills the moments the writer leaves a core idle.
      std::exception_ptr census_error;
      std::thread census;
      if (observer)
        census = std::thread([&] {
          try {
            observe_range(*observer, offsets.data(), r0, r1, cols, ranges == 1, census_threads);
          } catch (...) {
            census_error = std::current_exception();
          }
        });
      const JoinOnExit join{census};
      progress.stage("compressing and writing");
      // In runs of rows of at least 2^28 edges (the writer compresses a run of a batch or more
      // where it lies, its chunks flowing through the workers without a barrier inside the run;
      // it stops at an interrupt between chunks and removes its temporary).
      for (std::uint64_t r = r0; r < r1;) {
        throw_if_interrupted();
        const auto first = offsets.begin() + static_cast<std::ptrdiff_t>(r + 1);
        const auto last = offsets.begin() + static_cast<std::ptrdiff_t>(r1 + 1);
        const std::uint64_t end = static_cast<std::uint64_t>(
            std::lower_bound(first, last, offsets[r] + (eid_t{1} << 28)) - offsets.begin());
        writer.append_rows(cols + (offsets[r] - base), offsets.data() + r, std::min(end, r1) - r);
        r = std::min(end, r1);
      }
      if (census.joinable()) census.join();
      if (census_error) std::rethrow_exception(census_error);
      // (the range's columns leave memory before the next range's keys come in: a range falling
      // back to the 8-byte sort must find its 16 bytes per edge free)
      if (range_cols.capacity())
        drop_pages(range_cols.data(), range_cols.capacity() * sizeof(vid_t));
      stage_done(observer ? "census, compress and write rows" : "compress and write rows");
    }
  }
  throw_if_interrupted();
  if (observer) {
    std::vector<unsigned char> payload = observer->finish();
    if (!payload.empty()) writer.set_census(std::move(payload));
    stage_done("census");
  }
  // The rows' buffers are returned to the OS on a thread of their own while the file is finished
  // (its last sections written and synced to disk).
  std::thread free_rows([&narrow, &range_cols, &buf, &tmp, mem = src.mem] {
    narrow.release();
    range_cols.release();
    buf.release();
    tmp.release();
    if (mem) mem->release();
  });
  const JoinOnExit join_free{free_rows};
  writer.finish();
  const tcsr::Writer::Busy busy = writer.busy();
  char line[160];
  std::snprintf(line, sizeof line,
                "the writer's threads: compressing %.3f s, writing %.3f s, waiting for a buffer "
                "%.3f s",
                busy.compress_s, busy.write_s, busy.wait_s);
  stage_detail(line);
  res.raw_adjacency_bytes = offsets[n] * sizeof(vid_t);
  res.compressed_adjacency_bytes = writer.adjacency_bytes();
  stage_done("finish file");
  return res;
}

}  // namespace tristream::conv
