// in_memory.cpp — parsed blocks to unique compact edge keys and degrees, in memory (in_memory.hpp).
#include "in_memory.hpp"

#include <algorithm>
#include <atomic>

#include "count_ids.hpp"
#include "sort.hpp"

namespace tristream::conv {
namespace {

using Blocks = std::vector<std::unique_ptr<Block>>;

// Step 1, dense ids: a bitmap of the ids present; a bitmap per worker, or-ed together, when
// those take at most a byte per edge, else one bitmap set atomically.
void map_dense(const Blocks& blocks, std::uint64_t held_records, std::uint64_t max_id,
               unsigned threads, IdMap& idmap) {
  const std::size_t W = static_cast<std::size_t>(max_id / 64 + 1);
  BigBuffer<std::uint64_t> bits(W);
  bits.resize(W);
  const unsigned t = static_cast<unsigned>(std::min<std::size_t>(threads, blocks.size()));
  if (t <= 1) {
    for (const auto& blk : blocks)
      for_each_edge(*blk, [&](std::uint64_t a, std::uint64_t b) {
        bits[a >> 6] |= std::uint64_t{1} << (a & 63);
        bits[b >> 6] |= std::uint64_t{1} << (b & 63);
      });
  } else if (static_cast<std::uint64_t>(W) * 8 * t <= held_records) {
    std::vector<BigBuffer<std::uint64_t>> local(t);
    for (auto& l : local) {
      l.reserve(W);
      l.resize(W);
    }
    parallel_for(t, blocks.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
      std::uint64_t* own = local[w].data();
      for (std::size_t i = lo; i < hi; ++i)
        for_each_edge(*blocks[i], [&](std::uint64_t a, std::uint64_t b) {
          own[a >> 6] |= std::uint64_t{1} << (a & 63);
          own[b >> 6] |= std::uint64_t{1} << (b & 63);
        });
    });
    parallel_for(t, W, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t x = lo; x < hi; ++x)
        for (const auto& l : local) bits[x] |= l[x];
    });
  } else {
    parallel_for(threads, blocks.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i)
        for_each_edge(*blocks[i], [&](std::uint64_t a, std::uint64_t b) {
          __atomic_fetch_or(&bits[a >> 6], std::uint64_t{1} << (a & 63), __ATOMIC_RELAXED);
          __atomic_fetch_or(&bits[b >> 6], std::uint64_t{1} << (b & 63), __ATOMIC_RELAXED);
        });
    });
  }
  idmap.from_bitmap(std::move(bits));
  // A direct table for the compaction, when it takes at most half a byte per edge.
  if ((max_id + 1) * 4 <= held_records / 2) idmap.make_table(threads);
}

// Step 1, sparse ids: all endpoints sorted with repeats removed.
void map_sparse(const Blocks& blocks, std::uint64_t held_records, unsigned threads, IdMap& idmap) {
  BigBuffer<std::uint64_t> ends(2 * held_records + 1), tmp(2 * held_records + 1);
  std::vector<std::size_t> at(blocks.size() + 1, 0);
  for (std::size_t i = 0; i < blocks.size(); ++i) at[i + 1] = at[i] + 2 * blocks[i]->size();
  ends.resize(at.back());
  parallel_for(threads, blocks.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t i = lo; i < hi; ++i) {
      std::uint64_t* w = ends.data() + at[i];
      for_each_edge(*blocks[i], [&](std::uint64_t a, std::uint64_t b) {
        *w++ = a;
        *w++ = b;
      });
    }
  });
  parallel_sort_unique_u64(ends, tmp, threads);
  tmp.release();
  ends.trim();
  idmap.from_sorted(std::move(ends));
}

// Step 2: compact keys, block by block (each block freed once converted).
void compact_keys(Blocks& blocks, const IdMap& idmap, unsigned threads,
                  BigBuffer<std::uint64_t>& keys) {
  std::vector<std::size_t> at(blocks.size() + 1, 0);
  for (std::size_t i = 0; i < blocks.size(); ++i) at[i + 1] = at[i] + blocks[i]->size();
  keys.resize(at.back());
  parallel_for(threads, blocks.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t i = lo; i < hi; ++i) {
      std::uint64_t* w = keys.data() + at[i];
      if (const std::uint32_t* table = idmap.table()) {
        for_each_edge(*blocks[i], [&](std::uint64_t a, std::uint64_t b) {
          *w++ = (std::uint64_t{table[a]} << 32) | table[b];
        });
      } else {
        for_each_edge(*blocks[i], [&](std::uint64_t a, std::uint64_t b) {
          *w++ = (idmap(a) << 32) | idmap(b);
        });
      }
      blocks[i].reset();
    }
  });
  blocks.clear();
}

// Whether the blocks go the direct way: packed keys, and a per-id array (degree and rank, 8
// bytes an id) takes at most a byte per edge.
bool direct(const Blocks& blocks, std::uint64_t held_records, std::uint64_t max_id) {
  for (const auto& blk : blocks)
    if (blk->wide) return false;
  return held_records > 0 && max_id < (std::uint64_t{1} << 32) && (max_id + 1) * 8 <= held_records;
}

