// cuda/launch_util.cu — launch helpers shared by the kernel families: persistent grid sizes,
// row binning by degree, and fork/join of streams for concurrently launched kernels.
#include <algorithm>

#include "check.hpp"
#include "kernels.hpp"

namespace tristream::cuda::detail {

int resident_blocks(const void* kernel, int block, std::size_t smem, const LaunchEnv& env) {
  int per_sm = 0;
  TS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
  return std::max(1, per_sm) * env.sm_count;
}

namespace {

constexpr int kBinBlock = 256;
constexpr int kMaxBins = 4;

struct Bounds {
  std::uint64_t b[kMaxBins];
};

__global__ void __launch_bounds__(kBinBlock)
    bin_rows_kernel(Task t, int nbins, Bounds bounds, vid_t* lists, ull* counts, int a_shift) {
  __shared__ unsigned s_count[kMaxBins];
  __shared__ ull s_base[kMaxBins];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * kBinBlock;
  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * kBinBlock; first < t.rows;
       first += stride) {
    if (threadIdx.x < kMaxBins) s_count[threadIdx.x] = 0;
    __syncthreads();
    const std::uint64_t u = first + threadIdx.x;
    int bin = -1;
    unsigned slot = 0;
    if (u < t.rows) {
      const eid_t da = t.A.off[u + 1] - t.A.off[u];
      const eid_t db = t.B.off[u + 1] - t.B.off[u];
      if (da > 0 && db > 0) {
        const eid_t key = max(db, da >> a_shift);
        bin = 0;
        while (bin < nbins - 1 && key > bounds.b[bin]) ++bin;
        slot = atomicAdd(&s_count[bin], 1u);
      }
    }
    __syncthreads();
    if (threadIdx.x < nbins)
      s_base[threadIdx.x] = atomicAdd(counts + threadIdx.x, s_count[threadIdx.x]);
    __syncthreads();
    if (bin >= 0) lists[bin * t.rows + s_base[bin] + slot] = static_cast<vid_t>(u);
    __syncthreads();
  }
}

}  // namespace

void bin_rows(const Task& t, int nbins, const std::uint64_t* bounds, vid_t* lists, ull* counts,
              const LaunchEnv& env, int a_shift) {
  TS_CHECK(nbins >= 1 && nbins <= kMaxBins, "bin_rows: 1 to 4 bins");
  Bounds b{};
  for (int i = 0; i < nbins; ++i) b.b[i] = bounds[i];
  TS_CUDA_CHECK(cudaMemsetAsync(counts, 0, nbins * sizeof(ull), env.stream));
  const std::uint64_t blocks_needed = (t.rows + kBinBlock - 1) / kBinBlock;
  const int grid = static_cast<int>(
      std::min<std::uint64_t>(blocks_needed, static_cast<std::uint64_t>(env.sm_count) * 8));
  bin_rows_kernel<<<grid, kBinBlock, 0, env.stream>>>(t, nbins, b, lists, counts, a_shift);
  TS_CUDA_CHECK_LAUNCH();
}

Fork::Fork(cudaStream_t main, int n) : main_(main), n_(n) {
  TS_CHECK(n >= 1 && n <= 4, "Fork: 1 to 4 streams");
  for (int i = 0; i < n_; ++i)
    TS_CUDA_CHECK(cudaEventCreateWithFlags(&ev_[i], cudaEventDisableTiming));
  TS_CUDA_CHECK(cudaEventRecord(ev_[0], main_));
  for (int i = 1; i < n_; ++i) {
    TS_CUDA_CHECK(cudaStreamCreateWithFlags(&side_[i - 1], cudaStreamNonBlocking));
    TS_CUDA_CHECK(cudaStreamWaitEvent(side_[i - 1], ev_[0], 0));
  }
}

void Fork::join() {
  if (joined_) return;
  joined_ = true;
  for (int i = 1; i < n_; ++i) {
    TS_CUDA_CHECK(cudaEventRecord(ev_[i], side_[i - 1]));
    TS_CUDA_CHECK(cudaStreamWaitEvent(main_, ev_[i], 0));
  }
}

Fork::~Fork() {
  if (!joined_) {
    // An exception left the fork open: make the main stream wait anyway (no throwing here).
    for (int i = 1; i < n_; ++i) {
      if (!side_[i - 1] || !ev_[i]) continue;
      TS_CUDA_CHECK_NOTHROW(cudaEventRecord(ev_[i], side_[i - 1]));
      TS_CUDA_CHECK_NOTHROW(cudaStreamWaitEvent(main_, ev_[i], 0));
    }
  }
  for (int i = 1; i < n_; ++i)
    if (side_[i - 1]) TS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(side_[i - 1]));
  for (int i = 0; i < n_; ++i)
    if (ev_[i]) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(ev_[i]));
}

}  // namespace tristream::cuda::detail
