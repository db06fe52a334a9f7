// cuda/kernels.hpp — internal interface between the dispatcher (launch.cu) and the kernel files
// (kernel_*.cu). Each launch_* enqueues one kernel family for a Task on env.stream; scratch memory
// is stream-ordered (cudaMallocAsync) and freed on the same stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernel_common.cuh"

namespace tristream::cuda::detail {

struct LaunchEnv {
  cudaStream_t stream = nullptr;
  int device = 0;
  int sm_count = 1;
  bool same_views = false;  // A, B and C are one view (the in-core case): wedges need only i < j
  // same_views, or A = B rows of the oriented C (HostViews::rows_of_oriented_c): trust:in's
  // probes of B(u) start after v, trust:lite skips the list of each row's largest neighbour
  bool after_v = false;
  // A is cut from B (pair's A = G_ij from B = R_i: A(u) = B(u) with ids in [a_cut_lo, ...) less
  // a_cut_lo, HostViews::a_cut): trust:in finds v's place in B(u) from the cut's start, once per
  // row, and probes only the part of B(u) after v, as in core
  bool a_cut_of_b = false;
  std::uint64_t a_cut_lo = 0;
  bool per_vertex = false;
  std::string variant;  // tuning suffix of the kernel name ("" = defaults), see launch.cu
  // Edges of A when the caller knows them (host_offsets_A given), else ~0: kernels that must size
  // per-edge scratch then read the count from the device (a synchronisation).
  std::uint64_t a_edges = ~0ull;
};

// The light rows of `trust` (kernel_trust_lite.cu): rows u with 0 < |A(u)|, |B(u)| <= kLiteMax,
// one warp per window of whole rows; `counter` is one device word of scratch (zeroed here).
// c_off32: C's offsets narrowed to 32 bits (bin_rows' narrow_a in core), or null: C's own.
constexpr std::uint64_t kLiteMax = 32;
void launch_trust_lite(const Task& t, const LaunchEnv& env, cudaStream_t stream, ull* counter,
                       const std::uint32_t* c_off32);
// Whether `trust:lite` reads C's offsets narrowed to 32 bits: in core (one view), with A's edges
// known and below 2^32.
bool lite_narrows(const Task& t, const LaunchEnv& env);

void launch_lstc(const Task& t, const LaunchEnv& env);
void launch_trust(const Task& t, const LaunchEnv& env);
void launch_wedge(const Task& t, const LaunchEnv& env);
void launch_gui(const Task& t, const LaunchEnv& env);
void launch_bitmap(const Task& t, const LaunchEnv& env);

// Shared launch helpers (launch_util.cu).

// Persistent grid size for `kernel` with `block` threads and `smem` dynamic shared bytes:
// resident blocks per SM times SMs.
int resident_blocks(const void* kernel, int block, std::size_t smem, const LaunchEnv& env);

// Raises the release threshold of the device's default memory pool (once per device), so that
// kernel scratch from cudaMallocAsync is not unmapped and mapped again between launches.
void keep_scratch_pool(int device);

// Row bins: rows u with |A(u)| > 0 and |B(u)| > 0, keyed by max(|B(u)|, |A(u)| >> a_shift),
// split by ascending inclusive upper bounds. lists: nbins * rows entries (bin b at b * rows), in
// no particular order within a bin; counts: nbins device counters (zeroed here). Rows of bins
// below first_bin are dropped (counted nowhere). With narrow_a, also writes A's offsets minus
// A.off[0] as 32 bits to narrow_a[0, rows] (the caller knows A has fewer than 2^32 edges).
void bin_rows(const Task& t, int nbins, const std::uint64_t* bounds, vid_t* lists, ull* counts,
              const LaunchEnv& env, int a_shift = 63, int first_bin = 0,
              std::uint32_t* narrow_a = nullptr);

// Runs work on `n` streams forked from env.stream and joined back into it. Stream 0 is
// env.stream itself. join() must be called before the scratch used by the forks is freed. The
// side streams and events come from a per-device pool and are reused by later forks.
struct ForkSet;
class Fork {
 public:
  Fork(cudaStream_t main, int n);
  ~Fork();
  Fork(const Fork&) = delete;
  Fork& operator=(const Fork&) = delete;
  cudaStream_t stream(int i) const;
  void join();

 private:
  cudaStream_t main_;
  int n_;
  ForkSet* set_ = nullptr;  // pooled side streams and events (launch_util.cu)
  bool joined_ = false;
};

}  // namespace tristream::cuda::detail
