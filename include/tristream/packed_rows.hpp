// tristream/packed_rows.hpp — a block's row offsets stored *packed*: only the rows that have
// columns. Header-only: the core's block builders write it, the CPU backend and the tests expand
// it on the host, and the CUDA backend (which sits below the core) uploads it and expands it on
// the device (cuda/expand_rows.cu).
//
// Why: a range block G_ab holds every row of part a, but a low-rank row part has millions of
// short rows whose few columns spread over all p blocks, so most of each block's rows are empty
// and dense offsets (8 bytes per row, per block) outweigh the columns many times over (Kronecker
// 24 at a quarter of its in-core footprint: 5.4 GiB of row part 0's offsets uploaded for 0.4 GiB
// of its columns). Packed, such a block costs 12 bytes per row with columns. The kernels still
// read dense offsets: the device slot keeps the dense array, which the backend fills from the
// packed form after the upload.
//
// Contract: ids[0..count) are strictly increasing local row ids below the block's rows; row
// ids[r] has the columns [offsets[r], offsets[r + 1]), at least one; offsets[0] == 0 and
// offsets[count] is the block's edge count. Every other row is empty.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "tristream/types.hpp"

namespace tristream {

struct PackedRows {
  std::uint64_t count = 0;         // rows with columns (R)
  const vid_t* ids = nullptr;      // R row ids, increasing
  const eid_t* offsets = nullptr;  // R + 1 entries
  bool valid() const { return offsets != nullptr; }
  eid_t edges() const { return offsets ? offsets[count] : 0; }
  // The number of columns of row u (0 when u has none): a binary search.
  eid_t degree(std::uint64_t u) const {
    const vid_t* it = std::lower_bound(ids, ids + count, u);
    if (it == ids + count || *it != u) return 0;
    const std::uint64_t r = static_cast<std::uint64_t>(it - ids);
    return offsets[r + 1] - offsets[r];
  }
};

// Bytes of the packed form of R rows: the ids (padded to 8 bytes), then the R + 1 offsets.
inline std::uint64_t packed_ids_bytes(std::uint64_t rows_with_cols) {
  return (rows_with_cols * sizeof(vid_t) + 7) / 8 * 8;
}
inline std::uint64_t packed_bytes(std::uint64_t rows_with_cols) {
  return packed_ids_bytes(rows_with_cols) + (rows_with_cols + 1) * sizeof(eid_t);
}
// The packed form laid out at p (ids, then offsets, packed_bytes(count) bytes): the layout of the
// block cache's arrays, of a packed block in the host slot and of the CUDA backend's scratch.
template <class Byte>
inline auto packed_ids_at(Byte* p) {
  return reinterpret_cast<std::conditional_t<std::is_const_v<Byte>, const vid_t*, vid_t*>>(p);
}
template <class Byte>
inline auto packed_offsets_at(Byte* p, std::uint64_t count) {
  return reinterpret_cast<std::conditional_t<std::is_const_v<Byte>, const eid_t*, eid_t*>>(
      p + packed_ids_bytes(count));
}
inline PackedRows packed_image(const void* p, std::uint64_t count) {
  const auto* b = static_cast<const unsigned char*>(p);
  return PackedRows{count, packed_ids_at(b), packed_offsets_at(b, count)};
}
// Bytes of dense offsets over `rows` rows.
inline std::uint64_t dense_offsets_bytes(std::uint64_t rows) {
  return (rows + 1) * sizeof(eid_t);
}
// The builders pack a block when the packed form is smaller than its dense offsets.
inline bool packs(std::uint64_t rows, std::uint64_t rows_with_cols) {
  return packed_bytes(rows_with_cols) < dense_offsets_bytes(rows);
}

// Writes the dense offsets of a packed block: out[u] = the columns of the rows below u, for
// u in [0, rows]. The packed arrays must not overlap out.
inline void expand_packed(const PackedRows& p, std::uint64_t rows, eid_t* out) {
  std::uint64_t u = 0;
  for (std::uint64_t r = 0; r < p.count; ++r) {
    const std::uint64_t id = p.ids[r];
    for (; u <= id; ++u) out[u] = p.offsets[r];
  }
  for (; u <= rows; ++u) out[u] = p.offsets[p.count];
}

}  // namespace tristream
