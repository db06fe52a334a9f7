// cutoff_test.cpp — the hybrid queue's cut-off (stream/unit_queue.hpp, stream/worker_plan.hpp):
// a slow GPU (a CPU backend that sleeps per unit) gets few units and the CPU the rest, a slow
// CPU keeps its probes only; a CPU that cannot help is not run (no unit small enough for a
// probe, or the GPUs' estimated seconds too few: stats.cutoff says which); the hand-out among
// simulated workers on a simulated clock (the CPU's probes, the cut-off at the tail, never later
// than the GPU alone, a fair share for a comparable CPU, also when each of its units costs a fixed
// start); the hybrid CPU in the idle class.
#include "workers_util.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/thread_priority.hpp"
#include "fake_backend.hpp"
#include "pipeline_util.hpp"
#include "plan/plan_wire.hpp"
#include "stream/clock.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_queue.hpp"
#include "stream/worker_plan.hpp"
#include "stream/workers.hpp"

namespace tristream::stream_test {
namespace {

// A slow "GPU" (40 ms per unit) and the CPU as a cut-off worker: the CPU measures itself
// faster and takes most units; the count stays exact.
TEST(Workers, CutoffGivesTheCpuMostUnitsBesideASlowGpu) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::random_graph(800, 12000, 5));
  auto src = memory_source(g, 64);
  std::vector<Worker> ws;
  ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 40), false});
  ws.push_back({cpu_backend(), true});
  CountReport r = count_with_workers(*src, popts(Scheme::Hash, 4, true), ws);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
  ASSERT_EQ(r.stats.workers.size(), 2u);
  EXPECT_GT(r.stats.workers[1].units, r.stats.workers[0].units);
  EXPECT_EQ(r.stats.workers[0].units + r.stats.workers[1].units, r.plan.units.size());
}

// The opposite: a slow CPU beside a fast worker takes its probes only (it never finishes a unit
// before the fast worker finishes the rest).
TEST(Workers, CutoffLeavesASlowCpuItsProbesOnly) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::random_graph(800, 12000, 5));
  auto src = memory_source(g, 64);
  std::vector<Worker> ws;
  ws.push_back({cpu_backend(), false});
  ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 2000), true});
  CountReport r = count_with_workers(*src, popts(Scheme::Hash, 4, false), ws);
  EXPECT_EQ(r.triangles, oracle);
  ASSERT_EQ(r.stats.workers.size(), 2u);
  EXPECT_LE(r.stats.workers[1].units, 2u);
}

TEST(Workers, CutoffRule) {
  using stream::cutoff_takes;
  // (c, own units in flight, own work left, own rate, the others' work left, their rate)
  EXPECT_FALSE(cutoff_takes(1, 0, 0, 0, 100, 0));  // the others have no rate yet: wait
  EXPECT_TRUE(cutoff_takes(3, 0, 0, 0, 100, 5));   // a probe: 32 x 3 <= 100
  EXPECT_FALSE(cutoff_takes(4, 0, 0, 0, 100, 5));  // too large for a probe
  EXPECT_FALSE(cutoff_takes(1, 1, 1, 0, 100, 5));  // a probe in flight already
  // (left + c) / own rate against the others' time for the rest
  EXPECT_TRUE(cutoff_takes(10, 1, 10, 2, 200, 10));    // 1.5 x 10 s <= 20 s
  EXPECT_FALSE(cutoff_takes(20, 1, 10, 2, 200, 10));   // 1.5 x 15 s > 20 s
  EXPECT_FALSE(cutoff_takes(100, 1, 10, 2, 200, 10));  // 1.5 x 55 s > 20 s
  EXPECT_FALSE(cutoff_takes(1, 0, 0, 1, 0, 10));       // nothing left for the others
}

