// stream/row_claims.hpp — the rows of the in-core unit shared out among several GPUs that each
// stream the whole in-core image in row pieces and count the rows they claim here
// (InCoreUnitBuilder::build_from_image; count_with_workers decides: claim_rows_in_core).
//
// One GPU in core counts the one unit alone; several GPUs of one process instead each receive
// the whole image from the end to the start, as one GPU does, and each counts only the runs of
// rows it claims. A count of rows [r0, r1) reads the rows r0 and above only (the oriented
// columns of a row lie above it), so a claimant may claim a run once the columns of its lowest
// row are on its device: rows are claimed from the top down, the order in which they arrive.
//
// Contract: every row of [0, rows) is claimed exactly once, in contiguous runs, whatever the
// claimants' timing, so their counts add up to the unit's. A claim takes the rows below the
// highest unclaimed one, at least one row and at most max(min_edges, unclaimed edges /
// (2 * claimants)) edges (guided self-scheduling: large runs while much is left, small ones at
// the end so that the claimants end together); while the image is still arriving (`last` false)
// a run that the rows not yet arrived cut below min_edges edges is refused (each count has a
// fixed cost: the one-GPU rule below, kRowCounts counts per GPU). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "tristream/types.hpp"

namespace tristream::stream {

// The rows of the in-core unit counted together as its row pieces arrive: those that arrived
// while the device counted earlier rows, at least 1/kRowCounts of the edges (fewer counts, each
// a little fixed work and a tail).
constexpr std::uint64_t kRowCounts = 64;

class RowClaims {
 public:
  // offsets: the unit's rows + 1 row offsets (the image's own, from any base), read by claim()
  // only (they may be filled after this is made); they outlive this. edges: the unit's. min_edges
  // 0: edges / (kRowCounts * claimants).
  RowClaims(const eid_t* offsets, std::uint64_t rows, std::uint64_t edges, std::uint32_t claimants,
            std::uint64_t min_edges = 0);

  // Claims the next run of rows at or above `avail` (the lowest row whose columns the claimant
  // has); `last`: every column has arrived. Returns false (nothing claimed) when every row is
  // claimed, the highest unclaimed row lies below `avail`, or the run would be too small.
  bool claim(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1);
  // Every row is claimed.
  bool exhausted() const;
  std::uint32_t claimants() const { return claimants_; }
  std::uint64_t min_edges() const { return min_edges_; }

 private:
  const eid_t* off_;
  std::uint32_t claimants_;
  std::uint64_t min_edges_;
  mutable std::mutex mu_;
  std::uint64_t top_;  // rows [top_, rows) are claimed
};

}  // namespace tristream::stream
