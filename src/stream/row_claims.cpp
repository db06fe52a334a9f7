// stream/row_claims.cpp — the in-core unit's rows claimed by several GPUs
// (stream/row_claims.hpp).
#include "stream/row_claims.hpp"

#include <algorithm>

#include "tristream/error.hpp"

namespace tristream::stream {

RowClaims::RowClaims(const eid_t* offsets, std::uint64_t rows, std::uint64_t edges,
                     std::uint32_t claimants, std::uint64_t min_edges)
    : off_(offsets), claimants_(std::max<std::uint32_t>(claimants, 1)), top_(rows) {
  TS_CHECK(offsets != nullptr || rows == 0, "row claims without offsets");
  min_edges_ =
      min_edges ? min_edges : std::max<std::uint64_t>(1, edges / (kRowCounts * claimants_));
}

bool RowClaims::claim(std::uint64_t avail, bool last, std::uint64_t* r0, std::uint64_t* r1) {
  std::lock_guard<std::mutex> lock(mu_);
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

bool RowClaims::exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return top_ == 0;
}

}  // namespace tristream::stream