// A fake GPU (FakeBackend: a device of its own) and the cut-off CPU beside it, counting `o`'s
// plan of src: the count and per-vertex counts exact, the GPU every unit and the CPU none.
CountReport fake_gpu_counts_alone(const GraphSource& src, const PipelineOptions& o,
                                  std::uint64_t oracle, const std::vector<vid_t>& new_of_old,
                                  const std::vector<std::uint64_t>& oracle_pv) {
  auto gpu = std::make_unique<FakeBackend>();
  FakeBackend* fake = gpu.get();
  std::vector<Worker> ws;
  ws.push_back({std::move(gpu), false});
  ws.push_back({cpu_backend(), true});
  CountReport r = count_with_workers(src, o, ws);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
  EXPECT_EQ(r.stats.workers.size(), 2u);
  if (r.stats.workers.size() == 2) {
    EXPECT_EQ(r.stats.workers[0].units, r.plan.units.size());
    EXPECT_EQ(r.stats.workers[1].units, 0u);
  }
  EXPECT_EQ(fake->image_mismatches, 0u);
  return r;
}

// A fake GPU and the CPU beside it on plans where the CPU cannot help (in core: one unit; two
// hash parts: eight units of similar work): the CPU worker is not run at all, the GPU counts
// every unit, exactly.
TEST(Workers, ACpuThatCannotHelpIsNotRun) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (auto [s, p] : {std::pair{Scheme::Range, 1u}, {Scheme::Hash, 2u}}) {
    SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p));
    const PipelineOptions o = popts(s, p, true);
    const Plan plan = plan_graph(*src, resolve_plan_options(o, nullptr));
    ASSERT_FALSE(stream::cutoff_may_help(plan, {}));
    const CountReport r = fake_gpu_counts_alone(*src, o, oracle, new_of_old, oracle_pv);
    EXPECT_EQ(r.stats.cutoff.rfind("not admitted: no unit small enough", 0), 0u) << r.stats.cutoff;
  }
}

// The same with a plan of many units: the CPU may take some (timing decides how many), every
// unit is counted once and the counts are exact.
TEST(Workers, AFakeGpuAndTheCpuCountExactly) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (Scheme s : {Scheme::Range, Scheme::Hash}) {
    SCOPED_TRACE(scheme_name(s));
    std::vector<Worker> ws;
    ws.push_back({std::make_unique<FakeBackend>(), false});
    ws.push_back({cpu_backend(), true});
    const CountReport r = count_with_workers(*src, popts(s, 8, true), ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    ASSERT_EQ(r.stats.workers.size(), 2u);
    EXPECT_EQ(r.stats.workers[0].units + r.stats.workers[1].units, r.plan.units.size());
  }
}

// The probe is the smallest unit waiting once the GPU has a rate without its first unit (its
// start-up); nothing before that.
TEST(Workers, TheProbeIsTheSmallestWaitingUnit) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  plan.units[90].work = 3;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);  // the GPU has no rate yet
  EXPECT_EQ(q.try_next(0), 0);
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  now = 0.1;
  q.done(0, 0);  // the GPU's first unit: its rate holds its start-up
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  EXPECT_EQ(q.try_next(0), 1);
  now = 0.2;
  q.done(0, 1);  // the GPU: 1000 work per second
  EXPECT_EQ(q.try_next(1), 60);
  EXPECT_EQ(q.try_next(1), UnitFeed::kCollectFirst);  // one probe at a time
  EXPECT_EQ(q.try_next(0), 2);                        // the GPU goes on in plan order
}

// The cut-off worker takes nothing while the plain workers' preloads run (their cores feed the
// GPUs): with two holds, the probe comes only after the second release.
TEST(Workers, TheCutoffWaitsForThePlainWorkersPreloads) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  q.hold_cutoff(2);
  EXPECT_EQ(q.try_next(0), 0);
  now = 0.1;
  q.done(0, 0);
  EXPECT_EQ(q.try_next(0), 1);  // the GPU is never held
  now = 0.2;
  q.done(0, 1);  // the GPU has a rate: the CPU could probe, but the preloads hold it
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  q.release_cutoff();
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  EXPECT_EQ(q.try_next(0), 2);
  q.release_cutoff();
  EXPECT_EQ(q.try_next(1), 60);
}

