// stream/block_builder.hpp — the blocks G_ab of a row part, built from its rows.
//
// A block G_ab holds the rows of part a with their columns that fall in part b, as local ids
// (range: column - bounds[b]; hash: column / p), in CSR form: dense (rows + 1 offsets) or packed
// (packed_rows.hpp) when that is smaller. Pair's suffix block (column part code p + b) holds the
// columns in parts b..p-1, ids column - bounds[b]: the tail of each sorted row. Two ways to build:
//  - build(): in parallel on the reader's pool from pinned chunks, in two passes (count, then
//    fill every segment's own ranges); no intermediate buffers;
//  - walk() + filter_row(): the sequential windowed walk when the part's chunks do not fit the
//    chunk cache (always dense).
// Results equal a naive filter of the rows exactly (the tests check that).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "stream/chunk_reader.hpp"
#include "tristream/error.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::stream {

// Where one block goes: its offsets region `off` (dense: rows + 1 offsets; packed: the
// packed_rows.hpp image, ids then offsets) and its columns (capacity cap).
struct BuildDest {
  eid_t* off = nullptr;
  vid_t* cols = nullptr;
  eid_t cap = 0;
  eid_t edges = 0;
  std::uint64_t nonempty = 0;  // rows with columns
  bool packed = false;
  vid_t* ids = nullptr;   // packed: set from off after `sized`
  eid_t* poff = nullptr;  // packed: R + 1 offsets
};

// Writes a block's CSR into a slot: rows are appended in order; columns go through push(). The
// sequential walk writes dense offsets; build_into may leave the block packed.
struct BlockWriter {
  eid_t* offsets = nullptr;
  vid_t* cols = nullptr;
  std::uint64_t capacity = 0;  // columns
  std::uint64_t rows = 0;
  eid_t edges = 0;
  bool packed = false;
  std::uint64_t packed_rows = 0;
  void start(unsigned char* slot, const SlotBlock& b, std::uint64_t cap) {
    offsets = reinterpret_cast<eid_t*>(slot + b.offsets_at);
    cols = reinterpret_cast<vid_t*>(slot + b.cols_at);
    capacity = cap;
    rows = 0;
    edges = 0;
    packed = false;
    packed_rows = 0;
    offsets[0] = 0;
  }
  void mark(SlotBlock& b) const {
    b.packed = packed;
    b.packed_rows = packed_rows;
  }
  void push(vid_t c) {
    TS_CHECK(edges < capacity, "a block holds more columns than planned");
    cols[edges++] = c;
  }
  void end_row() { offsets[++rows] = edges; }
};

class BlockBuilder {
 public:
  // partition and reader outlive the builder; threads: the reader's pool's.
  BlockBuilder(const Partition& partition, ChunkReader& reader);

  ChunkReader& reader() { return reader_; }
  // The chunks of row part `part` (sorted).
  void rows_needed(std::uint32_t part, std::vector<std::uint64_t>& needed) const;
  // Local rows [seg[x], seg[x + 1]) of the row part form segment x: balanced by edges for range
  // parts (contiguous rows), by rows for hash parts (rows part, part + p, ...); a few segments
  // per thread so that the pool balances them. R: the part's rows.
  std::vector<std::uint64_t> segments(std::uint32_t part, std::uint64_t R) const;

  // Builds the blocks G_{part, col_parts[d]} (d < q, distinct parts; pair: suffix codes p + b
  // allowed) into dests[d] on the pool.
  // The chunks of the part must be pinned. Between the passes each block is packed when that is
  // smaller, and `sized` is called with its exact columns, to allocate (or point) dests[d].off
  // (dense: rows + 1 offsets; packed: packed_bytes(nonempty) bytes) and .cols. Throws
  // Error(Internal) when a block exceeds its capacity.
  void build(std::uint32_t part, const std::uint32_t* col_parts, std::size_t q, BuildDest* dests,
             const std::function<void(std::size_t, eid_t)>& sized);
  // Builds up to two blocks of a slot from the rows of `part` (columns filtered to
  // col_parts[o]) in parallel. Returns false when the part's chunks do not fit the chunk cache.
  bool build_into(std::uint32_t part, int nout, const std::uint32_t* col_parts, BlockWriter** outs,
                  std::int64_t unit);

  // The sequential walk: fn(cols, deg) for every row of `part` in order.
  void walk(std::uint32_t part, const std::function<void(const vid_t*, std::uint64_t)>& fn,
            std::int64_t unit);
  // Appends the columns of row `cols[0..deg)` that fall in part b, as local ids.
  template <class Out>
  void filter_row(const vid_t* cols, std::uint64_t deg, std::uint32_t b, Out& out) const {
    if (P_.scheme == Scheme::Hash) {
      for (std::uint64_t x = 0; x < deg; ++x)
        if (cols[x] % P_.p == b) out.push(static_cast<vid_t>(cols[x] / P_.p));
    } else {
      const vid_t lo = static_cast<vid_t>(P_.col_lo(b));
      const std::uint64_t hi = P_.col_hi(b);
      const vid_t* s = std::lower_bound(cols, cols + deg, lo);
      for (; s < cols + deg && *s < hi; ++s) out.push(*s - lo);
    }
  }

 private:
  const Partition& P_;
  ChunkReader& reader_;
  const GraphSource& g_;
  unsigned threads_;
  // range cuts: the part of every 2^shift-th vertex (at most 2^16 + 1 entries)
  unsigned coarse_shift_ = 0;
  std::vector<std::uint32_t> coarse_part_;
};

}  // namespace tristream::stream
