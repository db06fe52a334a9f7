// cuda/row_tally.cu — the row tally on the device (row_tally.hpp).
//
// Steps, on one stream:
//   1. every vertex's word: its bucket << 16 (a binary search of the buckets' bounds);
//   2. the marks: every edge u -> v ORs 1 << group(u) into v's word (read first: most marks
//      repeat); group(u) counts the inner group bounds at or below u (at most 15, kernel
//      arguments);
//   3. the edges' sums: pairs by global atomics (one per edge), both through the block's shared
//      counters (one per bit), hashed through them too where H x H fits, else global atomics;
//   4. the vertices' sums: marked and marked_out through the block's shared counters.
// Every sum is an integer sum, so the result does not depend on the order of the atomics. A
// block adds at most m / grid edges into its 32-bit shared counters before they go to the 64-bit
// global ones (checked: m < 2^31 * grid).
#include "row_tally.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "check.hpp"
#include "grid.hpp"
#include "memory.hpp"
#include "tristream/error.hpp"

namespace tristream::cuda {
namespace {

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using ull = unsigned long long;

constexpr int kBlock = 256;
constexpr u32 kSharedHash = 4096;  // H x H counters a block keeps in shared memory at most

struct Inner {
  u64 bound[15];  // groups[1..G-1], then ~0
};

int grid_for(u64 items) {
  return stride_grid(items, kBlock);
}

__device__ u32 group_of(const Inner& in, u64 u) {
  u32 g = 0;
#pragma unroll
  for (int b = 0; b < 15; ++b) g += u >= in.bound[b];
  return g;
}

__global__ void tally_words(const u64* buckets, u32 F, u64 n, u32* word) {
  for (u64 v = blockIdx.x * u64{blockDim.x} + threadIdx.x; v < n;
       v += u64{gridDim.x} * blockDim.x) {
    u32 lo = 0, hi = F;  // the last f with buckets[f] <= v
    while (hi - lo > 1) {
      const u32 mid = (lo + hi) / 2;
      if (buckets[mid] <= v)
        lo = mid;
      else
        hi = mid;
    }
    word[v] = lo << 16;
  }
}

__global__ void tally_marks(const u64* keys, u64 m, Inner inner, u32* word) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < m;
       i += u64{gridDim.x} * blockDim.x) {
    const u64 k = keys[i];
    const u32 v = static_cast<u32>(k);
    const u32 bit = 1u << group_of(inner, k >> 32);
    if (!(word[v] & bit)) atomicOr(&word[v], bit);
  }
}

__global__ void tally_edges(const u64* keys, u64 m, const u32* word, const u32* fold, u32 F, u32 H,
                            bool shared_hash, ull* pairs, ull* hashed, ull* both) {
  extern __shared__ u32 s_hash[];  // H x H with shared_hash (H x H <= kSharedHash), else none
  __shared__ u32 s_both[32];
  for (u32 x = threadIdx.x; x < 32; x += blockDim.x) s_both[x] = 0;
  if (shared_hash)
    for (u32 x = threadIdx.x; x < H * H; x += blockDim.x) s_hash[x] = 0;
  __syncthreads();
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < m;
       i += u64{gridDim.x} * blockDim.x) {
    const u64 k = keys[i];
    const u64 u = k >> 32, v = static_cast<u32>(k);
    const u32 wu = word[u], wv = word[v];
    atomicAdd(&pairs[u64{wu >> 16} * F + (wv >> 16)], 1ull);
    const u32 h = (static_cast<u32>(u) % H) * H + static_cast<u32>(v) % H;  // (ids < 2^32)
    if (shared_hash)
      atomicAdd(&s_hash[h], 1u);
    else
      atomicAdd(&hashed[h], 1ull);
    for (u32 y = __ldg(&fold[wu & 0xffff]) & __ldg(&fold[wv & 0xffff]); y; y &= y - 1)
      atomicAdd(&s_both[__ffs(y) - 1], 1u);
  }
  __syncthreads();
  for (u32 x = threadIdx.x; x < 32; x += blockDim.x)
    if (s_both[x]) atomicAdd(&both[x], ull{s_both[x]});
  if (shared_hash)
    for (u32 x = threadIdx.x; x < H * H; x += blockDim.x)
      if (s_hash[x]) atomicAdd(&hashed[x], ull{s_hash[x]});
}

__global__ void tally_vertices(const u32* word, const u32* lengths, u64 n, const u32* fold,
                               ull* marked, ull* marked_out) {
  __shared__ u32 s_marked[32];
  __shared__ ull s_out[32];
  for (u32 x = threadIdx.x; x < 32; x += blockDim.x) {
    s_marked[x] = 0;
    s_out[x] = 0;
  }
  __syncthreads();
  for (u64 v = blockIdx.x * u64{blockDim.x} + threadIdx.x; v < n;
       v += u64{gridDim.x} * blockDim.x) {
    const u32 mask = word[v] & 0xffff;
    if (!mask) continue;
    const u32 d = lengths[v];
    for (u32 y = __ldg(&fold[mask]); y; y &= y - 1) {
      const int b = __ffs(y) - 1;
      atomicAdd(&s_marked[b], 1u);
      atomicAdd(&s_out[b], ull{d});
    }
  }
  __syncthreads();
  for (u32 x = threadIdx.x; x < 32; x += blockDim.x) {
    if (s_marked[x]) atomicAdd(&marked[x], ull{s_marked[x]});
    if (s_out[x]) atomicAdd(&marked_out[x], s_out[x]);
  }
}

}  // namespace