// The first probe only while the others have at least the minimum seconds of work left: the GPU
// at 1000 work per second with 9,802 work left (9.8 s) gets no probe beside it at a 20 s minimum
// (and none later: what is left only shrinks), one at 5 s.
TEST(Workers, NoProbeWhenTheOthersAreAlmostDone) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  for (double min_s : {20.0, 5.0}) {
    SCOPED_TRACE(min_s);
    double now = 0;
    stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
    q.set_min_probe_seconds(min_s);
    EXPECT_EQ(q.try_next(0), 0);
    now = 0.1;
    q.done(0, 0);
    EXPECT_EQ(q.try_next(0), 1);
    now = 0.2;
    q.done(0, 1);
    EXPECT_EQ(q.try_next(1), min_s > 10 ? -1 : 60);
  }
}

// The cut-off at the tail, step by step on a driven clock: a GPU of 1000 work per second, a CPU
// that measures 100 on its second probe; the CPU takes a unit while it finishes it (with the
// 1.5 margin) before the GPU finishes the rest, and nothing after that.
TEST(Workers, AtTheTailTheCpuTakesNothingItWouldFinishLate) {
  Plan plan;
  plan.units.resize(100);
  for (WorkUnit& u : plan.units) u.work = 100;
  plan.units[98].work = 2;
  plan.units[99].work = 50;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  auto gpu_counts = [&](int units) {  // one at a time, 0.1 s each
    for (int i = 0; i < units; ++i) {
      const std::int64_t u = q.try_next(0);
      ASSERT_GE(u, 0);
      now += 0.1;
      q.done(0, static_cast<std::size_t>(u));
    }
  };
  gpu_counts(2);                 // (a rate without the first unit's start-up)
  EXPECT_EQ(q.try_next(1), 98);  // the first probe: the smallest unit
  now += 0.02;
  q.done(1, 98);
  EXPECT_EQ(q.try_next(1), 97);  // the second: the largest near the tail the probe rule allows
  now += 1.0;
  q.done(1, 97);
  EXPECT_DOUBLE_EQ(q.rate(1), 100);
  EXPECT_DOUBLE_EQ(q.rate(0), 1000);
  EXPECT_EQ(q.try_next(1), 99);  // 1.5 x 0.5 s against 9.5 s of the GPU's
  now += 0.5;
  q.done(1, 99);
  gpu_counts(95 - 20);  // 20 units of 100 left: 1.5 x 1 s <= 1.9 s
  const std::int64_t u = q.try_next(1);
  EXPECT_GE(u, 0);
  now += 1.0;
  q.done(1, static_cast<std::size_t>(u));
  gpu_counts(19 - 10);  // 10 left: 1.5 x 1 s > 0.9 s
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  gpu_counts(10);
  EXPECT_EQ(q.try_next(1), -1);  // none left
  EXPECT_EQ(q.try_next(0), -1);
  EXPECT_EQ(q.units_taken(0) + q.units_taken(1), plan.units.size());
}

TEST(Workers, CutoffMayHelpNeedsASmallUnit) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  const Plan one = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 1, false), nullptr));
  ASSERT_EQ(one.units.size(), 1u);
  EXPECT_FALSE(stream::cutoff_may_help(one, {}));  // in core: the GPU takes the only unit
  const Plan many = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 8, false), nullptr));
  EXPECT_TRUE(stream::cutoff_may_help(many, {}));
  Plan even = many;  // units of equal work: the smallest is 1/N of the work, N < 33
  even.units.resize(20);
  for (WorkUnit& u : even.units) u.work = 100;
  EXPECT_FALSE(stream::cutoff_may_help(even, {}));
  even.units.resize(40, even.units.front());
  EXPECT_TRUE(stream::cutoff_may_help(even, {}));
}