// The direct way: the blocks' keys (a << 32 | b in the input's ids) sorted straight into
// out.keys, each block freed once scattered. When the sort's digit lies in the first id, a
// bucket's first ids are counted while it is in cache (no other bucket has them: no atomics)
// and the second ids, spread over the whole array, by a partitioned pass after the sort
// (count_low_ids: no random writes). Else each bucket's degrees are counted while it is in
// cache, into an array per worker when those take at most a byte per edge, else atomically.
void build_direct(Blocks& blocks, std::uint64_t held_records, std::uint64_t max_id,
                  unsigned threads, Progress& progress, MemoryEdges& out) {
  progress.stage("sorting edges");
  const std::size_t space = static_cast<std::size_t>(max_id + 1);
  const unsigned t = std::max(threads, 1u);
  out.degree.reserve(space + 1);
  out.degree.resize(space);
  std::uint32_t* const shared = out.degree.data();
  SpanSortInput in;
  for (const auto& blk : blocks) in.spans.push_back({blk->keys.data(), blk->keys.size()});
  in.max_key = max_id >= 1 ? (max_id - 1) << 32 | max_id : 0;  // a < b <= max_id
  in.release = [&](std::size_t i) { blocks[i].reset(); };
  // The buckets are deduplicated by hashing (the order inside them does not matter here), so the
  // ids come in any order.
  in.unordered = true;
  const bool own_first = held_records < (std::uint64_t{1} << 16) || sort_shift(in.max_key) >= 32;
  const bool local =
      !own_first && t > 1 && static_cast<std::uint64_t>(space) * 4 * t <= held_records;
  std::vector<BigBuffer<std::uint32_t>> counts(local ? t : 0);
  for (auto& c : counts) {
    c.reserve(space + 1);
    c.resize(space);
  }
  if (own_first) {
    in.on_bucket = [&](const std::uint64_t* k, std::size_t cnt, unsigned) {
      for (std::size_t i = 0; i < cnt; ++i) ++shared[k[i] >> 32];
    };
  } else {
    in.on_bucket = [&](const std::uint64_t* k, std::size_t cnt, unsigned w) {
      std::uint32_t* const c = local ? counts[w].data() : shared;
      const bool atomic = t > 1 && !local;
      // The ids are scattered over the array: the counters of keys ahead fetched early.
      constexpr std::size_t kAhead = 16;
      for (std::size_t i = 0; i < cnt; ++i) {
        if (i + kAhead < cnt) __builtin_prefetch(c + (k[i + kAhead] & 0xffffffffu), 1);
        if (atomic) {
          __atomic_fetch_add(&shared[k[i] & 0xffffffffu], 1u, __ATOMIC_RELAXED);
          __atomic_fetch_add(&shared[k[i] >> 32], 1u, __ATOMIC_RELAXED);
        } else {
          ++c[k[i] & 0xffffffffu];
          ++c[k[i] >> 32];
        }
      }
    };
  }
  out.keys.reserve(held_records + 1);
  const SortedRuns runs = sort_unique_spans(in, out.keys, t);
  blocks.clear();
  // The keys stay where the sort left them: its runs are the source's spans.
  for (std::size_t b = 0; b < runs.start.size(); ++b)
    if (runs.count[b]) out.source.runs.push_back({out.keys.data() + runs.start[b], runs.count[b]});
  if (own_first) count_low_ids(out.source.runs, shared, space, t);
  stage_done("sort unique keys");
  // The workers' counts summed; the vertices are the ids of degree above 0.
  std::vector<std::uint64_t> vertices(t, 0);
  parallel_for(t, space, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned w) {
    std::uint64_t nz = 0;
    for (std::size_t v = lo; v < hi; ++v) {
      std::uint32_t sum = shared[v];
      for (const auto& c : counts) sum += c[v];
      shared[v] = sum;
      nz += sum != 0;
    }
    vertices[w] += nz;
  });
  counts.clear();
  for (std::uint64_t x : vertices) out.n += x;
  out.own_ids = true;
  out.source.mem = &out.keys;
  out.source.count = runs.total;
  stage_done("degrees");
}

}  // namespace

void build_in_memory(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t held_records,
                     std::uint64_t max_id, bool dense_ids, unsigned threads,
                     const std::function<void(std::uint64_t)>& check_vertices, Progress& progress,
                     MemoryEdges& out) {
  if (direct(blocks, held_records, max_id)) {
    build_direct(blocks, held_records, max_id, threads, progress, out);
    check_vertices(out.n);
    return;
  }
  // 1. The id map.
  progress.stage("compacting ids");
  if (dense_ids)
    map_dense(blocks, held_records, max_id, threads, out.idmap);
  else
    map_sparse(blocks, held_records, threads, out.idmap);
  const std::uint64_t n = out.idmap.n();
  check_vertices(n);
  stage_done("id map");
  // 2. Compact keys.
  out.keys.reserve(held_records + 1);
  BigBuffer<std::uint64_t> tmp(held_records + 1);
  compact_keys(blocks, out.idmap, threads, out.keys);
  out.idmap.drop_table();
  stage_done("compact keys");
  // 3. Sort, repeats removed.
  progress.stage("sorting edges");
  // (compact keys a << 32 | b with a < b < n)
  const std::uint64_t max_key = n >= 2 ? (n - 2) << 32 | (n - 1) : 0;
  const std::size_t m = parallel_sort_unique_u64(out.keys, tmp, threads, max_key);
  tmp.release();
  out.keys.trim();
  stage_done("sort unique keys");
  // 4. Degrees.
  out.degree.reserve(n + 1);
  out.degree.resize(n);
  const BigBuffer<std::uint64_t>& keys = out.keys;
  parallel_count(threads, m, out.degree.data(), n, m,
                 [&](std::size_t lo, std::size_t hi, auto&& inc) {
                   for (std::size_t i = lo; i < hi; ++i) {
                     inc(keys[i] >> 32);
                     inc(keys[i] & 0xffffffffu);
                   }
                 });
  stage_done("degrees");
  out.n = n;
  out.source.mem = &out.keys;
  out.source.count = m;
}

}  // namespace tristream::conv
