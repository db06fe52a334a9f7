// cost.cpp — the planner's time model (plan/cost.hpp): uploads and kernels as a two-stage line.
#include "plan/cost.hpp"

#include <algorithm>
#include <vector>

namespace tristream::plan_internal {

// A unit's kernel seconds and an upload's seconds at the plan's rates (PlanRates).
double kernel_seconds(const Plan& plan, const WorkUnit& w) {
  return plan.rates.kernel_s_per_unit + w.work / plan.rates.kernel_work_per_s;
}
double upload_seconds(const Plan& plan, double bytes) {
  return bytes / plan.rates.upload_bytes_per_s;
}

double cold_upload_bytes(const WorkUnit& w) {
  double b = static_cast<double>(w.a.upload_bytes);
  if (!w.b_is_a) b += static_cast<double>(w.b.upload_bytes);
  if (!w.c_is_a && !w.c_is_b) b += static_cast<double>(w.c.upload_bytes);
  return b;
}

// The upload seconds the kernels do not hide, estimated: the copy engine and the compute engine
// as a two-stage line (a unit's kernel after its upload and the previous kernel; its upload
// after the previous upload and the kernel of the unit it waits for: WorkUnit::upload_after with
// the device block cache, whose room that replay follows, else the unit `in_flight` before it),
// each unit taking its estimated seconds; the host is assumed to keep up. *makespan gets the end
// of the last kernel.
double estimated_exposed_upload(const Plan& plan, double* makespan) {
  const std::size_t U = plan.units.size();
  const std::size_t lanes = static_cast<std::size_t>(std::max(1, plan.in_flight));
  std::vector<double> ke(U, 0);
  double ue = 0, kend = 0, exposed = 0;
  for (std::size_t u = 0; u < U; ++u) {
    const double up = upload_seconds(plan, static_cast<double>(plan.units[u].upload_bytes));
    const std::int64_t after =
        plan.device_cache_bytes ? plan.units[u].upload_after
                                : static_cast<std::int64_t>(u) - static_cast<std::int64_t>(lanes);
    const double us = std::max(ue, after >= 0 ? ke[static_cast<std::size_t>(after)] : 0.0);
    ue = us + up;
    // the upload overlaps the kernels running in [us, ue): the previous kernels end by kend,
    // and run back to back from the first one that had not finished at us
    const double covered = std::max(0.0, std::min(ue, kend) - us);
    exposed += up - std::min(up, covered);
    const double ks = std::max(ue, kend);
    kend = ks + kernel_seconds(plan, plan.units[u]);
    ke[u] = kend;
  }
  if (makespan) *makespan = kend;
  return exposed;
}

}  // namespace tristream::plan_internal
