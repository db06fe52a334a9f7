// tristream/stats.hpp — what a streamed count measured (src/stats.cpp).
//
// Stages: read (compressed bytes taken from the mapping), decompress (zstd frames; its busy time
// includes the page faults of the read), transform (block CSRs built in a staging slot), upload
// (host -> device copies; zero on the CPU backend) and kernel (the count itself).
// Busy time is the sum of the stage's spans; wall time the whole streamed count.
// exposed_transfer_s: wall time in which no kernel ran (preparation and copies not hidden).
// overlap: the share of upload time that ran while a kernel ran (1 when nothing was uploaded).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tristream {

struct StageStats {
  double busy_s = 0;
  std::uint64_t bytes = 0;
  std::uint64_t spans = 0;
};

struct TraceSpan {
  std::string stage;  // read|decompress|transform|upload|kernel|wait
  std::int64_t unit = -1;
  double start_s = 0, end_s = 0;  // seconds since the start of the run
  std::uint64_t bytes = 0;
  int worker = 0;  // several workers (stream/workers.hpp): the worker that ran it
};

// One worker of a count with several (stream/workers.hpp): a GPU or the CPU.
struct WorkerStats {
  std::string backend, device;  // the backend's name and description
  std::uint64_t units = 0;      // units it counted
  double busy_s = 0;            // its kernel busy time (merged spans: the time it counted)
  double wall_s = 0;            // from its start to its last unit collected
  std::uint64_t upload_bytes = 0, decompress_bytes = 0;
  double work = 0;  // the planner's estimated work of its units (wedges)
};

struct PipelineStats {
  std::string backend, scheme;
  std::uint32_t parts = 1;
  std::uint64_t units = 0;          // units counted
  std::uint64_t units_skipped = 0;  // units pruned (an empty block: no triangle possible)
  std::uint64_t replans = 0;        // device out-of-memory re-plans
  std::uint64_t reused_bytes = 0;   // bytes not uploaded thanks to the slot's cached A block
  // bytes not uploaded because the device block cache held the block (a cached A included)
  std::uint64_t device_cache_hit_bytes = 0;
  // the most decompressed chunk bytes the chunk cache held at once (the background preload's
  // batch being built plus the next one, decompressed ahead, included)
  std::uint64_t chunk_cache_peak_bytes = 0;
  StageStats read, decompress, transform, upload, kernel;
  double census_s = 0, plan_s = 0;
  // The census and planner seconds spent before the run was called (a plan made while the
  // device started, PipelineOptions::ready_plan); census_s and plan_s are then what it waited.
  double planned_ahead_s = 0;
  // After wall_s: giving the run's memory back (the backend's release, the host blocks'
  // unregistration and freeing).
  double release_s = 0;
  double wall_s = 0;  // the streamed count (after planning)
  double exposed_transfer_s = 0;
  double overlap = 1;
  std::uint64_t device_budget = 0, host_budget = 0, slot_bytes = 0;
  std::vector<TraceSpan> spans;  // kept for --trace
  // Several workers: one entry each (empty for a single worker); the trace then shows one
  // process (lane group) per worker.
  std::vector<WorkerStats> workers;
  // MPI ranks (src/mpi/): the ranks that counted (1 = one process).
  int ranks = 1;
  std::string rank_split;  // with several ranks: "static" or "dynamic"
  // With a cut-off worker (--hybrid's CPU): "admitted", or "not admitted: " and why
  // (stream/worker_plan.hpp: admit_cutoff); empty without one.
  std::string cutoff;

  // Computes exposed_transfer_s and overlap from the spans (kernel and upload) and wall_s.
  void finish_from_spans();
  std::string to_json() const;  // one JSON object (without the spans)
  std::string summary() const;  // one line
  // Writes a Chrome trace (JSON, Perfetto-compatible): one span per unit per stage.
  void write_trace(const std::string& path) const;
  // The same trace on an open stream (the CLI's atomic output); the caller checks for errors.
  void write_trace(std::FILE* f) const;
};

}  // namespace tristream