// The cut-off worker runs only when the plain workers' estimated seconds (the plan's rates) reach
// min_probe_s / kAdmitSlack: below, its first probe could never be taken, and it is not admitted.
TEST(Workers, ACutoffWorkerIsNotAdmittedWhenTheOthersEndBeforeAProbeCould) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  const Plan plan = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 8, false), nullptr));
  ASSERT_TRUE(stream::cutoff_may_help(plan, {}));
  const double est = stream::plain_workers_seconds(plan, {}, 1);
  ASSERT_GT(est, 0);
  EXPECT_NEAR(stream::plain_workers_seconds(plan, {}, 2), est / 2, 1e-12 * est);
  std::vector<std::size_t> first_half;
  for (std::size_t u = 0; u < plan.units.size() / 2; ++u) first_half.push_back(u);
  EXPECT_LT(stream::plain_workers_seconds(plan, first_half, 1), est);
  Plan plain_plan;
  std::string why;
  auto probe_gate = [](double min_probe_s) {
    stream::CutoffGate gate;
    gate.min_probe_s = min_probe_s;
    return gate;
  };
  EXPECT_TRUE(stream::admit_cutoff(plan, {}, 1, 1, probe_gate(0), &plain_plan, &why));  // no bound
  EXPECT_EQ(why, "admitted");
  EXPECT_TRUE(stream::admit_cutoff(plan, {}, 1, 1, probe_gate(0.99 * stream::kAdmitSlack * est),
                                   &plain_plan, &why));
  EXPECT_FALSE(stream::admit_cutoff(plan, {}, 1, 1, probe_gate(1.01 * stream::kAdmitSlack * est),
                                    &plain_plan, &why));
  EXPECT_NE(why.find("not admitted: the other workers' estimated"), std::string::npos) << why;
  // Two plain workers share the seconds: the same bound turns the cut-off worker away sooner.
  EXPECT_FALSE(stream::admit_cutoff(plan, {}, 2, 1, probe_gate(0.99 * stream::kAdmitSlack * est),
                                    &plain_plan, &why));
  // In core (one unit) nothing is small enough for a probe, whatever the bound.
  const Plan one = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 1, false), nullptr));
  EXPECT_FALSE(stream::admit_cutoff(one, {}, 1, 1, probe_gate(0), &plain_plan, &why));
  EXPECT_NE(why.find("no unit small enough"), std::string::npos) << why;
}

// The CPU's estimated share is est / (est + its seconds alone at kCpuWorkPerThreadS): it grows
// with its threads and shrinks with the plain workers; below gate.min_share the cut-off worker
// is not admitted, and the reason names the share and the threads.
TEST(Workers, ACutoffWorkerIsNotAdmittedWhereItsShareOfTheWorkIsTooSmall) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  const Plan plan = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 8, false), nullptr));
  ASSERT_TRUE(stream::cutoff_may_help(plan, {}));
  double work = 0;
  for (const WorkUnit& u : plan.units) work += std::max(u.work, 1.0);
  const double est = stream::plain_workers_seconds(plan, {}, 1);
  const double share = stream::cutoff_share_estimate(plan, {}, 1, 4);
  EXPECT_NEAR(share, est / (est + work / (4 * stream::kCpuWorkPerThreadS)), 1e-12);
  EXPECT_GT(share, 0.0);
  EXPECT_LT(share, 1.0);
  EXPECT_LT(stream::cutoff_share_estimate(plan, {}, 1, 2), share);  // fewer threads
  EXPECT_GT(stream::cutoff_share_estimate(plan, {}, 1, 16), share);
  EXPECT_LT(stream::cutoff_share_estimate(plan, {}, 2, 4), share);  // two plain workers
  std::vector<std::size_t> first_half;
  for (std::size_t u = 0; u < plan.units.size() / 2; ++u) first_half.push_back(u);
  EXPECT_NEAR(stream::cutoff_share_estimate(plan, first_half, 1, 4), share, 1e-9);  // a ratio
  Plan plain_plan;
  std::string why;
  stream::CutoffGate gate;
  gate.cpu_threads = 4;
  gate.min_share = 0.99 * share;
  EXPECT_TRUE(stream::admit_cutoff(plan, {}, 1, 1, gate, &plain_plan, &why));
  EXPECT_EQ(why, "admitted");
  // A bound between the shares of 4 and 64 threads refuses the one and admits the other.
  gate.min_share = (share + stream::cutoff_share_estimate(plan, {}, 1, 64)) / 2;
  EXPECT_FALSE(stream::admit_cutoff(plan, {}, 1, 1, gate, &plain_plan, &why));
  EXPECT_EQ(why.rfind("not admitted: the CPU's estimated share of the work", 0), 0u) << why;
  EXPECT_NE(why.find("on 4 threads"), std::string::npos) << why;
  gate.cpu_threads = 64;
  EXPECT_TRUE(stream::admit_cutoff(plan, {}, 1, 1, gate, &plain_plan, &why)) << why;
}

