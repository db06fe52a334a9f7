// plan/cost.hpp — the planner's time model (cost.cpp): a unit's kernel seconds and an upload's
// seconds at the plan's rates (PlanRates), and the upload seconds the kernels leave exposed on
// the copy/compute line of a finished plan.
#pragma once

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

double kernel_seconds(const Plan& plan, const WorkUnit& w);
double upload_seconds(const Plan& plan, double bytes);
// The bytes of a unit's distinct blocks when none is on the device.
double cold_upload_bytes(const WorkUnit& w);
// The upload seconds the kernels do not hide at the plan's rates; *makespan the last kernel's end.
// The plan must be finished (replay.hpp).
double estimated_exposed_upload(const Plan& plan, double* makespan = nullptr);

}  // namespace tristream::plan_internal
