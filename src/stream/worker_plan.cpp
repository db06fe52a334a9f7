// stream/worker_plan.cpp — the plan of a count over several workers (stream/worker_plan.hpp)
// and the processes' split of its units (mpi_split, stream/workers.hpp).
#include "stream/worker_plan.hpp"

#include <algorithm>
#include <cstdio>

#include "plan/cost.hpp"
#include "plan/plan_wire.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_in_core.hpp"
#include "stream/unit_queue.hpp"

namespace tristream {
namespace stream {
namespace {

// The host budget shared out among the workers (each keeps its own slots and caches).
Budgets share_host(Budgets b, std::size_t workers) {
  if (b.host_bytes && workers > 1) {
    b.host_bytes /= workers;
    b.host_from += " shared by " + std::to_string(workers) + " workers";
  }
  return b;
}

}  // namespace

// The budgets of the workers together: the smallest device budget of the workers with a device
// of their own, the host budget shared out among the workers that are not cut-off workers (a
// cut-off worker lives in what their plan leaves: admit_cutoff).
Budgets worker_budgets(const PipelineOptions& options, std::vector<Worker>& workers,
                       const Communicator* comm) {
  Budgets b = options.budgets ? *options.budgets : resolve_budgets(budget_flags(options), nullptr);
  const auto plain = static_cast<std::size_t>(
      std::count_if(workers.begin(), workers.end(), [](const Worker& w) { return !w.cutoff; }));
  const std::size_t sharing_host = plain ? plain : workers.size();
  if (options.gpu_memory) return share_host(b, sharing_host);
  bool first = true;
  for (Worker& w : workers) {
    if (w.backend->device_is_host()) continue;
    Budgets x = resolve_budgets(budget_flags(options), w.backend.get());
    const auto sharing = std::count_if(workers.begin(), workers.end(), [&](const Worker& o) {
      return w.device >= 0 && o.device == w.device;
    });
    if (sharing > 1) {
      x.device_bytes /= static_cast<std::uint64_t>(sharing);
      x.device_from += " shared by " + std::to_string(sharing) + " workers";
    }
    // Ranks of one machine share its GPUs in turn (local rank mod GPUs).
    const std::uint64_t ranks = ranks_per_gpu(comm);
    if (ranks > 1) {
      x.device_bytes /= ranks;
      x.device_from += " shared by up to " + std::to_string(ranks) + " ranks";
    }
    if (first || (x.device_bytes && x.device_bytes < b.device_bytes)) {
      b.device_bytes = x.device_bytes;
      b.device_from = x.device_from;
      first = false;
    }
  }
  return share_host(b, sharing_host);
}

double plain_workers_seconds(const Plan& plan, const std::vector<std::size_t>& units,
                             std::size_t plain) {
  double makespan = 0;
  (void)plan_internal::estimated_exposed_upload(plan, &makespan);
  if (!units.empty()) {  // this process's share of the plan's work
    double all = 0, mine = 0;
    for (const WorkUnit& u : plan.units) all += std::max(u.work, 1.0);
    for (std::size_t u : units) mine += std::max(plan.units.at(u).work, 1.0);
    makespan *= all > 0 ? mine / all : 1.0;
  }
  return makespan / static_cast<double>(std::max<std::size_t>(plain, 1));
}

double cutoff_share_estimate(const Plan& plan, const std::vector<std::size_t>& units,
                             std::size_t plain, unsigned cpu_threads) {
  const double est = plain_workers_seconds(plan, units, plain);
  double work = 0;
  if (units.empty())
    for (const WorkUnit& u : plan.units) work += std::max(u.work, 1.0);
  for (std::size_t u : units) work += std::max(plan.units.at(u).work, 1.0);
  const double cpu = work / (kCpuWorkPerThreadS * std::max(cpu_threads, 1u));
  return est + cpu > 0 ? est / (est + cpu) : 0.0;
}

// (the conditions in the order of stream/worker_plan.hpp's contract; the first refusal is the
// reason given)
bool admit_cutoff(const Plan& plan, const std::vector<std::size_t>& units, std::size_t plain,
                  std::size_t cutoffs, const CutoffGate& gate, Plan* plain_plan, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = "not admitted: " + reason;
    return false;
  };
  if (!cutoffs || !plain) return no("no other worker");
  if (!stream::cutoff_may_help(plan, units))
    return no("no unit small enough for a probe (in core, or a few units of similar work)");
  const double est = plain_workers_seconds(plan, units, plain);
  char buf[200];
  if (gate.min_probe_s > 0 && kAdmitSlack * est < gate.min_probe_s) {
    std::snprintf(buf, sizeof buf,
                  "the other workers' estimated %.2f s of counting are too few for a probe "
                  "(%.2f s or more)",
                  est, gate.min_probe_s / kAdmitSlack);
    return no(buf);
  }
  const double share = cutoff_share_estimate(plan, units, plain, gate.cpu_threads);
  if (gate.min_share > 0 && share < gate.min_share) {
    std::snprintf(buf, sizeof buf,
                  "the CPU's estimated share of the work, %.1f%% on %u threads, is below %.1f%%: "
                  "too little to pay for its probes",
                  100 * share, gate.cpu_threads, 100 * gate.min_share);
    return no(buf);
  }
  if (plan.host_budget) {
    const std::uint64_t used = plan.host_bytes + plan.chunk_cache_bytes + plan.block_cache_bytes;
    const std::uint64_t spare = plan.host_budget > used ? plan.host_budget - used : 0;
    const std::uint64_t need = (used * cutoffs + plain - 1) / plain;  // from each plain worker
    if (spare < need) return no("no room in the host budget beside the other workers' plan");
    *plain_plan = plan;
    plain_plan->host_budget -= need;
  }
  if (why) *why = "admitted";
  return true;
}

namespace {

// An in-core plan that several GPUs share, by the split or by claiming its rows: neither turned
// off nor slices asked for, one unit of p = 1 whose kernel the plan's rates estimate at
// split_in_core_s or more.
bool long_in_core(const PipelineOptions& options, const Plan& plan) {
  return options.split_in_core_s >= 0 && !options.in_core_gpu_slices && plan.partition.p <= 1 &&
         plan.units.size() == 1 &&
         plan_internal::kernel_seconds(plan, plan.units[0]) >= options.split_in_core_s;
}

}  // namespace

// (the conditions in the order of stream/worker_plan.hpp's contract)
bool split_in_core_options(const PipelineOptions& options, const PlanOptions& po, std::size_t gpus,
                           const Plan& plan, PlanOptions* shared) {
  if (gpus < 2 || po.parts != 0 || !long_in_core(options, plan)) return false;
  *shared = po;
  shared->device_budget = std::max<std::uint64_t>(plan.device_bytes / split_shares(gpus), 1);
  return true;
}

bool split_in_core(const GraphSource& g, const PipelineOptions& options, const PlanOptions& po,
                   std::size_t gpus, Plan* plan, Census* census, double* ahead_s) {
  PlanOptions shared;
  if (!split_in_core_options(options, po, gpus, *plan, &shared)) return false;
  Census more;
  Plan split;
  double made_ahead_s = 0;
  if (take_ready_plan(options.ready_split_plan, shared, &split, &more, &made_ahead_s)) {
    *ahead_s += made_ahead_s;
  } else {
    try {
      split = plan_graph(g, shared, &more);
    } catch (const Error& e) {  // (nothing fits within the host budget; an interrupted census)
      if (e.kind() != ErrorKind::Usage && e.kind() != ErrorKind::Interrupted) throw;
      return false;
    }
  }
  if (split.partition.p <= 1) return false;
  split.reason =
      "in core one GPU would count the one unit alone; planned at 1/" +
      std::to_string(split_shares(gpus)) + " of its device bytes so that the " +
      std::to_string(gpus) +
      " GPUs share its units (TRISTREAM_IN_CORE_SPLIT=0 keeps it in core): " + split.reason;
  more.seconds += census->seconds;
  *census = std::move(more);
  *plan = std::move(split);
  return true;
}

std::size_t split_gpus(std::size_t process_gpus, const Communicator* comm) {
  if (!comm || comm->size() <= 1) return process_gpus;
  return process_gpus * static_cast<std::size_t>(comm->size()) /
         static_cast<std::size_t>(ranks_per_gpu(comm));
}

// (the conditions in the order of stream/worker_plan.hpp's contract)
bool workers_claim_rows(const GraphSource& g, const PipelineOptions& options,
                        const std::vector<Worker>& workers, const Communicator* comm) {
  const bool many = comm && comm->size() > 1;
  if (options.in_core_row_claims <= 0 || (workers.size() < 2 && !many)) return false;
  const InCoreImage* image = options.in_core_image.get();
  if (!image || image->n() != g.n() || image->m() != g.m() || image->registered()) return false;
  if (options.in_core_row_claims < 2 && ranks_per_gpu(comm) > 1) return false;
  std::vector<int> devices;
  for (const Worker& w : workers) {
    if (w.cutoff || w.device < 0 || w.backend->device_is_host()) return false;
    if (options.in_core_row_claims < 2 &&
        std::find(devices.begin(), devices.end(), w.device) != devices.end())
      return false;
    devices.push_back(w.device);
    if (!image_in_row_pieces(*image, *w.backend, options.row_pieces_from)) return false;
  }
  return true;
}

bool plan_claims_rows(const PipelineOptions& options, const Plan& plan) {
  const InCoreImage* image = options.in_core_image.get();
  return image && long_in_core(options, plan) && plan.units[0].slices == 1 &&
         image->bytes() <= plan.slot_bytes && !plan.streamed_staging();
}

// The first worker with a device of its own (the planner plans for it), else the first.
const StreamingBackend* plan_backend(const std::vector<Worker>& workers) {
  for (const Worker& w : workers)
    if (!w.backend->device_is_host()) return w.backend.get();
  return workers.front().backend.get();
}

// The plan: made here, or with several processes on rank 0 and broadcast. An interrupted census
// gives no plan (returns false).
bool make_shared_plan(const GraphSource& g, const PlanOptions& po, Communicator* comm, Plan* plan,
                      Census* census, const std::function<void(Plan*, Census*)>& refine) {
  const bool many = comm && comm->size() > 1;
  std::string bytes;
  bool ok = true;
  if (!many || comm->rank() == 0) {
    try {
      *plan = plan_graph(g, po, census);
      if (refine) refine(plan, census);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Interrupted || many) throw;
      ok = false;
    }
    if (many) bytes = plan_to_bytes(*plan);
  }
  if (many) {
    comm->broadcast(bytes);
    if (comm->rank() != 0) *plan = plan_from_bytes(bytes);
  }
  return ok;
}