// Not admitted (the plan's rates are a GPU's, so the bound applies where every other worker has
// a device of its own: a CPU worker beside the cut-off one is never turned away by it), the GPU
// worker runs the plan alone (every unit, the count exact) and the report
// says why the cut-off worker did not run, in the JSON and in the one-line summary.
TEST(Workers, ANotAdmittedCutoffWorkerLeavesTheCountToTheOthers) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  PipelineOptions o = popts(Scheme::Range, 8, true);
  o.cutoff_min_probe_s = 1e6;  // (far beyond any estimate of this graph)
  const CountReport r = fake_gpu_counts_alone(*src, o, oracle, new_of_old, oracle_pv);
  EXPECT_EQ(r.stats.cutoff.rfind("not admitted: the other workers' estimated", 0), 0u)
      << r.stats.cutoff;
  EXPECT_NE(r.stats.to_json().find("\"cutoff\":\"not admitted"), std::string::npos);
  EXPECT_NE(r.stats.summary().find("cut-off worker not admitted"), std::string::npos);
  // The same by the CPU's share: no bound by seconds, every share below the bound of 1.
  PipelineOptions by_share = o;
  by_share.cutoff_min_probe_s = 0;
  by_share.cutoff_min_share = 1.0;
  const CountReport s = fake_gpu_counts_alone(*src, by_share, oracle, new_of_old, oracle_pv);
  EXPECT_EQ(s.stats.cutoff.rfind("not admitted: the CPU's estimated share", 0), 0u)
      << s.stats.cutoff;
  // Both beside a plain worker on the host (the CPU backend): no bound by seconds or share,
  // admitted.
  for (const PipelineOptions* x : {&o, &by_share}) {
    std::vector<Worker> host;
    host.push_back({cpu_backend(), false});
    host.push_back({cpu_backend(), true});
    const CountReport h = count_with_workers(*src, *x, host);
    EXPECT_EQ(h.triangles, oracle);
    EXPECT_EQ(h.stats.cutoff, "admitted");
  }
}

// The queue's hand-out among simulated workers on a simulated clock: each worker counts its units
// one after another at its rate (estimated work per simulated second), with up to two in flight
// (the driver's pipeline), asking the queue whenever it has room and after every collection.
struct Simulated {
  double finish = 0;                 // when the last unit was collected
  std::vector<double> work;          // per worker: the work of its units
  std::vector<std::uint64_t> units;  // per worker
  std::vector<int> owner;            // per unit: the worker that counted it (-1: none)
};
Simulated simulate(const Plan& plan, const std::vector<double>& rates,
                   const std::vector<bool>& cutoff, std::vector<double> fixed = {}) {
  fixed.resize(rates.size(), 0.0);
  const std::size_t W = rates.size();
  double now = 0;
  stream::UnitQueue q(plan, cutoff, {}, true, [&now] { return now; });
  Simulated r;
  r.work.assign(W, 0);
  r.units.assign(W, 0);
  r.owner.assign(plan.units.size(), -1);
  std::vector<std::deque<std::pair<double, std::size_t>>> flying(W);  // (finish, unit)
  std::vector<bool> ended(W, false);
  auto ask = [&](std::size_t w) {
    while (!ended[w] && flying[w].size() < 2) {
      const std::int64_t u = q.try_next(static_cast<int>(w));
      if (u == -1) ended[w] = true;
      if (u < 0) break;  // -1, or kWait / kCollectFirst: it asks again after a collection
      const auto unit = static_cast<std::size_t>(u);
      EXPECT_EQ(r.owner[unit], -1) << "unit " << unit << " handed out twice";
      r.owner[unit] = static_cast<int>(w);
      const double c = std::max(plan.units[unit].work, 1.0);
      const double start = flying[w].empty() ? now : flying[w].back().first;
      flying[w].push_back({start + fixed[w] + c / rates[w], unit});
      r.work[w] += c;
      ++r.units[w];
    }
  };
  for (std::size_t w = 0; w < W; ++w) ask(w);
  for (;;) {
    std::size_t next = W;
    for (std::size_t w = 0; w < W; ++w)
      if (!flying[w].empty() && (next == W || flying[w].front().first < flying[next].front().first))
        next = w;
    if (next == W) break;
    now = flying[next].front().first;
    q.done(static_cast<int>(next), flying[next].front().second);
    flying[next].pop_front();
    r.finish = now;
    for (std::size_t w = 0; w < W; ++w) ask(w);
  }
  for (std::size_t w = 0; w < W; ++w) EXPECT_TRUE(ended[w]) << "worker " << w << " still waits";
  return r;
}

