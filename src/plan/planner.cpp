// planner.cpp — the planner's entry points (tristream/plan.hpp): whether a census is needed,
// make_plan as staged calls (candidates -> evaluate and order -> pick -> explain), and
// plan_graph (census + plan, planning again with a census when the in-core estimate was wrong).
//
// Dependencies run one way: partition, sizes -> census; replay -> cost -> order; replay -> build;
// sizes -> host_model; build, order, host_model -> candidates -> explain -> planner; plan_json
// only reads a finished Plan.
#include <algorithm>

#include "plan/build.hpp"
#include "plan/candidates.hpp"
#include "plan/explain.hpp"
#include "plan/host_model.hpp"
#include "plan/replay.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

// census_needed's guess of streamed staging's window: two chunks at the default chunk size.
constexpr std::uint64_t kStreamedWindowGuess = 16ull << 20;

// The range census's fine buckets: 8 per forced part, at most this many (each census thread holds
// a histogram of their square: 512 MiB here, where 8 x 4096 buckets would take 8 GiB).
constexpr std::uint64_t kMaxFineBuckets = 8192;

// The options with --parts capped at the graph's rows (more parts than rows would only add empty
// parts, and the census and the candidates grow with p).
PlanOptions capped_parts(const PlanOptions& o, std::uint64_t n) {
  PlanOptions c = o;
  c.parts =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(o.parts, std::max<std::uint64_t>(n, 1)));
  return c;
}

// The plan of a graph without edges: one in-core plan with no unit.
Plan empty_plan(std::uint64_t n, const eid_t* offsets, const PlanOptions& o) {
  Plan plan;
  plan_internal::in_core_unit(plan, n, 0, offsets);
  plan_internal::finish_units(plan, o.per_vertex);
  plan.device_budget = o.device_budget;
  plan.host_budget = o.host_budget;
  plan.reason = "empty graph: nothing to count";
  return plan;
}

}  // namespace

CensusOptions census_options(std::uint64_t n, const PlanOptions& options) {
  const PlanOptions o = capped_parts(options, n);
  CensusOptions c;
  c.threads = o.threads;
  c.fine = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      {std::max<std::uint64_t>(n, 1), std::max<std::uint64_t>(1024, std::uint64_t{o.parts} * 8),
       kMaxFineBuckets}));
  c.fine = std::min(c.fine, plan_internal::census_fine_cap(o.host_budget));
  c.hash_mod = o.parts ? o.parts : 16;
  c.vertex_groups = o.parts ? o.parts : 16;
  // The vertex census keeps one n-bit bitmap per group: keep it within a quarter of the host.
  if (o.parts == 0 && o.host_budget) {
    while (c.vertex_groups > 2 && c.vertex_groups * ((n + 63) / 64 * 8) > o.host_budget / 4)
      c.vertex_groups /= 2;
  }
  c.max_bytes = o.host_budget;
  c.vertex = o.scheme == Scheme::Auto || o.scheme == Scheme::Vertex;
  c.device_budget = o.device_budget;
  return c;
}

bool census_needed(std::uint64_t n, eid_t m, const PlanOptions& options, CensusOptions* out) {
  const PlanOptions o = capped_parts(options, n);
  if (o.parts == 1 || m == 0) return false;
  if (o.parts == 0) {
    // In-core fits?  (then the planner picks p = 1 and needs no census). The host estimate is
    // rough (PlanOptions::window_budget for the window); plan_graph takes the census after all when
    // make_plan finds that the in-core plan does not fit.
    const std::uint64_t dev = in_core_bytes(n, m, o.per_vertex);
    const std::uint64_t fixed =
        (n + 1) * sizeof(eid_t) + (o.per_vertex ? 2 * n * sizeof(count_t) : 0) + o.window_budget;
    const std::uint64_t host = fixed + (n + 1) * sizeof(eid_t) + m * sizeof(vid_t);
    // streamed staging: the ring of the smallest pieces instead of the full host slot, and a
    // window of two chunks (16 MiB at the default chunk size)
    const std::uint64_t host_streamed =
        o.device_is_host
            ? host
            : fixed - o.window_budget + kStreamedWindowGuess + kStagingBuffers * kMinStagingPiece;
    const bool dev_ok = o.device_budget == 0 || dev <= o.device_budget;
    const bool host_ok = o.host_budget == 0 || std::min(host, host_streamed) <= o.host_budget;
    if (dev_ok && host_ok) return false;
  }
  if (out) *out = census_options(n, o);
  return true;
}

Plan make_plan(std::uint64_t n, eid_t m, const eid_t* offsets,
               const std::vector<tcsr::ChunkInfo>& chunks, const Census& census,
               const PlanOptions& options) {
  using namespace plan_internal;
  const PlanOptions o = capped_parts(options, n);
  // 1. Nothing to count, whatever the options.
  if (m == 0) return empty_plan(n, offsets, o);
  // 2. The candidates the options and the census allow.
  if (o.parts > 1 && census.empty())
    throw Error(ErrorKind::Internal, "the planner needs a block census for --parts > 1");
  const std::vector<CandidateSpec> specs = list_candidates(census, o);
  // 3. Each evaluated (built, fitted to the host, priced); the best kept and ordered.
  const RowWork work = row_work(n, offsets, census);  // (one pass, not one per candidate)
  const GraphShape g{n, m, offsets, &work};
  Search s = search_candidates(specs, g, census, host_model(n, chunks, o), o);
  // 4. None fits: a usage error that names what the smallest candidate needs.
  if (s.best < 0) throw no_fit_error(s.all, g, o);
  // 5. The best, with its budgets and its reason.
  Plan plan = std::move(s.best_plan);
  plan.device_budget = o.device_budget;
  plan.host_budget = o.host_budget;
  plan.reason = explain(plan, s.all, o);
  if (o.parts != options.parts)
    plan.reason = "--parts " + std::to_string(options.parts) + " capped at the graph's " +
                  std::to_string(n) + " rows; " + plan.reason;
  return plan;
}

Plan plan_graph(const GraphSource& g, const PlanOptions& options, Census* census_out) {
  CensusOptions co;
  Census census;
  const bool took = census_needed(g.n(), g.m(), options, &co);
  if (took) census = obtain_census(g, co);
  Plan plan;
  try {
    plan = make_plan(g.n(), g.m(), g.offsets(), g.chunks(), census, options);
  } catch (const Error& e) {
    // census_needed's estimate expected the in-core plan to fit, but it does not: plan again
    // with the census (the out-of-core candidates).
    if (took || e.kind() != ErrorKind::Usage || options.parts != 0 || g.m() == 0) throw;
    census = obtain_census(g, census_options(g.n(), options));
    plan = make_plan(g.n(), g.m(), g.offsets(), g.chunks(), census, options);
  }
  if (census_out) *census_out = std::move(census);
  return plan;
}

}  // namespace tristream