// The units of this process: all of them, its static run, or (dynamic) none yet and a refill
// that fetches the next batch from the shared counter.
void share_units(const Plan& plan, Communicator* comm, const std::string& mode,
                 std::vector<std::size_t>* units, UnitSplit* split) {
  if (!comm || comm->size() <= 1) {
    for (std::size_t u = 0; u < plan.units.size(); ++u) units->push_back(u);
    return;
  }
  *split = mpi_split(plan, comm->size(), mode);
  if (split->dynamic) return;
  const auto r = static_cast<std::size_t>(comm->rank());
  for (std::size_t u = split->bounds[r]; u < split->bounds[r + 1]; ++u) units->push_back(u);
}

}  // namespace stream

UnitSplit mpi_split(const Plan& plan, int ranks, const std::string& mode) {
  if (mode != "auto" && mode != "static" && mode != "dynamic")
    throw Error(ErrorKind::Usage,
                "--rank-split: expected auto, static or dynamic, got '" + mode + "'");
  UnitSplit s;
  const std::size_t N = plan.units.size();
  double total = 0;
  for (const WorkUnit& w : plan.units) total += std::max(w.work, 1.0);
  // Contiguous runs closing once they reach their share of the work.
  auto cut = [&](std::size_t pieces) {
    std::vector<std::size_t> b{0};
    double acc = 0;
    for (std::size_t u = 0; u < N; ++u) {
      acc += std::max(plan.units[u].work, 1.0);
      if (b.size() < pieces && acc >= total * static_cast<double>(b.size()) / pieces)
        b.push_back(u + 1);
    }
    while (b.size() <= pieces) b.push_back(N);
    return b;
  };
  const auto R = static_cast<std::size_t>(std::max(1, ranks));
  if (mode != "dynamic") {  // (auto: static, see workers.hpp)
    s.bounds = cut(R);
    return s;
  }
  s.dynamic = true;
  s.bounds = cut(std::min<std::size_t>(N, 4 * R));
  return s;
}

}  // namespace tristream