std::vector<Plan> simulated_plans() {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  std::vector<Plan> out;
  for (auto [s, p] : {std::pair{Scheme::Range, 1u},
                      {Scheme::Range, 4u},
                      {Scheme::Range, 8u},
                      {Scheme::Range, 12u},
                      {Scheme::Hash, 4u},
                      {Scheme::Hash, 8u}})
    out.push_back(plan_graph(*src, resolve_plan_options(popts(s, p, false), nullptr)));
  return out;
}

// A fast GPU and a slower CPU: the hybrid never finishes later than the GPU alone (the CPU's
// probe is its smallest unit, and it takes a unit only when it finishes before the GPU would
// finish the rest), and every unit is counted exactly once.
TEST(Workers, HybridNeverFinishesLaterThanTheGpuAloneInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    const double gpu = 1000;
    const Simulated alone = simulate(plan, {gpu}, {false});
    for (double slower : {1.5, 4.0, 12.0, 32.0, 100.0}) {
      SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p) +
                   ", CPU " + std::to_string(slower) + "x slower");
      const Simulated h = simulate(plan, {gpu, gpu / slower}, {false, true});
      EXPECT_LE(h.finish, alone.finish * (1 + 1e-9));
      if (plan.partition.p >= 8) {  // the target: 90% of (r_gpu + r_cpu) / r_gpu
        EXPECT_GE(alone.finish / h.finish, 0.9 * (1 + 1 / slower));
      }
      EXPECT_EQ(std::count(h.owner.begin(), h.owner.end(), -1), 0);
      EXPECT_EQ(h.units[0] + h.units[1], plan.units.size());
      EXPECT_NEAR(h.work[0] + h.work[1], alone.work[0], 1e-6 * alone.work[0]);
      if (plan.units.size() == 1) {
        EXPECT_EQ(h.units[1], 0u);  // in core: nothing for the CPU
      }
    }
  }
}

// A CPU far slower than the prior (1000x): it takes its two probes at most, one at a time, each
// small against the work left (kProbeFactor), the first the smallest unit waiting then.
TEST(Workers, AVerySlowCpuTakesTwoSmallProbesAtMostInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p));
    const Simulated h = simulate(plan, {1000, 1}, {false, true});
    EXPECT_LE(h.units[1], 2u);
    EXPECT_LE(stream::kProbeFactor * h.work[1], 2 * (h.work[0] + h.work[1]));
    EXPECT_EQ(h.units[0] + h.units[1], plan.units.size());
    if (plan.units.size() == 1) {
      EXPECT_EQ(h.units[1], 0u);
    }
  }
}

