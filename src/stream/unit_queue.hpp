// stream/unit_queue.hpp — the shared queue of a plan's units among several workers
// (stream/workers.hpp), and the cut-off that decides whether a slow worker (the CPU beside GPUs)
// takes a unit.
//
// Units wait in plan order. With one plain worker (one GPU) it takes them in that order (the
// plan's order is the one its caches were planned for); with several, a worker takes the first
// waiting unit, within a window from the head, that shares a block with the last unit it took
// (its block caches then hold part of the unit already), else the head; in core (the slices of
// the one unit) only once its last unit is collected. With pair's units (i, j), whose C = R_j
// serves every i <= j, plain worker x of P owns the column parts j with j % P = x and takes its
// own first (within the window; one sharing a block with its last before the others): the
// workers, taking from one head, each uploaded nearly every R_j, as many bytes as one GPU
// moves for the whole graph; owning them, each moves about its share. A cut-off worker (the
// CPU with --hybrid) takes from the tail instead (range orders end with the low row parts: many
// bytes, little work, nothing to upload on the CPU), and only when it would finish the unit
// before the other workers finish everything else, both estimated from measured rates (BBTC's
// cut-off): until the others have a rate it waits; until it has one of its own it takes up to
// two probes, one at a time: first the smallest waiting unit, when even a CPU far slower than
// the others would finish it well before them (kProbeFactor); then the largest unit near the
// tail that the cut-off lets it finish in time at the first probe's rate, start-up included (a
// rate that errs slow; the second unit's own leaves the start-up out). A plan
// whose smallest unit fails that test at the start never gets a cut-off worker at all
// (cutoff_may_help): it would only wait. A refill callback may add units when the queue runs dry
// (MPI: the next batch from the dispatcher). Thread-safe: every call takes the queue's lock. The
// queue times the units itself, on a clock it is given (the steady clock; tests give a simulated
// one).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "tristream/pipeline.hpp"
#include "tristream/plan.hpp"

namespace tristream::stream {

// The cut-off: a worker with `own_left` estimated work in flight and rate own_rate (work per
// second; 0 = not measured yet) takes a unit of work `c` when it finishes it (its estimate with
// a margin of kCutoffMargin) no later than the others finish `others_left` at their summed rate
// others_rate (> 0). Without a rate of its own it takes the unit as a probe when nothing of its
// own is in flight (own_flying == 0) and kProbeFactor * c <= others_left: a worker 16 times
// slower than the others would still finish it within half of their remaining time.
constexpr double kCutoffMargin = 1.5;
constexpr double kProbeFactor = 32;
bool cutoff_takes(double c, std::uint64_t own_flying, double own_left, double own_rate,
                  double others_left, double others_rate);

// Whether a cut-off worker could ever take one of `units` (plan indices; every unit of the plan
// when empty): the probe test of the smallest against all the others' work, at the start, when
// the most is left. False for one unit (in core) and for a few units of similar work.
bool cutoff_may_help(const Plan& plan, const std::vector<std::size_t>& units);

class UnitQueue {
 public:
  // next()'s answer for a cut-off worker the cut-off keeps waiting with nothing in flight
  // (try_next only; next() blocks instead).
  static constexpr std::int64_t kWait = -3;

  // cutoff[w]: worker w is a cut-off worker. The plan outlives the queue. `units`: the plan
  // indices that may be handed out, in order (all of the plan's when empty and all_units).
  // `clock`: seconds, for the rates (stream::now_s when empty).
  UnitQueue(const Plan& plan, std::vector<bool> cutoff, std::vector<std::size_t> units,
            bool all_units = true, std::function<double()> clock = {});

  // Called under the queue's lock when no unit waits: appends units (plan indices) to `out`
  // and returns true, or returns false when there are no more.
  void set_refill(std::function<bool(std::vector<std::size_t>& out)> refill);

  // The next unit for worker w (a plan index), or -1 when none is left for it or after stop().
  // A cut-off worker that the cut-off keeps waiting gets UnitFeed::kCollectFirst while it has
  // units in flight (their done() gives it a rate), else blocks until the cut-off lets it take
  // one or the queue runs dry.
  std::int64_t next(int w);
  // As next(), but answers kWait instead of blocking.
  std::int64_t try_next(int w);
  // Worker w collected unit u (timed on the queue's clock).
  void done(int w, std::size_t u);
  // Every next() returns -1 from now on (a worker failed or the run was interrupted).
  void stop();
  // The cut-off workers take no unit until release_cutoff() has been called `holders` times:
  // once by each preload of the plain workers' host block stores when it ends, since the cores
  // a cut-off CPU worker would count on are then decompressing and building the blocks that
  // feed the GPUs. Call before the workers start.
  void hold_cutoff(std::uint32_t holders);
  void release_cutoff();
  // A cut-off worker's first probe only while the others have at least `s` seconds of work
  // left at their rate (0 by default): a probe's fixed costs (the worker's slots, the blocks of
  // its unit's row parts) do not scale with its work, so a short remainder cannot pay for them.
  void set_min_probe_seconds(double s) { min_probe_s_ = s; }

  std::uint64_t units_taken(int w) const;
  double rate(int w) const;       // measured work per second (0 = none yet)
  double work_done(int w) const;  // the estimated work of the units it collected

 private:
  struct Worker {
    bool cutoff = false;
    std::uint32_t plain = 0;     // its index among the plain workers
    std::int64_t last = -1;      // the last unit taken
    double left = 0;             // estimated work taken, not yet collected
    std::uint64_t flying = 0;    // units taken, not yet collected
    std::deque<double> taken_s;  // when it took each unit in flight (collected in that order)
    double done_work = 0, last_done_s = 0;
    double first_work = 0, first_s = 0;  // the first unit collected (start-up included)
    double busy_s = 0;                   // after the first unit: seconds with a unit in flight
    std::uint64_t taken = 0, collected = 0;
  };
  double work(std::size_t u) const;
  bool shares_block(std::size_t u, std::size_t v) const;
  bool fill();  // lock held: makes a unit wait if the refill can; false when none is left
  std::int64_t take_at(std::size_t pos, Worker& w);
  std::int64_t take_near(Worker& w);
  // lock held: the cut-off worker's decision; kWait = wait, else as next()
  std::int64_t cutoff_next(Worker& w);
  std::int64_t decide(Worker& w);  // lock held: try_next
  // Work per busy second after its first unit (the start-up, the first row part's build and
  // the pipeline's filling left out; a cut-off worker's waits too), or the first unit's.
  static double rate_of(const Worker& w) {
    if (w.collected >= 2 && w.busy_s > 0) return (w.done_work - w.first_work) / w.busy_s;
    return w.collected ? w.first_work / std::max(w.first_s, 1e-9) : 0.0;
  }

  const Plan& plan_;
  std::function<double()> clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Worker> workers_;
  std::size_t plain_ = 0;           // workers that are not cut-off workers
  bool own_columns_ = false;        // pair, several plain workers: each owns column parts
  std::vector<std::size_t> order_;  // units in hand-out order
  std::vector<char> taken_;         // by position in order_
  std::size_t head_ = 0;            // first position not taken
  std::size_t tail_ = 0;            // one past the last position not taken
  std::size_t waiting_ = 0;         // positions not taken
  double waiting_work_ = 0;
  bool stopped_ = false;
  std::uint32_t cutoff_holds_ = 0;  // preloads the cut-off workers still wait for
  double min_probe_s_ = 0;
  std::function<bool(std::vector<std::size_t>&)> refill_;
};

}  // namespace tristream::stream
