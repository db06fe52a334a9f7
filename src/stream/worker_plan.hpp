// stream/worker_plan.hpp — the plan of a count over several workers (stream/workers.hpp): the
// workers' budgets together, the plan made once (on rank 0 and broadcast between processes) and,
// in core on several GPUs of one process, made again so that they share its units; whether the
// cut-off workers run beside it; and each process's units. Internal to count_with_workers.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "stream/communicator.hpp"
#include "stream/workers.hpp"
#include "tristream/pipeline.hpp"
#include "tristream/plan.hpp"

namespace tristream::stream {

// The budgets of the workers together: the smallest device budget of the workers with a device
// of their own, the host budget shared out among the workers that are not cut-off workers (a
// cut-off worker lives in what their plan leaves: admit_cutoff).
Budgets worker_budgets(const PipelineOptions& options, std::vector<Worker>& workers,
                       const Communicator* comm);

// The seconds the plain workers' kernels and uploads take on `units` (empty: the whole plan),
// estimated at the plan's rates (plan/cost.hpp: estimated_exposed_upload), shared among `plain`
// workers.
double plain_workers_seconds(const Plan& plan, const std::vector<std::size_t>& units,
                             std::size_t plain);

// How far the plan's estimate may fall short of the measured seconds before admit_cutoff turns
// away a cut-off worker that the first probe's rule would have let probe: the measured rates
// include the host's reading and building, which the plan's rates leave out.
constexpr double kAdmitSlack = 2.0;

// The CPU counter's rate that admit_cutoff assumes, in estimated work (wedges) per second per
// counting thread. Measured in core (the CPU backend alone, timing.pipeline): Kronecker 24 1.32e8
// and a hub graph of 1.34 B edges 1.18e8 on the H200 machine's 16 cores, Kronecker 21 and a hub
// graph of scale 21 7.4-7.6e7 on the 2-core machine (bench/RESULTS.md, "Several workers"); the
// highest, so that the estimate errs toward admitting.
constexpr double kCpuWorkPerThreadS = 1.3e8;

// The share of the work a cut-off CPU worker of `cpu_threads` threads would count if it and the
// plain workers ended together: est / (est + cpu), est the plain workers' estimated seconds
// (plain_workers_seconds) and cpu the CPU's alone at kCpuWorkPerThreadS.
double cutoff_share_estimate(const Plan& plan, const std::vector<std::size_t>& units,
                             std::size_t plain, unsigned cpu_threads);

// admit_cutoff's bounds; a 0 turns a test off.
struct CutoffGate {
  double min_probe_s = 0;  // PipelineOptions::cutoff_min_probe_s
  double min_share = 0;    // PipelineOptions::cutoff_min_share
  unsigned cpu_threads = 1;
};

// Whether the cut-off workers run: only when a probe could ever be taken (cutoff_may_help), the
// plain workers' estimated seconds (plain_workers_seconds) reach gate.min_probe_s / kAdmitSlack
// (below, the first probe's rule refuses every unit: UnitQueue::set_min_probe_seconds), the CPU's
// estimated share of the work (cutoff_share_estimate) reaches gate.min_share (below, what it
// could take does not pay for what admitting it costs the others), and the plan leaves room
// beside the plain workers' slots and caches, within the host budget they share, for a cut-off
// worker's (it keeps slots and caches of its own, never more than the plan's figures). The plain
// workers' plan (`plain_plan`, a copy of the plan) then gives up that room: its host budget,
// which sizes their preload's spare room, is smaller by it. Not admitted, the plain workers run
// as they would without them (one alone: its plan directly). *why (optional): "admitted", or
// "not admitted: " and the reason (PipelineStats::cutoff).
bool admit_cutoff(const Plan& plan, const std::vector<std::size_t>& units, std::size_t plain,
                  std::size_t cutoffs, const CutoffGate& gate, Plan* plain_plan,
                  std::string* why = nullptr);

// Several GPUs (gpus of them: of one process, or one per rank, split_gpus): an in-core plan whose
// kernel the plan's rates estimate at options.split_in_core_s or more is made again at 1/S of its
// device bytes, S = split_shares(gpus), so that the GPUs share its units (more GPUs, smaller
// units: the last ones end closer together); in core one GPU counts the one unit
// (count_with_workers), each slice of it costing every GPU the whole graph's upload.
// split_in_core_options: whether `plan` (made with `po`) is such a plan (at least two GPUs, the
// split not turned off, options.in_core_gpu_slices false, the parts not forced, one unit of p = 1,
// its kernel long enough), and then the split plan's options (*shared: po at 1/S of the plan's
// device bytes).
// S is the GPUs, and at least kSplitShares: at 1/2 of Kronecker 29's device bytes two H200s got 78
// units, one GPU 7-8 of them and 10.5 s of kernel, the other 5.9 s (13.9 s in all); at 1/4, 300
// units, 11.9-12.2 s (Kronecker 28: 5.0-5.1 s either way; bench/RESULTS.md 2026-11-30).
constexpr std::size_t kSplitShares = 4;
inline std::size_t split_shares(std::size_t gpus) {
  return gpus < kSplitShares ? kSplitShares : gpus;
}
bool split_in_core_options(const PipelineOptions& options, const PlanOptions& po, std::size_t gpus,
                           const Plan& plan, PlanOptions* shared);
// split_in_core replaces *plan and *census by the split plan: the one made ahead
// (options.ready_split_plan, when it serves the split's options; *ahead_s then adds its seconds),
// else made now. Keeps the in-core plan (returns false) when split_in_core_options says no, or
// the split plan does not fit or is in core again.
bool split_in_core(const GraphSource& g, const PipelineOptions& options, const PlanOptions& po,
                   std::size_t gpus, Plan* plan, Census* census, double* ahead_s);

// Several GPUs sharing an in-core plan by claiming its rows (stream/row_claims.hpp) instead of
// the split above: each GPU streams the whole in-core image in row pieces, as one GPU does, and
// counts the runs of rows it claims; nothing is registered and the one unit's kernel paths stay.
// workers_claim_rows: whether this process's workers can (options.in_core_row_claims on, the
// image of the whole graph unregistered, every worker a GPU — no CPU or cut-off worker: they count
// slices by middle vertices — on a device of its own, also among the ranks of its machine
// (in_core_row_claims 2: or shared), streaming the image in row pieces: image_in_row_pieces), and
// with several workers or processes. Every process must agree (count_with_workers asks them all)
// before plan_claims_rows, which each process then answers alike from the same plan: the split's
// plan (neither turned off nor slices asked for, one in-core unit of p = 1 whose kernel the plan's
// rates estimate at split_in_core_s or more), within its slot and not streamed by the plan.
bool workers_claim_rows(const GraphSource& g, const PipelineOptions& options,
                        const std::vector<Worker>& workers, const Communicator* comm);
bool plan_claims_rows(const PipelineOptions& options, const Plan& plan);

// The first worker with a device of its own (the planner plans for it), else the first.
const StreamingBackend* plan_backend(const std::vector<Worker>& workers);

// The plan: made here, or with several processes on rank 0 and broadcast; `refine` (optional)
// changes it where it is made, before the broadcast (the in-core split). An interrupted census
// gives no plan (returns false).
bool make_shared_plan(const GraphSource& g, const PlanOptions& po, Communicator* comm, Plan* plan,
                      Census* census, const std::function<void(Plan*, Census*)>& refine = nullptr);

// The GPUs that share a split in-core plan's units: this process's distinct GPUs, and with
// several processes those of every rank (each rank the same count), less the ranks that share a
// GPU (ranks_per_gpu). 0 or 1: no split.
std::size_t split_gpus(std::size_t process_gpus, const Communicator* comm);

// The units of this process: all of them, its static run, or (dynamic) none yet and a refill
// that fetches the next batch from the shared counter.
void share_units(const Plan& plan, Communicator* comm, const std::string& mode,
                 std::vector<std::size_t>* units, UnitSplit* split);

}  // namespace tristream::stream
