// cuda/launch_util.cu — launch helpers shared by the kernel families: persistent grid sizes,
// row binning by degree, and fork/join of streams for concurrently launched kernels.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "check.hpp"
#include "kernels.hpp"

namespace tristream::cuda::detail {

int resident_blocks(const void* kernel, int block, std::size_t smem, const LaunchEnv& env) {
  // Cached per (kernel, block, smem, device): a work unit of the streaming pipeline launches the
  // same kernels hundreds of times, and the occupancy query is host time the GPU waits for.
  struct Key {
    const void* kernel;
    int block;
    std::size_t smem;
    int device;
    bool operator<(const Key& o) const {
      return std::tie(kernel, block, smem, device) < std::tie(o.kernel, o.block, o.smem, o.device);
    }
  };
  static std::mutex mutex;
  static std::map<Key, int> cache;
  const Key key{kernel, block, smem, env.device};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second * env.sm_count;
  }
  int per_sm = 0;
  TS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
  per_sm = std::max(1, per_sm);
  std::lock_guard<std::mutex> lock(mutex);
  cache[key] = per_sm;
  return per_sm * env.sm_count;
}

void keep_scratch_pool(int device) {
  // The default memory pool returns its memory to the driver at every synchronisation
  // (release threshold 0), so each work unit of a streamed count paid for mapping its scratch
  // again. Keep up to kKeep bytes (inside the planner's device reserve of at least 512 MiB).
  constexpr std::uint64_t kKeep = 256ull << 20;
  static std::mutex mutex;
  static std::set<int> done;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert(device).second) return;
  cudaMemPool_t pool;
  TS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = 0;
  TS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  if (threshold < kKeep) {
    threshold = kKeep;
    TS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
}

namespace {

constexpr int kBinBlock = 256;
constexpr int kMaxBins = 4;

struct Bounds {
  std::uint64_t b[kMaxBins];
};

__global__ void __launch_bounds__(kBinBlock)
    bin_rows_kernel(Task t, int nbins, Bounds bounds, vid_t* lists, ull* counts, int a_shift,
                    int first_bin, std::uint32_t* narrow_a) {
  __shared__ unsigned s_count[kMaxBins];
  __shared__ ull s_base[kMaxBins];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * kBinBlock;
  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * kBinBlock; first <= t.rows;
       first += stride) {
    if (threadIdx.x < kMaxBins) s_count[threadIdx.x] = 0;
    __syncthreads();
    const std::uint64_t u = first + threadIdx.x;
    int bin = -1;
    unsigned slot = 0;
    if (u <= t.rows && narrow_a) narrow_a[u] = static_cast<std::uint32_t>(t.A.off[u] - t.A.off[0]);
    if (u < t.rows) {
      const eid_t da = t.A.off[u + 1] - t.A.off[u];
      const eid_t db = t.B.off[u + 1] - t.B.off[u];
      if (da > 0 && db > 0) {
        const eid_t key = max(db, da >> a_shift);
        bin = 0;
        while (bin < nbins - 1 && key > bounds.b[bin]) ++bin;
        if (bin < first_bin)
          bin = -1;
        else
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
              const LaunchEnv& env, int a_shift, int first_bin, std::uint32_t* narrow_a) {
  TS_CHECK(nbins >= 1 && nbins <= kMaxBins, "bin_rows: 1 to 4 bins");
  Bounds b{};
  for (int i = 0; i < nbins; ++i) b.b[i] = bounds[i];
  TS_CUDA_CHECK(cudaMemsetAsync(counts, 0, nbins * sizeof(ull), env.stream));
  const std::uint64_t blocks_needed = (t.rows + kBinBlock) / kBinBlock;  // rows + 1 offsets
  const int grid = static_cast<int>(
      std::min<std::uint64_t>(blocks_needed, static_cast<std::uint64_t>(env.sm_count) * 8));
  bin_rows_kernel<<<grid, kBinBlock, 0, env.stream>>>(t, nbins, b, lists, counts, a_shift,
                                                      first_bin, narrow_a);
  TS_CUDA_CHECK_LAUNCH();
}

// Streams and events for Fork, created once per device and reused: creating two streams and
// three events per launch cost tens of microseconds of host time per work unit. A set is taken
// from the free list for the life of one Fork and returned afterwards; sets live until the
// process ends (the driver reclaims them with the context).
struct ForkSet {
  int device = 0;
  cudaStream_t side[3] = {};
  cudaEvent_t ev[4] = {};
};

namespace {

std::mutex& fork_mutex() {
  static std::mutex m;
  return m;
}
std::vector<ForkSet*>& fork_free_list() {
  static std::vector<ForkSet*> v;
  return v;
}

ForkSet* take_fork_set(int device) {
  {
    std::lock_guard<std::mutex> lock(fork_mutex());
    auto& free = fork_free_list();
    for (std::size_t i = 0; i < free.size(); ++i)
      if (free[i]->device == device) {
        ForkSet* s = free[i];
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
        return s;
      }
  }
  auto s = std::make_unique<ForkSet>();
  s->device = device;
  for (auto& e : s->ev) TS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (auto& st : s->side) TS_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  return s.release();
}

void give_fork_set(ForkSet* s) {
  if (!s) return;
  std::lock_guard<std::mutex> lock(fork_mutex());
  fork_free_list().push_back(s);
}

}  // namespace

Fork::Fork(cudaStream_t main, int n) : main_(main), n_(n) {
  TS_CHECK(n >= 1 && n <= 4, "Fork: 1 to 4 streams");
  int device = 0;
  TS_CUDA_CHECK(cudaGetDevice(&device));
  set_ = take_fork_set(device);
  try {
    TS_CUDA_CHECK(cudaEventRecord(set_->ev[0], main_));
    for (int i = 1; i < n_; ++i)
      TS_CUDA_CHECK(cudaStreamWaitEvent(set_->side[i - 1], set_->ev[0], 0));
  } catch (...) {
    give_fork_set(set_);
    throw;
  }
}

cudaStream_t Fork::stream(int i) const {
  return i == 0 ? main_ : set_->side[i - 1];
}

void Fork::join() {
  if (joined_) return;
  joined_ = true;
  for (int i = 1; i < n_; ++i) {
    TS_CUDA_CHECK(cudaEventRecord(set_->ev[i], set_->side[i - 1]));
    TS_CUDA_CHECK(cudaStreamWaitEvent(main_, set_->ev[i], 0));
  }
}

Fork::~Fork() {
  if (!joined_) {
    // An exception left the fork open: make the main stream wait anyway (no throwing here).
    for (int i = 1; i < n_; ++i) {
      TS_CUDA_CHECK_NOTHROW(cudaEventRecord(set_->ev[i], set_->side[i - 1]));
      TS_CUDA_CHECK_NOTHROW(cudaStreamWaitEvent(main_, set_->ev[i], 0));
    }
  }
  // The waits above captured the events' state: the set may be reused at once.
  give_fork_set(set_);
}

}  // namespace tristream::cuda::detail
