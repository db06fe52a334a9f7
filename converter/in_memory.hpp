// in_memory.hpp — converter internals: the in-memory path from parsed blocks to the unique edges
// and the degrees. Packed blocks whose ids index a per-id array cheaply (every id below 2^32, at
// most one id per 8 edges) are partitioned straight from the blocks in their own ids, each bucket
// freed of its repeats (by hashing; the keys' order then does not hold) and its first ids'
// degrees counted while it is in cache, the second ids' by a partitioned pass afterwards
// (count_ids.hpp; ids of degree 0 are no vertices). Else ids are
// compacted through a bitmap (dense ids) or a sorted id table (sparse ids), every edge becomes
// one 64-bit key (a << 32 | b, a < b), the keys are sorted in parallel (radix-partitioned) with
// repeats removed, and the degrees counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "idmap.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "write_graph.hpp"

namespace tristream::conv {

// The result; `source` points into this object, which therefore must not move once filled.
struct MemoryEdges {
  bool own_ids = false;  // the keys hold the input's ids (no id map; degree has max_id + 1 entries)
  std::uint64_t n = 0;   // vertices
  IdMap idmap;           // without own_ids
  BigBuffer<std::uint64_t> keys;
  BigBuffer<std::uint32_t> degree;
  KeySource source;
};

// Preconditions: the blocks hold held_records edges (canonical, a < b) with ids <= max_id; with
// dense_ids the bitmap of max_id + 1 bits is affordable. Frees the blocks as their keys are
// made. check_vertices(n) runs once n is known (it throws for too many vertices).
void build_in_memory(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t held_records,
                     std::uint64_t max_id, bool dense_ids, unsigned threads,
                     const std::function<void(std::uint64_t)>& check_vertices, Progress& progress,
                     MemoryEdges& out);

}  // namespace tristream::conv
