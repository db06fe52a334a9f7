// in_memory.cpp — parsed blocks to unique compact edge keys and degrees, in memory (in_memory.hpp).
#include "in_memory.hpp"

#include <algorithm>

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

}  // namespace

void build_in_memory(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t held_records,
                     std::uint64_t max_id, bool dense_ids, unsigned threads,
                     const std::function<void(std::uint64_t)>& check_vertices, Progress& progress,
                     MemoryEdges& out) {
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
  out.source.mem = &out.keys;
  out.source.count = m;
}

}  // namespace tristream::conv
