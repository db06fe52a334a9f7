// cuda/device_count.cu — enqueue_device_count (launch.hpp): the one entry by which a count runs
// on the device, shared by the CUDA Counter (cuda_counter.cpp) and the streaming backend
// (streaming_backend.cu), so that the gpu tests of the Counter run the shipping path.
//
// Steps, all on one stream: zero the device total; for a slice, C's window offsets in
// stream-ordered scratch (freed in stream order after the count's kernels); the count through
// enqueue_count (kernel dispatch, launch.cu); the total copied to the caller's host word. A
// SIGINT/SIGTERM (common/interrupt.hpp) received before the launch throws Error(Interrupted)
// instead, and so does one received between the steps: before the count's launches (here and in
// enqueue_count, after `auto` has sampled the host copies) and in the one blocking read-back a
// kernel family makes (`trust:in` without A's edge count; an interruptible wait, wait.hpp).
// Kernels once enqueued run to their end; the caller's wait (wait.hpp) stops waiting for them,
// and its release of the memory drains them.
#include "check.hpp"
#include "common/interrupt.hpp"
#include "launch.hpp"
#include "memory.hpp"

namespace tristream::cuda {

void enqueue_device_count(const DeviceCount& job, const std::string& kernel,
                          unsigned long long* d_total, unsigned long long* h_total, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  throw_if_interrupted();  // nothing enqueued yet
  // 1. The total starts at 0 (enqueue_count adds into it).
  TS_CUDA_CHECK(cudaMemsetAsync(d_total, 0, sizeof(unsigned long long), s));
  {
    // 2. A slice: C's offsets with the rows outside [v_begin, v_end) empty.
    CsrView C = job.C;
    AsyncBuffer<eid_t> window(job.sliced ? C.rows + 1 : 0, s);
    if (job.sliced) {
      enqueue_window_offsets(C.offsets, C.rows, job.host.v_begin, job.host.v_end, window.get(), s);
      C.offsets = window.get();
    }
    // 3. The count, with the host copies for launch planning and `auto`.
    throw_if_interrupted();
    enqueue_count(job.A, job.B, C, kernel, d_total, job.per_vertex, s, job.host_offsets_A,
                  job.host);
  }  // the window's scratch is freed here, in stream order after the count's kernels
  // 4. The total back to the host.
  TS_CUDA_CHECK(
      cudaMemcpyAsync(h_total, d_total, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
}

}  // namespace tristream::cuda
