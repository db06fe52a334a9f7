// plan/host_model.hpp — the host memory of a candidate plan (host_model.cpp): row offsets,
// staging (full slots or the streamed ring), the decompression window, per-vertex arrays and
// the vertex scheme's sets; what the host budget leaves for the chunk and block caches and the
// decompressed bytes those save.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

struct HostModel {
  std::uint64_t n = 0;
  std::uint64_t max_chunk_raw = 0;  // the largest chunk, decompressed
  unsigned threads = 1;
};
HostModel host_model(std::uint64_t n, const std::vector<tcsr::ChunkInfo>& chunks,
                     const PlanOptions& o);

// The census's fine buckets a host budget allows: under a budget of a few MiB the range
// histograms (two of F x F counts at their peak) take at most an eighth of it (F = 1024 takes
// 16 MiB, more than a small graph's whole count); no cap (UINT32_MAX) without a budget or below
// 4 MiB (the planner's tests of tiny graphs, far below what a process needs anyway).
std::uint32_t census_fine_cap(std::uint64_t host_budget);

// Fits a finished candidate's staging and window to the host budget: a window of 2 x threads
// chunks, else of 2, else streamed staging (p = 1 only), else a window of one chunk; beside them
// the run's record of its units (their spans; under budgets of 4 MiB and more). Sets the plan's
// window, staging and host_bytes and returns the host bytes (over the budget when nothing fits).
std::uint64_t fit_host(const HostModel& hm, Plan& plan, const PlanOptions& o);
// Out-of-core plans (p > 1): the chunk and block caches from what the host budget leaves after
// `host` bytes, and the decompressed bytes they save.
void size_host_caches(const HostModel& hm, Plan& plan, const PlanOptions& o, eid_t m,
                      std::uint64_t host);

}  // namespace tristream::plan_internal

namespace tristream {

// The host memory of a count beside the plan's own (staging, window, caches, per-vertex counts:
// Plan::host_bytes), part by part, in the order the count needs them. A count's host budget
// covers the whole process: these parts plus the plan.
struct CountHost {
  std::uint64_t runtime = 0;  // resident before planning: program, libraries, row offsets, index
  std::uint64_t offsets = 0;  // the row offsets (inside runtime; the plan counts them too)
  std::uint64_t threads = 0;  // per worker thread: its stack, a compressed frame, a zstd context
  std::uint64_t census = 0;   // the planner's census and candidates at their peak
  std::uint64_t degrees = 0;  // the degree pass after the count: n degrees, a chunk per thread
  std::uint64_t figures = 0;  // per-vertex arrays put in id order, the clustering (0 without)
  std::uint64_t window = 0;   // the least the plan decompresses at once: one chunk
  // What the plan may use: the budget less the runtime (outside the offsets) and the threads.
  std::uint64_t plan_budget(std::uint64_t budget) const;
  // What the degree pass after the count may use (0 = no limit): the budget less the runtime,
  // the threads and the per-vertex counts it is held beside.
  std::uint64_t degrees_budget(std::uint64_t budget) const;
  std::uint64_t kept_counts = 0;  // the per-vertex counts held through the degree pass
  // What the per-vertex arrays may use (0 = no limit): the budget less the runtime and threads.
  std::uint64_t figures_budget(std::uint64_t budget) const;
  // The smallest budget any count of this graph needs (every part but the plan's search), and
  // the part that sets it.
  std::uint64_t floor(std::string* part) const;
};

// The parts for a graph of n vertices and these chunks, counted on `threads` threads, with the
// process holding `resident` bytes now (host_resident_bytes, common/host_peak.hpp).
// per_vertex: the per-vertex arrays are kept; names: the graph has vertex names; concurrent
// degrees: the degree pass runs beside the count (a GPU count) instead of after it.
// budget: the command's host budget (the census's fine buckets shrink under it; 0 = none).
// declared: the vertices the source declares (count_isolated; 0 = none): the per-vertex arrays
// then grow to max(n, declared) entries (a Matrix Market file's ids lie in 1..declared).
CountHost count_host(std::uint64_t n, const std::vector<tcsr::ChunkInfo>& chunks, unsigned threads,
                     std::uint64_t resident, bool per_vertex, bool clustering, bool names,
                     std::uint64_t budget, std::uint64_t declared = 0);

// The bytes of the per-vertex arrays of n vertices put in id order through a 32-bit order: the
// ids, counts and degrees (8 bytes each), the order and a bit per vertex. Below that the three
// are sorted in place (24 bytes per vertex, slower).
std::uint64_t per_vertex_order_bytes(std::uint64_t n);

// Throws Error(Usage) when `budget` (non-zero) is below the floor: "per-vertex arrays need
// 30.0 MiB; 24.0 MiB given", with the smallest budget that would work.
void check_host_floor(const CountHost& h, std::uint64_t budget);

}  // namespace tristream
