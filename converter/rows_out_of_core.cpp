// rows_out_of_core.cpp — the tail's steps for keys in a spill file (rows_out_of_core.hpp).
#include "rows_out_of_core.hpp"

#include <algorithm>
#include <future>

#include "sort_rows.hpp"
#include "tristream/error.hpp"

namespace tristream::conv::tail {

std::size_t key_block(std::uint64_t limit) {
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(limit / 8 / 44, std::uint64_t{1} << 14, kBlock));
}

unsigned read_threads(unsigned threads) {
  return std::max(1u, std::min(threads / 4, 4u));
}

std::vector<eid_t> orient_and_count(const KeySource& src, std::uint64_t n, Orienter orient,
                                    unsigned threads, std::size_t block,
                                    std::uint64_t& max_out_degree) {
  BigBuffer<std::uint32_t> fill(n + 1);  // out-degree per row
  fill.resize(n);
  src.for_each_block(block, read_threads(threads), [&](const std::uint64_t* k, std::size_t cnt) {
    // (each key's rank is prefetched kAhead keys before, its row's count half as far)
    constexpr std::size_t kAhead = Orienter::kAhead, kRowAhead = kAhead / 2;
    parallel_for(threads, cnt, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i) {
        if (i + kAhead < hi) orient.prefetch(k[i + kAhead]);
        if (i + kRowAhead < hi) __builtin_prefetch(&fill[orient(k[i + kRowAhead]) >> 32], 1);
        __atomic_fetch_add(&fill[orient(k[i]) >> 32], 1u, __ATOMIC_RELAXED);
      }
    });
  });
  std::vector<eid_t> offsets(n + 1, 0);
  max_out_degree =
      std::max(max_out_degree, row_offsets_from_lengths(fill.data(), n, offsets.data(), threads));
  TS_CHECK(offsets[n] == src.count, "out-degrees do not add up");
  return offsets;
}

std::vector<std::uint64_t> row_ranges(const KeySource& src, const std::vector<eid_t>& offsets,
                                      std::uint64_t n, std::uint64_t limit,
                                      std::uint64_t observer_bytes) {
  const std::uint64_t per_vertex_bytes = 32 * (n + 1) + observer_bytes;
  const std::uint64_t range_room = limit > per_vertex_bytes ? limit - per_vertex_bytes : 0;
  const std::uint64_t range_edges = std::max<std::uint64_t>(range_room / 16, 1 << 16);
  std::vector<std::uint64_t> start{0};
  while (start.back() < n) {
    const std::uint64_t r0 = start.back();
    std::uint64_t r1 = n;
    if (!src.mem) {
      r1 = static_cast<std::uint64_t>(
               std::upper_bound(offsets.begin() + static_cast<std::ptrdiff_t>(r0 + 1),
                                offsets.end(), offsets[r0] + range_edges) -
               offsets.begin()) -
           1;
      if (r1 <= r0) r1 = r0 + 1;
    }
    start.push_back(r1);
  }
  return start;
}

