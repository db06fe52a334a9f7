// rows_out_of_core.hpp — converter internals: the tail's steps for keys in a spill file
// (write_graph.hpp): the out-degrees of G+ from a pass over the keys, the row ranges that fit the
// limit, the keys bucketed by range into a bucket file, and each range gathered and sorted into
// its columns. write_graph.cpp runs them in order; the in-memory path needs only row_ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "util.hpp"
#include "write_graph.hpp"

namespace tristream::conv::tail {

constexpr std::size_t kBlock = std::size_t{1} << 22;  // keys per block read from a spill file

// Keys per block read from a spill file within `limit`: a block costs 44 bytes per key while
// bucketing (two read buffers, the oriented keys and two buffers of grouped keys 8 each, the
// range 4), an eighth of the limit at most. The blocks' size never changes the output (each
// range is sorted).
std::size_t key_block(std::uint64_t limit);

// Threads that read a block from a spill file while the others take the block before (reads
// from the page cache scale with threads; one copies a few GB/s).
unsigned read_threads(unsigned threads);

// An edge key (a << 32 | b) oriented: (row << 32 | col) with row = the lower rank.
struct Orienter {
  // Keys are oriented this far ahead of their use (prefetch): the second ids come in no order.
  static constexpr std::size_t kAhead = 32;
  const std::uint32_t* rank;
  std::uint64_t operator()(std::uint64_t k) const {
    const std::uint64_t ra = rank[k >> 32], rb = rank[k & 0xffffffffu];
    const std::uint64_t flip = (ra ^ rb) & (std::uint64_t{0} - static_cast<std::uint64_t>(ra > rb));
    return ((ra ^ flip) << 32) | (rb ^ flip);  // (no branch: either order is as likely)
  }
  // Starts loading the rank of key k's second id (the first ids come in order).
  void prefetch(std::uint64_t k) const { __builtin_prefetch(rank + (k & 0xffffffffu)); }
};

// Step 2 from a spill file: the out-degrees of G+ as row offsets.
std::vector<eid_t> orient_and_count(const KeySource& src, std::uint64_t n, Orienter orient,
                                    unsigned threads, std::size_t block,
                                    std::uint64_t& max_out_degree);

// Step 3: the row ranges [start[i], start[i + 1]), each at most range_edges edges (or one row);
// a single range in memory. Out of core the per-vertex arrays (and the observer's memory) come out
// of the limit first and the ranges' keys with their sort buffer (16 bytes per edge) get the rest.
std::vector<std::uint64_t> row_ranges(const KeySource& src, const std::vector<eid_t>& offsets,
                                      std::uint64_t n, std::uint64_t limit,
                                      std::uint64_t observer_bytes);

// Step 4 (from a spill file with several ranges): one pass orients every key into the region of
// a bucket file that its range owns (edges [offsets[r0], offsets[r1]) of G+). Per block of the
// source, on all threads: the keys are oriented and grouped by range (a count, then a scatter
// per piece), and each range's group is appended to its region. The order inside a region does
// not matter: gather_range's caller sorts it. The observer marks every edge here.
std::unique_ptr<TempFile> bucket_rows(const KeySource& src, const std::vector<eid_t>& offsets,
                                      const std::vector<std::uint64_t>& start, Orienter orient,
                                      const TailContext& ctx);

// Step 5 for one range: gather its oriented keys into buf (from the bucket file, where their rows
// count from the range's first, or by a pass over the source when it is the only range).
void gather_range(const KeySource& src, const TempFile* buckets, eid_t base, eid_t range_m,
                  Orienter orient, std::size_t block, unsigned threads,
                  BigBuffer<std::uint64_t>& buf);

// Step 5 out of core: a range's oriented keys (rows counted from the range's first, `rows` of
// them; columns below n; in any order) sorted by the row sorts (sort_rows.hpp) straight into
// their 4-byte columns in `cols` (from the range's first edge on), the keys' pages returned as
// they are scattered; each row's count checked against the range's offsets. False (nothing
// done) where the row sorts do not apply: fewer than 2^16 keys, or rows too few for a bucket to
// hold whole rows (the caller then sorts 8-byte keys).
bool sort_range_rows(BigBuffer<std::uint64_t>& keys, std::uint64_t rows, std::uint64_t n,
                     const eid_t* offsets, unsigned threads, BigBuffer<std::uint32_t>& cols);

}  // namespace tristream::conv::tail