// A CPU as fast as the GPU, or half as fast, takes a fair share of the work, and the count is at
// least 90% of (r_gpu + r_cpu) / r_gpu faster than the GPU alone (p >= 8: units small enough to
// share).
TEST(Workers, AComparableCpuTakesAFairShareInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    if (plan.partition.p < 8) continue;
    const Simulated alone = simulate(plan, {1000}, {false});
    for (double cpu : {1000.0, 500.0}) {
      SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p) +
                   ", CPU rate " + std::to_string(cpu));
      const Simulated h = simulate(plan, {1000, cpu}, {false, true});
      const double ideal = cpu / (1000 + cpu);  // the CPU's share when both finish together
      const double share = h.work[1] / (h.work[0] + h.work[1]);
      EXPECT_GE(share, 0.8 * ideal);
      // the target: 90% of (r_gpu + r_cpu) / r_gpu
      EXPECT_GE(alone.finish / h.finish, 0.9 * (1000 + cpu) / 1000);
    }
  }
}

// A comparable CPU whose every unit also costs a fixed start (its slots, the blocks of the unit's
// row parts, its threads' wake-up: on the H200 machine about 0.1 s against a count of 6.5 s): its
// first probe's rate is mostly that start, yet it must not keep the CPU from its share. With f
// seconds per unit, the CPU's rate over a unit of average work c is c / (f + c / r_cpu); the count
// is never later than the GPU alone's and at least 90% of (r_gpu + that rate) / r_gpu faster.
TEST(Workers, ACpuWithAFixedCostPerUnitStillTakesItsShareInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    if (plan.partition.p < 8) continue;
    const Simulated alone = simulate(plan, {1000}, {false});
    double total = 0;
    for (const auto& u : plan.units) total += std::max(u.work, 1.0);
    const double average = total / static_cast<double>(plan.units.size());
    for (double cpu : {1000.0, 500.0, 100.0}) {
      for (double share_of_count : {0.001, 0.01, 0.03}) {
        const double fixed = share_of_count * alone.finish;
        SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p) +
                     ", CPU rate " + std::to_string(cpu) + ", fixed " + std::to_string(fixed) +
                     " s per unit");
        const Simulated h = simulate(plan, {1000, cpu}, {false, true}, {0.0, fixed});
        EXPECT_LE(h.finish, alone.finish * (1 + 1e-9));
        const double effective = average / (fixed + average / cpu);
        EXPECT_GE(alone.finish / h.finish, 0.9 * (1000 + effective) / 1000);
        EXPECT_GT(h.units[1], 2u);  // more than its probes
        EXPECT_EQ(h.units[0] + h.units[1], plan.units.size());
      }
    }
  }
}

// The threads of this process in the idle scheduling class (Linux: /proc/self/task/T/stat,
// field 41 is the policy; SCHED_IDLE is 5).
std::size_t idle_class_threads() {
  std::size_t n = 0;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(t.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));  // after "pid (name) "
    std::string field;
    for (int f = 3; f <= 41 && rest >> field; ++f) {
    }
    n += field == "5" ? 1 : 0;
  }
  return n;
}

// --hybrid's CPU backend counts on threads of the idle scheduling class (each enters it as it
// starts); the other workers' threads stay as they were.
TEST(Workers, TheHybridCpuCountsInTheIdleClass) {
  bool supported = false;
  std::thread([&] { supported = set_thread_idle_class(); }).join();
  if (!supported || !std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "no SCHED_IDLE";
  PipelineOptions o = popts(Scheme::Range, 1, false);
  o.counter.threads = 2;
  const std::size_t before = idle_class_threads();
  std::vector<Worker> ws = make_workers(o, {}, 1, true);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_FALSE(ws[0].idle_class);
  EXPECT_TRUE(ws[1].cutoff && ws[1].idle_class);
  // the backend's thread and the pool's other one (they enter the class as they start)
  for (int i = 0; i < 500 && idle_class_threads() < before + 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(idle_class_threads(), before + 2);  // (none of the plain CPU worker's)
  ws.clear();
  // (a joined thread may still be listed for a moment while the kernel ends it)
  for (int i = 0; i < 500 && idle_class_threads() != before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(idle_class_threads(), before);
}

}  // namespace
}  // namespace tristream::stream_test
