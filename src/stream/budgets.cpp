// stream/budgets.cpp — the one place a command's budgets are read from the flags and the machine
// (tristream/budgets.hpp), and the planner's options made from them.
#include "tristream/budgets.hpp"

#include <algorithm>

#include "common/host_memory_policy.hpp"
#include "common/thread_pool.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

std::uint64_t device_budget_of_free(std::uint64_t free) {
  const std::uint64_t reserve = std::max<std::uint64_t>(512ull << 20, free / 16);
  return free > 2 * reserve ? free - reserve : free / 2;
}

Budgets resolve_budgets(const BudgetFlags& flags, StreamingBackend* backend) {
  Budgets b;
  // 1. Device: the flag, else the backend's free memory (less a reserve on a real device).
  if (flags.gpu_memory) {
    b.device_bytes = flags.gpu_memory;
    b.device_from = "--gpu-memory";
  } else if (backend) {
    const std::uint64_t free = backend->free_device_bytes();
    if (backend->device_is_host()) {
      b.device_bytes = free;  // 0: no device limit beyond host memory
      b.device_from = free ? "the backend's limit" : "host memory (no device)";
    } else if (free) {
      b.device_bytes = device_budget_of_free(free);
      b.device_from = "free device memory less a reserve";
    } else {
      b.device_from = "unknown (no limit)";
    }
  } else {
    b.device_from = "no backend (no limit)";
  }
  // 2. Host: the flag, else what the process holds plus 7/8 of the memory still available to it.
  if (flags.host_memory) {
    b.host_bytes = flags.host_memory;
    b.host_from = "--host-memory";
  } else {
    b.host_bytes = default_host_budget();
    b.host_from = b.host_bytes ? "the process's memory plus 7/8 of the available host memory"
                               : "unknown (no limit)";
  }
  // 3. Threads: the flag, else the machine's.
  b.threads = resolve_threads(flags.threads);
  b.threads_from = flags.threads ? "--threads" : "hardware concurrency";
  return b;
}

Budgets set_aside_host(Budgets b, std::uint64_t bytes, const std::string& what) {
  if (!b.host_bytes) return b;
  b.host_bytes = b.host_bytes > 2 * bytes ? b.host_bytes - bytes : b.host_bytes / 2;
  b.host_from += ", less " + what;
  return b;
}

BudgetFlags budget_flags(const PipelineOptions& options) {
  BudgetFlags f;
  f.gpu_memory = options.gpu_memory;
  f.host_memory = options.host_memory;
  f.threads = options.threads;
  return f;
}

PlanOptions plan_options(const PipelineOptions& options, const Budgets& budgets,
                         const StreamingBackend* backend) {
  PlanOptions po;
  po.scheme = options.scheme;
  po.parts = options.parts;
  po.per_vertex = options.per_vertex;
  po.threads = budgets.threads;
  po.device_is_host = backend ? backend->device_is_host() : true;
  po.device_budget = budgets.device_bytes;
  po.host_budget = budgets.host_bytes;
  return po;
}

bool ready_plan_serves(const PlanOptions& made, const PlanOptions& now) {
  const bool host_ok =
      now.host_budget == 0 ? made.host_budget == 0 : made.host_budget <= now.host_budget;
  return made.scheme == now.scheme && made.parts == now.parts &&
         made.per_vertex == now.per_vertex && made.threads == now.threads &&
         made.device_is_host == now.device_is_host && made.device_budget == now.device_budget &&
         made.window_budget == now.window_budget &&
         made.rates.upload_bytes_per_s == now.rates.upload_bytes_per_s &&
         made.rates.kernel_work_per_s == now.rates.kernel_work_per_s &&
         made.rates.kernel_s_per_unit == now.rates.kernel_s_per_unit && host_ok;
}

bool take_ready_plan(const std::shared_future<ReadyPlan>& ready, const PlanOptions& po, Plan* plan,
                     Census* census, double* ahead_s) {
  if (!ready.valid()) return false;
  const ReadyPlan& r = ready.get();
  if (!r.ok || !ready_plan_serves(r.options, po)) return false;
  *plan = r.plan;
  *census = r.census;
  census->seconds = 0;  // (spent before; what the count waited for is in its plan_s)
  *ahead_s = r.census_s + r.plan_s;
  return true;
}

bool take_ready_plan(const PipelineOptions& options, const PlanOptions& po, std::uint64_t replans,
                     Plan* plan, Census* census, double* ahead_s) {
  return replans == 0 && take_ready_plan(options.ready_plan, po, plan, census, ahead_s);
}

PlanOptions resolve_plan_options(const PipelineOptions& options, StreamingBackend* backend) {
  const Budgets b =
      options.budgets ? *options.budgets : resolve_budgets(budget_flags(options), backend);
  return plan_options(options, b, backend);
}

}  // namespace tristream
