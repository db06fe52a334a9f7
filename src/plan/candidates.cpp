// candidates.cpp — the planner's candidates, their evaluation and the search for the best
// (plan/candidates.hpp).
#include "plan/candidates.hpp"

#include <algorithm>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "plan/build.hpp"
#include "plan/order.hpp"
#include "tristream/error.hpp"

namespace tristream::plan_internal {
namespace {

// Hash blocks cut every row into p pieces and lose the rank order inside a block, so their
// kernels run slower per edge than range blocks of the same size: on the H100, Kronecker 25 at
// 1/4 of its footprint, hash p = 8 counted 1.80 s of kernel time where range p = 19 took 1.19 s
// (wall 4.30 s vs 3.44 s) while moving 12% fewer bytes. Their estimated bytes are scaled by this
// factor before the comparison (bench/RESULTS.md).
constexpr double kHashCostFactor = 1.25;
// Candidates of a scheme evaluated after its first fit before its larger p are skipped.
constexpr int kAfterFeasible = 8;
// The most parts a pair plan tries without --parts: its units hold about two row parts, so it
// needs more parts than range for the same budget (its units are p(p+1)/2, not ~p^3/6).
constexpr std::uint32_t kMaxPairParts = 192;

// Builds one candidate, fits it to the host, sizes its caches and prices it (pair, when it fits
// the budgets: on its best grouped order).
Candidate evaluate(const CandidateSpec& spec, const GraphShape& g, const Census& census,
                   const HostModel& hm, const PlanOptions& o) {
  // 1. The partition and its units in their own order; not built when even its largest
  //    unit's blocks, twice, exceed the device budget (its units alone cost more than the
  //    candidate: a range plan of p = 96 has 150,000).
  Candidate c;
  if (spec.p > 1 && o.device_budget) {
    const std::uint64_t floor = device_floor(spec.scheme, spec.p, spec.variant, g.n, g.m, census);
    if (floor > o.device_budget) {
      c.plan.partition.scheme = spec.scheme;
      c.plan.partition.p = spec.p;
      c.device = floor;
      c.floor_only = true;
      return c;
    }
  }
  // (the device block cache may take the whole device budget, not only two slots, on a device
  // of its own)
  const std::uint64_t cache_room = o.device_is_host ? 0 : o.device_budget;
  c.plan = build_plan(spec.scheme, spec.p, spec.variant, g.n, g.m, g.offsets, census, o.per_vertex,
                      cache_room, g.work);
  c.plan.rates = o.rates;
  if (spec.p <= 1 && o.scheme != Scheme::Auto) c.plan.partition.scheme = Scheme::Range;
  // 2. The host: staging and window within the budget, then the caches from what is left.
  c.host = fit_host(hm, c.plan, o);
  size_host_caches(hm, c.plan, o, g.m, c.host);
  // 3. The budgets.
  c.device = c.plan.device_bytes;
  const bool dev_ok = o.device_budget == 0 || c.device <= o.device_budget;
  const bool host_ok = o.host_budget == 0 || c.host <= o.host_budget;
  c.feasible = dev_ok && host_ok;
  // (pair: the grouped order whose replay moves the fewest bytes, before the price)
  if (c.feasible) choose_pair_group(c.plan, o.per_vertex);
  // 4. The cost: bytes moved, plus a fixed charge per unit (its launches, synchronisation and
  // small-kernel inefficiency: PlanRates::kernel_s_per_unit, priced as the bytes uploaded
  // meanwhile); of the partition's own order, before the units in flight and the tail cover
  // tune it (its slices and their bytes would tip the choice of p towards plans whose order
  // needs no cover). A unit's fixed kernel seconds cost what the copy engine uploads meanwhile:
  // on the H100 (about 0.4 ms per unit, 40 GB/s) 16 MB, so one more part pays for itself only
  // when it saves 16 MB per unit it adds.
  const double unit_cost_bytes = o.rates.kernel_s_per_unit * o.rates.upload_bytes_per_s;
  c.cost = static_cast<double>(c.plan.bytes_moved + c.plan.bytes_decompressed) +
           static_cast<double>(c.plan.units.size()) * unit_cost_bytes;
  // (The order and the units in flight, which change the bytes moved but not the cost, are
  // chosen for the best candidate only, after the search.)
  if (c.plan.partition.scheme == Scheme::Hash) c.cost *= kHashCostFactor;
  c.units = c.plan.units.size();
  return c;
}

// A fitting candidate beats the best so far by cost, then by balance, then by fewer units.
bool better(const Candidate& c, const Candidate* best) {
  if (!c.feasible) return false;
  if (!best) return true;
  return c.cost < best->cost * 0.999 ||
         (c.cost <= best->cost * 1.001 &&
          (c.plan.imbalance < best->plan.imbalance * 0.99 ||
           (c.plan.imbalance <= best->plan.imbalance * 1.01 && c.units < best->units)));
}

// The most units a candidate may have: every one is a WorkUnit the planner holds while it
// builds the candidate (twice while its vector grows), out of a quarter of the host budget.
// No limit without a budget or below 4 MiB (the planner's tests of tiny graphs).
std::uint64_t max_units(const PlanOptions& o) {
  if (o.host_budget < (std::uint64_t{4} << 20)) return UINT64_MAX;
  return o.host_budget / 4 / (2 * sizeof(WorkUnit));
}

// The units a candidate has (an estimate: tasks with an empty block are left out): range and
// hash p(p+1)(p+2)/6 tasks, pair p(p+1)/2, vertex p.
std::uint64_t least_units(const CandidateSpec& spec) {
  const std::uint64_t p = spec.p;
  if (spec.scheme == Scheme::Vertex) return p;
  if (spec.scheme == Scheme::Pair) return p * (p + 1) / 2;
  return p * (p + 1) * (p + 2) / 6;
}

}  // namespace

std::vector<CandidateSpec> list_candidates(const Census& census, const PlanOptions& o) {
  std::vector<CandidateSpec> cands;
  std::vector<Scheme> schemes;
  if (o.scheme == Scheme::Auto)
    schemes = {Scheme::Range, Scheme::Vertex, Scheme::Hash, Scheme::Pair};
  else
    schemes = {o.scheme};
  if (o.parts) {
    for (Scheme s : schemes) {
      const bool ranged = s == Scheme::Range || s == Scheme::Pair;
      const int cuts = ranged && o.parts > 1 ? kRangeCuts : 1;
      for (int v = 0; v < cuts; ++v) cands.push_back({s, o.parts, v});
    }
    return cands;
  }
  cands.push_back({Scheme::Range, 1, 0});
  if (census.empty()) return cands;
  for (Scheme s : schemes) {
    if (s == Scheme::Range || s == Scheme::Pair) {
      const std::uint32_t F = static_cast<std::uint32_t>(census.fine_bounds.size() - 1);
      const std::uint32_t most = s == Scheme::Pair ? kMaxPairParts : 96;
      for (std::uint32_t p = 2; p <= std::min<std::uint32_t>(F, most); ++p)
        for (int v = 0; v < kRangeCuts; ++v) cands.push_back({s, p, v});
    } else if (s == Scheme::Hash) {
      for (std::uint32_t p = 2; p <= std::min<std::uint32_t>(census.hash_mod, 16); ++p)
        if (census.hash_mod % p == 0) cands.push_back({s, p, 0});
    } else {
      for (const auto& v : census.vertex)
        if (v.p >= 2) cands.push_back({s, v.p, 0});
    }
  }
  return cands;
}

Search search_candidates(const std::vector<CandidateSpec>& specs, const GraphShape& g,
                         const Census& census, const HostModel& hm, const PlanOptions& o) {
  Search s;
  int after_feasible[5] = {-1, -1, -1, -1, -1};  // per scheme: candidates evaluated since a fit
  // More parts only move more bytes; a candidate whose units alone do not fit is not built.
  auto skipped = [&](const CandidateSpec& spec) {
    return spec.p > 1 && (after_feasible[static_cast<int>(spec.scheme)] >= kAfterFeasible ||
                          least_units(spec) > max_units(o));
  };
  // The candidates are evaluated in batches on the plan's threads, then taken in order exactly
  // as one at a time: a batch holds the next candidates not skipped yet, and one that its
  // predecessors' fits would have skipped is dropped unseen (the skips only grow), so the search
  // returns what the sequential search does. A batch holds at most 8 candidates, whose units
  // together stay within what one candidate may hold (max_units): the host budget holds them.
  if (!census.empty()) census.fine_prefix();  // its lazy cache, filled before the threads read it
  const unsigned T = std::min(8u, std::max(1u, resolve_threads(o.threads)));
  ThreadPool pool(T);
  std::vector<std::size_t> batch;
  std::vector<Candidate> done;
  for (std::size_t next = 0; next < specs.size();) {
    // 1. The next batch.
    batch.clear();
    std::uint64_t units = 0;
    for (; next < specs.size() && batch.size() < T; ++next) {
      if (skipped(specs[next])) continue;
      const std::uint64_t u = specs[next].p > 1 ? least_units(specs[next]) : 1;
      if (!batch.empty() && units + u > max_units(o)) break;
      units += u;
      batch.push_back(next);
    }
    done.assign(batch.size(), Candidate{});
    throw_if_interrupted();  // SIGINT/SIGTERM while planning (common/interrupt.hpp)
    pool.run(batch.size(),
             [&](std::size_t x) { done[x] = evaluate(specs[batch[x]], g, census, hm, o); });
    // 2. Taken in order, as the sequential search takes them.
    for (std::size_t x = 0; x < batch.size(); ++x) {
      const CandidateSpec& spec = specs[batch[x]];
      if (skipped(spec)) continue;
      int& since_fit = after_feasible[static_cast<int>(spec.scheme)];
      Candidate& c = done[x];
      if (spec.p > 1 && (c.feasible || since_fit >= 0)) ++since_fit;
      if (better(c, s.best >= 0 ? &s.all[static_cast<std::size_t>(s.best)] : nullptr)) {
        s.best = static_cast<std::ptrdiff_t>(s.all.size());
        s.best_plan = c.plan;
      }
      std::vector<WorkUnit>().swap(c.plan.units);
      s.all.push_back(std::move(c));
    }
  }
  // 3. The best's order and units in flight (each try replays the device cache over every unit:
  //    most of a search's time when every fitting candidate had them).
  if (s.best >= 0) {
    choose_in_flight(s.best_plan, o.per_vertex);
    s.all[static_cast<std::size_t>(s.best)].units = s.best_plan.units.size();
  }
  return s;
}

}  // namespace tristream::plan_internal
