// stream/unit_queue.cpp — the shared unit queue and the cut-off (stream/unit_queue.hpp).
#include "stream/unit_queue.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "common/interrupt.hpp"
#include "stream/clock.hpp"
#include "tristream/error.hpp"

namespace tristream::stream {

namespace {

// How far from the head a worker looks for a unit that shares a block with its last one.
constexpr std::size_t kReuseWindow = 64;

bool same_block(const BlockInfo& x, const BlockInfo& y) {
  return x.row_part == y.row_part && x.col_part == y.col_part;
}

}  // namespace

bool cutoff_takes(double c, std::uint64_t own_flying, double own_left, double own_rate,
                  double others_left, double others_rate) {
  if (others_rate <= 0) return false;
  if (own_rate <= 0) return own_flying == 0 && kProbeFactor * c <= others_left;
  return kCutoffMargin * (own_left + c) / own_rate <= std::max(0.0, others_left) / others_rate;
}

bool cutoff_may_help(const Plan& plan, const std::vector<std::size_t>& units) {
  double total = 0, smallest = 0;
  std::size_t n = 0;
  auto add = [&](std::size_t u) {
    const double c = std::max(plan.units.at(u).work, 1.0);
    total += c;
    smallest = n++ ? std::min(smallest, c) : c;
  };
  if (units.empty())
    for (std::size_t u = 0; u < plan.units.size(); ++u) add(u);
  for (std::size_t u : units) add(u);
  return n > 1 && kProbeFactor * smallest <= total - smallest;
}

UnitQueue::UnitQueue(const Plan& plan, std::vector<bool> cutoff, std::vector<std::size_t> units,
                     bool all_units, std::function<double()> clock)
    : plan_(plan),
      clock_(clock ? std::move(clock) : std::function<double()>(now_s)),
      workers_(cutoff.size()) {
  bool any_plain = false;
  for (bool c : cutoff) any_plain |= !c;
  for (std::size_t w = 0; w < cutoff.size(); ++w) {
    workers_[w].cutoff = cutoff[w] && any_plain;
    workers_[w].plain = static_cast<std::uint32_t>(plain_);
    plain_ += workers_[w].cutoff ? 0 : 1;
  }
  // (TRISTREAM_SHARED_COLUMNS=1: every plain worker takes from the head as before, to measure)
  own_columns_ = plain_ > 1 && plan.partition.scheme == Scheme::Pair && plan.partition.p > 1 &&
                 !std::getenv("TRISTREAM_SHARED_COLUMNS");
  if (units.empty() && all_units)
    for (std::size_t u = 0; u < plan.units.size(); ++u) units.push_back(u);
  order_ = std::move(units);
  taken_.assign(order_.size(), 0);
  tail_ = waiting_ = order_.size();
  for (std::size_t u : order_) waiting_work_ += work(u);
}

void UnitQueue::set_refill(std::function<bool(std::vector<std::size_t>&)> refill) {
  std::lock_guard<std::mutex> lock(mu_);
  refill_ = std::move(refill);
}

double UnitQueue::work(std::size_t u) const {
  return std::max(plan_.units.at(u).work, 1.0);
}

bool UnitQueue::shares_block(std::size_t u, std::size_t v) const {
  const WorkUnit& x = plan_.units[u];
  const WorkUnit& y = plan_.units[v];
  for (const BlockInfo* a : {&x.a, &x.b, &x.c})
    for (const BlockInfo* b : {&y.a, &y.b, &y.c})
      if (same_block(*a, *b)) return true;
  return false;
}

bool UnitQueue::fill() {
  if (waiting_ > 0) return true;
  if (!refill_) return false;
  std::vector<std::size_t> more;
  if (!refill_(more) || more.empty()) {
    refill_ = nullptr;  // the source is exhausted
    return false;
  }
  head_ = order_.size();
  for (std::size_t u : more) {
    if (u >= plan_.units.size()) throw Error(ErrorKind::Internal, "a unit outside the plan");
    order_.push_back(u);
    taken_.push_back(0);
    waiting_work_ += work(u);
  }
  waiting_ = more.size();
  tail_ = order_.size();
  return true;
}

std::int64_t UnitQueue::take_at(std::size_t pos, Worker& w) {
  const std::size_t u = order_[pos];
  taken_[pos] = 1;
  --waiting_;
  waiting_work_ = waiting_ ? waiting_work_ - work(u) : 0.0;
  w.left += work(u);
  ++w.flying;
  w.last = static_cast<std::int64_t>(u);
  w.taken_s.push_back(clock_());
  ++w.taken;
  while (head_ < tail_ && taken_[head_]) ++head_;
  while (tail_ > head_ && taken_[tail_ - 1]) --tail_;
  if (waiting_ == 0) cv_.notify_all();  // a waiting cut-off worker: nothing is left for it
  return static_cast<std::int64_t>(u);
}

std::int64_t UnitQueue::take_near(Worker& w) {
  const std::size_t end = std::min(tail_, head_ + kReuseWindow);
  if (own_columns_) {
    // Pair: the worker's own column parts first (C = R_j with j % plain workers = its index),
    // one that shares a block with its last unit before the others.
    constexpr std::size_t kNone = ~std::size_t{0};
    std::size_t own = kNone;
    for (std::size_t pos = head_; pos < end; ++pos) {
      if (taken_[pos] || plan_.units[order_[pos]].j % plain_ != w.plain) continue;
      if (w.last >= 0 && shares_block(order_[pos], static_cast<std::size_t>(w.last)))
        return take_at(pos, w);
      if (own == kNone) own = pos;
    }
    if (own != kNone) return take_at(own, w);
  }
  if (w.last >= 0) {
    for (std::size_t pos = head_; pos < end; ++pos)
      if (!taken_[pos] && shares_block(order_[pos], static_cast<std::size_t>(w.last)))
        return take_at(pos, w);
  }
  return take_at(head_, w);
}

std::int64_t UnitQueue::cutoff_next(Worker& w) {
  if (cutoff_holds_ > 0) return w.flying ? UnitFeed::kCollectFirst : kWait;
  double others_rate = 0, others_left = waiting_work_;
  bool others_settled = true;  // every other worker's rate leaves its start-up out
  for (const Worker& x : workers_)
    if (!x.cutoff) {
      others_rate += rate_of(x);
      others_left += x.left;
      others_settled &= x.collected >= 2;
    }
  if (w.collected < 2) {
    // 1. No rate yet (the first unit carries its start-up): its probe in flight is collected
    //    first; else, once the others have a rate, the first probe is the smallest waiting unit
    //    (the least a slow CPU can lose) that the probe rule allows, and the second, which gives
    //    the rate, the largest unit near the tail that the cut-off allows at the first probe's
    //    rate (start-up included, so slower than the CPU's: a unit it allows ends in time; a
    //    rate measured on a tiny unit alone is mostly its fixed costs).
    if (w.flying) return UnitFeed::kCollectFirst;
    if (others_rate <= 0) return kWait;  // (before the scan: the lock stays short)
    // The first probe waits for the others' rates without their first unit (start-up, the
    // first row part, the filling): the first unit's rate makes their work left look longer.
    if (w.collected == 0 && !others_settled) return kWait;
    const double first_rate = rate_of(w);  // (0 before the first probe: the probe rule)
    if (w.collected == 0 && others_left < min_probe_s_ * others_rate)
      return refill_ ? kWait : -1;  // (too little left to pay a probe's fixed costs)
    std::size_t best = tail_ - 1;
    for (std::size_t pos = head_; pos < tail_; ++pos)
      if (!taken_[pos] && work(order_[pos]) < work(order_[best])) best = pos;
    for (std::size_t pos = tail_, seen = 0;
         w.collected == 1 && pos-- > head_ && seen < kReuseWindow;) {
      if (taken_[pos]) continue;
      ++seen;
      const double c = work(order_[pos]);
      if (c > work(order_[best]) && cutoff_takes(c, 0, 0, first_rate, others_left - c, others_rate))
        best = pos;
    }
    const double c = work(order_[best]);
    if (cutoff_takes(c, 0, 0, first_rate, others_left - c, others_rate)) return take_at(best, w);
    // What is left only shrinks (without a refill), so a probe refused once never comes.
    return refill_ ? kWait : -1;
  }
  const double own_rate = rate_of(w);
  // 2. A rate: the unit nearest the tail, within a window, that the cut-off lets it finish in
  //    time, one that shares a block with its last unit first (its caches hold part of it).
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t pick = kNone, seen = 0;
  for (std::size_t pos = tail_; pos-- > head_ && seen < kReuseWindow;) {
    if (taken_[pos]) continue;
    ++seen;
    const double c = work(order_[pos]);
    if (!cutoff_takes(c, w.flying, w.left, own_rate, others_left - c, others_rate)) continue;
    if (pick == kNone) pick = pos;
    if (w.last >= 0 && shares_block(order_[pos], static_cast<std::size_t>(w.last))) {
      pick = pos;
      break;
    }
  }
  if (pick != kNone) return take_at(pick, w);
  return w.flying ? UnitFeed::kCollectFirst : kWait;
}

std::int64_t UnitQueue::decide(Worker& w) {
  if (stopped_ || interrupt_requested() || !fill()) return -1;
  if (w.cutoff) return cutoff_next(w);
  // One plain worker follows the plan's order (its device cache's next uses are the plan's).
  if (plain_ == 1) return take_at(head_, w);
  // In core (the slices of the one unit: plan/order.hpp slice_in_core) a worker takes its next
  // slice only once its last is collected: each slice uploads the whole graph, so taking one
  // ahead gains nothing and would keep it from a worker that has none.
  if (plan_.partition.p <= 1 && w.flying) return UnitFeed::kCollectFirst;
  return take_near(w);
}

std::int64_t UnitQueue::try_next(int wi) {
  std::lock_guard<std::mutex> lock(mu_);
  return decide(workers_.at(static_cast<std::size_t>(wi)));
}

std::int64_t UnitQueue::next(int wi) {
  std::unique_lock<std::mutex> lock(mu_);
  Worker& w = workers_.at(static_cast<std::size_t>(wi));
  for (;;) {
    const std::int64_t u = decide(w);
    if (u != kWait) return u;
    // Not now: wait for another worker's progress (or the queue running dry).
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void UnitQueue::done(int wi, std::size_t u) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Worker& w = workers_.at(static_cast<std::size_t>(wi));
    const double now = clock_();
    const double took = w.taken_s.empty() ? now : w.taken_s.front();
    if (!w.taken_s.empty()) w.taken_s.pop_front();
    w.left = std::max(0.0, w.left - work(u));
    if (w.flying) --w.flying;
    w.done_work += work(u);
    // (busy from its take, or from the previous collection while it was in flight)
    const double busy = now - (w.collected ? std::max(took, w.last_done_s) : took);
    if (++w.collected == 1) {
      w.first_work = w.done_work;
      w.first_s = busy;
    } else {
      w.busy_s += std::max(0.0, busy);
    }
    w.last_done_s = now;
  }
  cv_.notify_all();
}

void UnitQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void UnitQueue::hold_cutoff(std::uint32_t holders) {
  std::lock_guard<std::mutex> lock(mu_);
  cutoff_holds_ = holders;
}

void UnitQueue::release_cutoff() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cutoff_holds_ > 0) --cutoff_holds_;
  }
  cv_.notify_all();
}

std::uint64_t UnitQueue::units_taken(int w) const {
  std::lock_guard<std::mutex> lock(mu_);
  return workers_.at(static_cast<std::size_t>(w)).taken;
}

double UnitQueue::rate(int w) const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_of(workers_.at(static_cast<std::size_t>(w)));
}

double UnitQueue::work_done(int w) const {
  std::lock_guard<std::mutex> lock(mu_);
  return workers_.at(static_cast<std::size_t>(w)).done_work;
}

}  // namespace tristream::stream
