// plan/explain.hpp — the planner's words (explain.cpp): the reason of the chosen plan (why this
// scheme and p, the runner-up of each other scheme, what the in-core plan needs), and the usage
// error when no candidate fits (the smallest candidate's needs and the largest row).
#pragma once

#include <string>
#include <vector>

#include "plan/candidates.hpp"
#include "tristream/error.hpp"

namespace tristream::plan_internal {

// Requires a nonempty graph (make_plan words the empty graph itself).
std::string explain(const Plan& plan, const std::vector<Candidate>& all, const PlanOptions& o);
Error no_fit_error(const std::vector<Candidate>& all, const GraphShape& g, const PlanOptions& o);

}  // namespace tristream::plan_internal
