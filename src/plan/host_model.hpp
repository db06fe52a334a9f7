// plan/host_model.hpp — the host memory of a candidate plan (host_model.cpp): row offsets,
// staging (full slots or the streamed ring), the decompression window, per-vertex arrays and
// the vertex scheme's sets; what the host budget leaves for the chunk and block caches and the
// decompressed bytes those save.
#pragma once

#include <cstdint>
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

// Fits a finished candidate's staging and window to the host budget: a window of 2 x threads
// chunks, else of 2, else streamed staging (p = 1 only). Sets the plan's window, staging and
// host_bytes and returns the host bytes (over the budget when nothing fits).
std::uint64_t fit_host(const HostModel& hm, Plan& plan, const PlanOptions& o);
// Out-of-core plans (p > 1): the chunk and block caches from what the host budget leaves after
// `host` bytes, and the decompressed bytes they save.
void size_host_caches(const HostModel& hm, Plan& plan, const PlanOptions& o, eid_t m,
                      std::uint64_t host);

}  // namespace tristream::plan_internal
