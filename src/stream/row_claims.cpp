// stream/row_claims.cpp — the in-core unit's rows claimed by several GPUs
// (stream/row_claims.hpp).
#include "stream/row_claims.hpp"

#include <algorithm>

#include "tristream/error.hpp"

namespace tristream::stream {

namespace {

constexpr std::uint64_t kNone = ~std::uint64_t{0};

}  // namespace

RowClaims::RowClaims(const eid_t* offsets, std::uint64_t rows, std::uint64_t edges,
                     std::uint32_t claimants, std::uint64_t min_edges,
                     std::function<std::uint64_t()> next_run)
    : off_(offsets),
      claimants_(std::max<std::uint32_t>(claimants, 1)),
      next_run_(std::move(next_run)),
      top_(rows) {
  TS_CHECK(offsets != nullptr || rows == 0, "row claims without offsets");
  min_edges_ =
      min_edges ? min_edges : std::max<std::uint64_t>(1, edges / (kRowCounts * claimants_));
  if (!next_run_) return;
  // The fixed runs, from the top: each ends at the lowest row that keeps it within min_edges
  // (one row at least), so every process cuts the same runs from the same offsets.
  bounds_.push_back(rows);
  for (std::uint64_t hi = rows; hi > 0;) {
    const eid_t want = off_[hi] - std::min<eid_t>(min_edges_, off_[hi] - off_[0]);
    std::uint64_t lo = static_cast<std::uint64_t>(std::lower_bound(off_, off_ + hi, want) - off_);
    if (lo >= hi) lo = hi - 1;
    bounds_.push_back(lo);
    hi = lo;
  }
}

bool RowClaims::claim(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1) {
  std::lock_guard<std::mutex> lock(mu_);
  return next_run_ ? claim_counted(avail, r0, r1) : claim_guided(avail, last, r0, r1);
}

bool RowClaims::claim_guided(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1) {
  if (top_ == 0 || avail >= top_) return false;
  const eid_t hi = off_[top_];
  const std::uint64_t unclaimed = hi - off_[0];
  const std::uint64_t cap = std::max(min_edges_, unclaimed / (2 * std::uint64_t{claimants_}));
  // the lowest row at or above avail whose run up to top_ holds at most cap edges; one row at
  // least (a row of more than cap edges alone)
  std::uint64_t lo = static_cast<std::uint64_t>(
      std::lower_bound(off_ + avail, off_ + top_, hi - std::min<eid_t>(cap, hi)) - off_);
  if (lo >= top_) lo = top_ - 1;
  // (a run cut short by the rows not arrived yet waits for more; one cut by cap is taken)
  if (!last && lo == avail && hi - off_[lo] < min_edges_) return false;
  *r0 = lo;
  *r1 = top_;
  top_ = lo;
  return true;
}

bool RowClaims::claim_counted(std::uint64_t avail, std::uint64_t* r0, std::uint64_t* r1) {
  const std::uint64_t runs = bounds_.size() - 1;
  if (held_ == kNone) {
    if (done_) return false;
    const std::uint64_t k = next_run_();
    if (k >= runs) {
      done_ = true;
      return false;
    }
    held_ = k;
  }
  if (bounds_[held_ + 1] < avail) return false;  // (its rows have not all arrived)
  *r0 = bounds_[held_ + 1];
  *r1 = bounds_[held_];
  held_ = kNone;
  return true;
}

bool RowClaims::exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_run_ ? done_ && held_ == kNone : top_ == 0;
}

}  // namespace tristream::stream