std::unique_ptr<TempFile> bucket_rows(const KeySource& src, const std::vector<eid_t>& offsets,
                                      const std::vector<std::uint64_t>& start, Orienter orient,
                                      const TailContext& ctx) {
  const std::size_t ranges = start.size() - 1;
  auto buckets = std::make_unique<TempFile>(ctx.tmp_dir);
  std::vector<std::uint64_t> cursor(ranges);  // the next key of each range's region
  for (std::size_t r = 0; r < ranges; ++r) cursor[r] = offsets[start[r]];
  // (the range whose rows hold o's row: a binary search whose steps move by a conditional
  // move, not a branch, which the keys' random rows would mispredict half the time)
  auto range_of = [&](std::uint64_t o) {
    const std::uint64_t row = o >> 32;
    const std::uint64_t* base = start.data();
    std::size_t len = ranges;  // (start[0] == 0 <= row < start[ranges])
    while (len > 1) {
      const std::size_t half = len / 2;
      base = base[half] <= row ? base + half : base;
      len -= half;
    }
    return static_cast<std::size_t>(base - start.data());
  };
  const std::size_t pieces = std::max(1u, ctx.threads);
  const std::size_t block = key_block(ctx.limit);
  BigBuffer<std::uint64_t> oriented(block),
      grouped_buf[2] = {BigBuffer<std::uint64_t>(block), BigBuffer<std::uint64_t>(block)};
  BigBuffer<std::uint32_t> range(block);
  std::vector<std::uint64_t> at(pieces * ranges);  // piece p's next place for range r
  std::vector<std::uint64_t> group_buf[2] = {std::vector<std::uint64_t>(ranges + 1),
                                             std::vector<std::uint64_t>(ranges + 1)};
  // A block's groups are written on a thread of their own while the next block is grouped into
  // the other buffer. (Declared after the buffers: on an exception its destructor waits.)
  std::future<void> written;
  std::size_t j = 0;
  const unsigned readers = read_threads(ctx.threads);
  src.for_each_block(block, readers, [&](const std::uint64_t* k, std::size_t cnt) {
    BigBuffer<std::uint64_t>& grouped = grouped_buf[j & 1];
    std::vector<std::uint64_t>& group = group_buf[j & 1];
    ++j;
    std::fill(at.begin(), at.end(), 0);
    parallel_for(ctx.threads, pieces, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      // (each piece counts into an array of its own: the pieces' rows of `at` share cache lines)
      std::vector<std::uint64_t> own(ranges);
      for (std::size_t p = lo; p < hi; ++p) {
        const ChunkRange c = chunk_range(cnt, pieces, p);
        std::fill(own.begin(), own.end(), 0);
        for (std::uint64_t i = c.lo; i < c.hi; ++i) {
          if (i + Orienter::kAhead < c.hi) orient.prefetch(k[i + Orienter::kAhead]);
          oriented[i] = orient(k[i]);
          range[i] = static_cast<std::uint32_t>(range_of(oriented[i]));
          ++own[range[i]];
        }
        std::copy(own.begin(), own.end(), at.begin() + static_cast<std::ptrdiff_t>(p * ranges));
        if (ctx.options.observer)  // its first look at these edges
          ctx.options.observer->mark_edges(oriented.data() + c.lo, c.hi - c.lo);
      }
    });
    bucket_places(at, pieces, ranges, group.data());
    parallel_for(ctx.threads, pieces, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      std::vector<std::uint64_t> place(ranges);  // (likewise)
      for (std::size_t p = lo; p < hi; ++p) {
        const ChunkRange c = chunk_range(cnt, pieces, p);
        std::copy_n(at.begin() + static_cast<std::ptrdiff_t>(p * ranges), ranges, place.begin());
        // (stored with their rows counted from the range's first: the range's row sort takes
        // rows below 2^32 from 0)
        for (std::uint64_t i = c.lo; i < c.hi; ++i)
          grouped[place[range[i]]++] = oriented[i] - (start[range[i]] << 32);
      }
    });
    if (written.valid()) written.get();
    written = std::async(std::launch::async, [&buckets, &cursor, &grouped, &group, ranges] {
      for (std::size_t r = 0; r < ranges; ++r) {
        const std::uint64_t len = group[r + 1] - group[r];
        if (len == 0) continue;
        buckets->write_at(cursor[r] * 8, grouped.data() + group[r], len * 8);
        cursor[r] += len;
      }
    });
  });
  if (written.valid()) written.get();
  stage_done("bucket rows");
  return buckets;
}

void gather_range(const KeySource& src, const TempFile* buckets, eid_t base, eid_t range_m,
                  Orienter orient, std::size_t block, unsigned threads,
                  BigBuffer<std::uint64_t>& buf) {
  if (buf.capacity() < range_m + 1) buf.reserve(range_m + 1);
  buf.resize(range_m);
  if (buckets) {
    TS_CHECK(buckets->read_at(base * 8, buf.data(), range_m * 8, threads) == range_m * 8,
             "bucket file shorter than written");
    return;
  }
  std::uint64_t filled = 0;
  src.for_each_block(block, read_threads(threads), [&](const std::uint64_t* k, std::size_t cnt) {
    for (std::size_t i = 0; i < cnt; ++i) {
      if (i + Orienter::kAhead < cnt) orient.prefetch(k[i + Orienter::kAhead]);
      buf[filled++] = orient(k[i]);
    }
  });
  TS_CHECK(filled == range_m, "range lost edges");
}

bool sort_range_rows(BigBuffer<std::uint64_t>& keys, std::uint64_t rows, std::uint64_t n,
                     const eid_t* offsets, unsigned threads, BigBuffer<std::uint32_t>& cols) {
  const std::uint64_t m = keys.size();
  SpanSortInput in;
  in.max_key = (rows - 1) << 32 | (n - 1);
  if (!rows_sortable(in.max_key, m)) return false;
  // 1. The keys as spans, dropped as scattered.
  in.spans = key_spans(keys.data(), m, threads);
  in.drop_read = true;
  // 2. Sorted into the columns, rows counted.
  BigBuffer<std::uint32_t> fill(rows + 1);
  fill.resize(rows);
  sort_rows(in, cols, fill.data(), threads);
  keys.resize(0);
  // 3. Each row as long as its offsets say.
  for (std::uint64_t r = 0; r < rows; ++r)
    TS_CHECK(fill[r] == offsets[r + 1] - offsets[r], "out-degrees do not add up");
  return true;
}

}  // namespace tristream::conv::tail
