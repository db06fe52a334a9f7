// cuda/testing/tools.hpp — GPU helpers for the benchmark and the tests (library
// tristream_cuda_testing, linked by tests/cuda/ and bench/kernels_bench only; never part of the
// shipped library), without CUDA types. In a build without CUDA (testing/stub.cpp) they throw
// Error(Usage).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tristream/csr.hpp"
#include "tristream/packed_rows.hpp"

namespace tristream::cuda {

struct KernelRun {
  std::string kernel;  // as asked
  std::string chosen;  // what `auto` picked (== kernel otherwise)
  count_t triangles = 0;
  std::vector<double> ms;  // timed runs (CUDA events around enqueue_count)
  double median_ms = 0;
};

// Uploads the in-core graph g to device `device` once; for each kernel, one warm-up run, then
// `reps` runs timed by CUDA events around enqueue_count (scratch allocation included), and the
// median. A kernel whose warm-up takes longer than max_ms is timed by its warm-up alone. With
// `profile`, each kernel runs once after its warm-up, between cudaProfilerStart and
// cudaProfilerStop (reps ignored): a profiler started with profiling off (Nsight Compute
// --profile-from-start off) sees exactly one count per kernel.
std::vector<KernelRun> time_kernels(const CsrView& g, const std::vector<std::string>& kernels,
                                    int reps, int device, double max_ms, bool profile = false);

// orient_edge_list (csr.hpp) on the GPU, followed by compaction: vertices without edges are
// dropped (they rank first; the others keep their order), so n becomes the number of vertices
// with at least one edge. perm[new id] = input id. For benchmark-sized graphs.
OrientedGraph orient_on_device(std::uint64_t n, const std::vector<std::pair<vid_t, vid_t>>& edges,
                               int device);

// A packed block's dense offsets (rows + 1) expanded on device `device` by the pipeline's
// kernel (enqueue_expand_packed): uploads the packed arrays, expands, downloads. For the tests.
std::vector<eid_t> expand_packed_on_device(const PackedRows& packed, std::uint64_t rows,
                                           int device);

// A block cut from B (host view, offsets from 0) on device `device` by the pipeline's kernel
// (enqueue_cut_rows: B's columns in [lo, hi), ids less lo, room for cap columns): uploads B, cuts,
// downloads the offsets (B.rows + 1) and the first min(cap, edges) columns. For the tests.
std::pair<std::vector<eid_t>, std::vector<vid_t>> cut_rows_on_device(const CsrView& B,
                                                                     std::uint64_t lo,
                                                                     std::uint64_t hi,
                                                                     std::uint64_t cap, int device);

// count(A, B, C) of host views (offsets from 0) through the one count entry
// (enqueue_device_count) on device `device`, as the streaming backend runs a sliced unit: C's
// rows outside [v_begin, v_end) count as empty (v_begin <= v_end <= C.rows). Views given twice
// are uploaded once (the same device view, as in core).
count_t count_slice_on_device(const CsrView& A, const CsrView& B, const CsrView& C,
                              std::uint64_t v_begin, std::uint64_t v_end, const std::string& kernel,
                              int device);

// Allocates `bytes` of device memory on `device` and frees it: with cudaMalloc as the slots
// are, or with stream_ordered through cudaMallocAsync on a stream of its own as kernel scratch
// is. For the tests of device out-of-memory (cuda/check.hpp): a size the device cannot give
// throws DeviceOutOfMemory.
void allocate_on_device(std::uint64_t bytes, int device, bool stream_ordered);

// Enqueues a kernel that spins for kernel_seconds (the device's global timer) on device `device`
// and waits for it as the pipeline does (cuda/wait.hpp: interruptible). Returns whether the wait
// ended by the interrupt flag (Error(Interrupted)) and the seconds it waited; then lets the
// kernel finish (an uninterruptible synchronisation) before returning.
struct DeviceWait {
  bool interrupted = false;
  double wait_s = 0;
};
DeviceWait wait_for_spinning_kernel(double kernel_seconds, int device);

// Throws what TS_CUDA_CHECK (cuda/check.hpp) throws for a call `call` that returned `status` (a
// cudaError_t). Needs no device.
[[noreturn]] void throw_cuda_status(int status, const char* call);

}  // namespace tristream::cuda
