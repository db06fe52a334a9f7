// plan/candidates.hpp — the planner's candidates (candidates.cpp): the (scheme, p, range cut)
// triples the options and the census allow, each evaluated (built, fitted to the host, costed),
// and the search that keeps the best and chooses its order and units in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan/build.hpp"
#include "plan/host_model.hpp"
#include "tristream/plan.hpp"

namespace tristream::plan_internal {

struct CandidateSpec {
  Scheme scheme;
  std::uint32_t p;
  int variant;  // the range cut (build.hpp)
};

struct Candidate {
  Plan plan;  // units dropped except for the best candidate (memory)
  std::size_t units = 0;
  bool feasible = false;
  std::uint64_t host = 0, device = 0;
  // Not built: its device floor (build.hpp: device_floor, here `device`) exceeds the budget.
  bool floor_only = false;
  double cost = 0;
};

// The graph a plan is made for.
struct GraphShape {
  std::uint64_t n = 0;
  eid_t m = 0;
  const eid_t* offsets = nullptr;
  const RowWork* work = nullptr;  // row_work's table (build.hpp), or null
};

// The candidates, in the order they are evaluated: forced p (o.parts) per scheme, else the
// in-core plan and, with a census, range p = 2..min(F, 96), hash p dividing hash_mod (<= 16)
// and the vertex census's p >= 2.
std::vector<CandidateSpec> list_candidates(const Census& census, const PlanOptions& o);

// Every candidate evaluated (those past 8 evaluated since a scheme's first fit skipped: more
// parts only move more bytes) and the best that fits (best < 0 when none does).
struct Search {
  std::vector<Candidate> all;  // units dropped
  std::ptrdiff_t best = -1;    // index into all
  Plan best_plan;              // with its units
};
Search search_candidates(const std::vector<CandidateSpec>& specs, const GraphShape& g,
                         const Census& census, const HostModel& hm, const PlanOptions& o);

}  // namespace tristream::plan_internal
