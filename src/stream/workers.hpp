// stream/workers.hpp — a count over several workers: every selected GPU (one CUDA backend per
// device), optionally the CPU beside them (--hybrid, a cut-off worker: stream/unit_queue.hpp),
// or several CPU workers; and, launched by mpirun, over several processes (a Communicator).
//
// The plan is made once, for the smallest worker's device budget and the host budget shared
// out among the workers (each worker's driver keeps its own slots, chunk and block caches);
// with several processes rank 0 makes it and broadcasts it (plan_wire.hpp). The units are
// handed out from a shared queue (each worker runs today's driver, run_plan, on its own thread
// with a UnitFeed); between processes they are split statically into contiguous runs of about
// equal estimated work, or handed out in batches through a shared counter when the planner's
// estimate says that finishes sooner (mpi_split). Triangles and per-vertex counts are summed
// exactly, per worker and then over the ranks onto rank 0. With one worker and one process this
// is count_with_backend itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stream/communicator.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

struct Worker {
  std::unique_ptr<StreamingBackend> backend;
  bool cutoff = false;  // takes a unit only when it finishes it before the others (the CPU)
  int device = -1;      // the CUDA device of a GPU worker (-1: a worker on the host)
  // Its threads run in the idle scheduling class (--hybrid's CPU: it counts only on cores the
  // threads that feed the GPUs leave idle).
  bool idle_class = false;
};

// --devices: "all" (every CUDA device) or a comma-separated list of ordinals ("0,1,3"; an
// ordinal may repeat: two workers on one device). Throws Error(Usage) on anything else.
std::vector<int> parse_devices(const std::string& text);

// The most CPU workers one count takes (the command line's --workers, CountOptions::cpu_workers).
constexpr unsigned kMaxCpuWorkers = 64;

// The workers of a count: one CUDA backend per device (counter options as given, the device
// replaced; the devices started at once, one thread each), `cpu_workers` CPU backends, and with
// `hybrid` one CPU cut-off worker in the idle scheduling class (its counting threads enter it as
// they start). Empty devices and cpu_workers 0: the backend options.backend names (one worker).
// Workers that share a device share its measured free memory (the device budget without
// --gpu-memory).
std::vector<Worker> make_workers(const PipelineOptions& options, const std::vector<int>& devices,
                                 unsigned cpu_workers, bool hybrid);

// The most ranks of this machine that share one GPU (they take GPUs local rank mod GPUs): 1 for
// one process, without a GPU, or with a GPU per rank.
std::uint64_t ranks_per_gpu(const Communicator* comm);

// How the processes share the plan's units (mpi_split): static runs or dynamic batches.
struct UnitSplit {
  bool dynamic = false;
  // static: rank r takes units [bounds[r], bounds[r + 1]) of the plan's order; dynamic: batch b
  // is units [bounds[b], bounds[b + 1]).
  std::vector<std::size_t> bounds;
};
// Static: `ranks` contiguous runs of about equal estimated work; dynamic: batches of about
// total / (4 ranks) work each (a rank's host block store then preloads every row part when the
// plan's block cache holds them all, HostBlockStore::would_preload, otherwise none: it would read
// every row part). `auto` is static: the runs are within one unit of an even share of the
// estimated work by construction; what the dynamic split balances instead, the estimate's error
// (1.5-2x between units' kernel times), cost less than its full preload on two H200s (Kronecker
// 29 at 1/4: 18.6-22.2 s against 17.4 s static; docs/scale-out.md).
// `mode`: "auto", or "static" / "dynamic" to force one; anything else throws Error(Usage).
UnitSplit mpi_split(const Plan& plan, int ranks, const std::string& mode = "auto");

// The count over the workers (and the processes of `comm`, when not null and of size > 1).
// Workers must not be empty. The host budget is shared out among the workers that are not
// cut-off workers; a cut-off worker runs only when the plan has a unit small enough for its
// probe (stream/unit_queue.hpp: cutoff_may_help) and the plan leaves room in that budget for
// its slots and caches. With one worker left running and one process, that worker runs the
// plan alone (run_plan without a queue: exactly the single-worker count). With several processes
// every rank gets the reduced triangles; rank 0 the per-vertex counts and the merged statistics.
// Re-plans on device out-of-memory as count_with_backend does (one process only; with several, an
// error ends every rank).
CountReport count_with_workers(const GraphSource& g, const PipelineOptions& options,
                               std::vector<Worker>& workers, Communicator* comm = nullptr);

}  // namespace tristream
