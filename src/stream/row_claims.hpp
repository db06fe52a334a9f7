// stream/row_claims.hpp — the rows of the in-core unit shared out among several GPUs that each
// stream the whole in-core image in row pieces and count the rows they claim here
// (InCoreUnitBuilder::build_from_image; count_with_workers decides: stream/worker_plan.hpp,
// workers_claim_rows and plan_claims_rows).
//
// One GPU in core counts the one unit alone; several GPUs (of one process, or MPI ranks) instead
// each receive the whole image from the end to the start, as one GPU does, and each counts only
// the runs of rows it claims. A count of rows [r0, r1) reads the rows r0 and above only (the
// oriented columns of a row lie above it), so a claimant may count a run once the columns of its
// lowest row are on its device: rows are claimed from the top down, the order they arrive in.
//
// Contract: every row of [0, rows) is claimed exactly once, in contiguous runs, whatever the
// claimants' timing, so their counts add up to the unit's. Two ways:
//  - In one process (no shared counter): a claim takes the rows below the highest unclaimed one,
//    at least one row and at most max(min_edges, unclaimed edges / (2 * claimants)) edges
//    (guided self-scheduling: large runs while much is left, small ones at the end so that the
//    claimants end together); while the image is still arriving (`last` false) a run that the
//    rows not yet arrived cut below min_edges edges is refused (each count has a fixed cost: the
//    one-GPU rule below, kRowCounts counts per GPU).
//  - Over processes (a counter they share, Communicator::fetch_next): the rows are cut into
//    runs of about min_edges edges, numbered from the top, the same in every process; the
//    counter's next index is the next run, held by the process until one of its claimants has
//    its rows (a claim at or above `avail`).
// Thread-safe (the counter is called under this object's lock).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "tristream/types.hpp"

namespace tristream::stream {

// The rows of the in-core unit counted together as its row pieces arrive: those that arrived
// while the device counted earlier rows, at least 1/kRowCounts of the edges (fewer counts, each
// a little fixed work and a tail).
constexpr std::uint64_t kRowCounts = 64;

class RowClaims {
 public:
  // offsets: the unit's rows + 1 row offsets (the image's own, from any base); they outlive
  // this. edges: the unit's. claimants: the GPUs of every process. min_edges 0: edges /
  // (kRowCounts * claimants). next_run (optional): the counter the processes share, which makes
  // the runs fixed (see above).
  RowClaims(const eid_t* offsets, std::uint64_t rows, std::uint64_t edges, std::uint32_t claimants,
            std::uint64_t min_edges = 0, std::function<std::uint64_t()> next_run = nullptr);

  // Claims the next run of rows at or above `avail` (the lowest row whose columns the claimant
  // has); `last`: every column has arrived. Returns false (nothing claimed) when every row is
  // claimed, the next run lies below `avail` (its rows have not all arrived), or it would be
  // too small.
  bool claim(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1);
  // Every row is claimed (over processes: as far as this process has seen).
  bool exhausted() const;
  std::uint32_t claimants() const { return claimants_; }
  std::uint64_t min_edges() const { return min_edges_; }
  // Over processes: the fixed runs' boundaries, from `rows` down to 0.
  const std::vector<std::uint64_t>& runs() const { return bounds_; }

 private:
  bool claim_guided(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1);
  bool claim_counted(std::uint64_t avail, std::uint64_t* r0, std::uint64_t* r1);

  const eid_t* off_;
  std::uint32_t claimants_;
  std::uint64_t min_edges_;
  std::function<std::uint64_t()> next_run_;
  mutable std::mutex mu_;
  std::uint64_t top_;                       // guided: rows [top_, rows) are claimed
  std::vector<std::uint64_t> bounds_;       // counted: run k is rows [bounds_[k + 1], bounds_[k])
  std::uint64_t held_ = ~std::uint64_t{0};  // counted: the run fetched and not yet claimed
  bool done_ = false;                       // counted: the counter is past the last run
};

}  // namespace tristream::stream
