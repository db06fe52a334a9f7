// cuda/warm_up.cu — warm_up_kernels (launch.hpp): a count of K4 through the one count entry with
// every kernel family the count may use, and a block cut from B (pair's A), so that the
// first-launch costs (lazy module loading, the stream-ordered pool's first allocation, occupancy
// queries) are paid before the timed work.
// The streaming backend calls it while it is made, on the thread that overlaps the file's
// opening (src/api/count.cpp).
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "tristream/error.hpp"

namespace tristream::cuda {

void warm_up_kernels(const std::string& kernel, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  // 1. K4 oriented (4 triangles), twice: the same views (in core) and distinct ones (a unit's
  //    blocks), on the device.
  const eid_t off[5] = {0, 3, 5, 6, 6};
  const vid_t cols[6] = {1, 2, 3, 2, 3, 3};
  DeviceBuffer<eid_t> d_off(10);
  DeviceBuffer<vid_t> d_cols(12);
  DeviceBuffer<unsigned long long> d_total(1);
  PinnedBuffer<unsigned long long> h_total(1);
  for (int copy = 0; copy < 2; ++copy) {
    TS_CUDA_CHECK(
        cudaMemcpyAsync(d_off.get() + 5 * copy, off, sizeof off, cudaMemcpyHostToDevice, s));
    TS_CUDA_CHECK(
        cudaMemcpyAsync(d_cols.get() + 6 * copy, cols, sizeof cols, cudaMemcpyHostToDevice, s));
  }
  const CsrView one{4, d_off.get(), d_cols.get(), 4};
  const CsrView two{4, d_off.get() + 5, d_cols.get() + 6, 4};
  // 2. Every family `auto` may choose, or the one asked for; each count must be 4.
  std::vector<std::string> names = {kernel};
  // (trust:lite and trust:in launch kernels of their own: the window kernel, the transpose and
  // its scan; left out, a count that takes them paid their first launch, 0.1-0.4 ms)
  if (kernel == "auto" || kernel.empty())
    names = {"lstc", "trust", "trust:lite", "trust:in", "wedge", "gui", "bitmap"};
  for (const std::string& name : names)
    for (int distinct = 0; distinct < 2; ++distinct) {
      DeviceCount job;
      job.A = one;
      job.B = distinct ? two : one;
      job.C = distinct ? two : one;
      job.host_offsets_A = off;
      h_total[0] = 0;
      enqueue_device_count(job, name, d_total.get(), h_total.get(), s);
      TS_CUDA_CHECK(cudaStreamSynchronize(s));
      TS_CHECK(h_total[0] == 4, "kernel warm-up (" + name + "): K4 counted " +
                                    std::to_string(h_total[0]) + " triangles, not 4");
    }
  // 3. The cut of a block from B (pair's A; SlotBlock::cut): K4's columns in [2, 4), 5 of them.
  DeviceBuffer<eid_t> cut_off(5);
  DeviceBuffer<vid_t> cut_cols(5);
  enqueue_cut_rows(4, d_off.get(), d_cols.get(), 2, 4, cut_off.get(), cut_cols.get(), 5, s);
  eid_t got[5] = {};
  TS_CUDA_CHECK(cudaMemcpyAsync(got, cut_off.get(), sizeof got, cudaMemcpyDeviceToHost, s));
  TS_CUDA_CHECK(cudaStreamSynchronize(s));
  TS_CHECK(got[0] == 0 && got[1] == 2 && got[2] == 4 && got[3] == 5 && got[4] == 5,
           "kernel warm-up: the cut of K4's columns 2 and 3 went wrong");
}

}  // namespace tristream::cuda