struct DeviceRowTally::Impl {
  u32 F = 1, H = 1;
  Stream stream;
  DeviceBuffer<u64> buckets;
  DeviceBuffer<u32> fold, word;
  DeviceBuffer<ull> pairs, hashed, counters;  // counters: both, marked, marked_out
};

DeviceRowTally::DeviceRowTally(const RowTallySpec& spec, u64 n, const u64* keys, u64 m,
                               const u32* lengths)
    : impl_(std::make_unique<Impl>()) {
  if (const char* problem = row_tally_spec_problem(spec, n))
    throw Error(ErrorKind::Internal, problem);
  Impl& t = *impl_;
  t.F = static_cast<u32>(spec.buckets.size() - 1);
  t.H = spec.hash_mod;
  const u32 G = static_cast<u32>(spec.groups.size() - 1);
  const cudaStream_t s = t.stream.get();
  // 1. The memory (DeviceOutOfMemory leaves nothing behind: the buffers free themselves), the
  //    tables up, the sums zero.
  t.buckets.allocate(spec.buckets.size());
  t.fold.allocate(spec.fold.size());
  t.word.allocate(std::max<u64>(n, 1));
  t.pairs.allocate(u64{t.F} * t.F);
  t.hashed.allocate(u64{t.H} * t.H);
  t.counters.allocate(96);
  TS_CUDA_CHECK(cudaMemcpyAsync(t.buckets.get(), spec.buckets.data(), t.buckets.bytes(),
                                cudaMemcpyHostToDevice, s));
  TS_CUDA_CHECK(
      cudaMemcpyAsync(t.fold.get(), spec.fold.data(), t.fold.bytes(), cudaMemcpyHostToDevice, s));
  TS_CUDA_CHECK(cudaMemsetAsync(t.pairs.get(), 0, t.pairs.bytes(), s));
  TS_CUDA_CHECK(cudaMemsetAsync(t.hashed.get(), 0, t.hashed.bytes(), s));
  TS_CUDA_CHECK(cudaMemsetAsync(t.counters.get(), 0, t.counters.bytes(), s));
  Inner inner{};
  for (u32 b = 0; b < 15; ++b) inner.bound[b] = b + 1 < G ? spec.groups[b + 1] : ~u64{0};
  // 2. The kernels (the upload's pageable copies end before the first runs).
  const int edge_grid = grid_for(m);
  TS_CHECK(m / static_cast<u64>(edge_grid) < (u64{1} << 31),
           "too many edges for the tally's blocks");
  if (n) {
    tally_words<<<grid_for(n), kBlock, 0, s>>>(t.buckets.get(), t.F, n, t.word.get());
    TS_CUDA_CHECK_LAUNCH();
  }
  if (m) {
    tally_marks<<<edge_grid, kBlock, 0, s>>>(keys, m, inner, t.word.get());
    TS_CUDA_CHECK_LAUNCH();
    const bool shared_hash = u64{t.H} * t.H <= kSharedHash;
    tally_edges<<<edge_grid, kBlock, shared_hash ? u64{t.H} * t.H * sizeof(u32) : 0, s>>>(
        keys, m, t.word.get(), t.fold.get(), t.F, t.H, shared_hash, t.pairs.get(), t.hashed.get(),
        t.counters.get());
    TS_CUDA_CHECK_LAUNCH();
  }
  if (n) {
    tally_vertices<<<grid_for(n), kBlock, 0, s>>>(t.word.get(), lengths, n, t.fold.get(),
                                                  t.counters.get() + 32, t.counters.get() + 64);
    TS_CUDA_CHECK_LAUNCH();
  }
}

DeviceRowTally::~DeviceRowTally() {
  if (impl_) TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(impl_->stream.get()));
}

RowTallySums DeviceRowTally::finish() {
  Impl& t = *impl_;
  RowTallySums sums;
  sums.pairs.resize(t.pairs.size());
  sums.hashed.resize(t.hashed.size());
  std::vector<u64> counters(96);
  const cudaStream_t s = t.stream.get();
  TS_CUDA_CHECK(cudaMemcpyAsync(sums.pairs.data(), t.pairs.get(), t.pairs.bytes(),
                                cudaMemcpyDeviceToHost, s));
  TS_CUDA_CHECK(cudaMemcpyAsync(sums.hashed.data(), t.hashed.get(), t.hashed.bytes(),
                                cudaMemcpyDeviceToHost, s));
  TS_CUDA_CHECK(cudaMemcpyAsync(counters.data(), t.counters.get(), t.counters.bytes(),
                                cudaMemcpyDeviceToHost, s));
  TS_CUDA_CHECK(cudaStreamSynchronize(s));
  for (std::size_t b = 0; b < 32; ++b) {
    sums.both[b] = counters[b];
    sums.marked[b] = counters[32 + b];
    sums.marked_out[b] = counters[64 + b];
  }
  return sums;
}

}  // namespace tristream::cuda
