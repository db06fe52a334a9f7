// cuda/expand_rows.cu — expands a packed block (tristream/packed_rows.hpp) into the dense offsets
// the kernels read, on the device (its host reference is tristream::expand_packed); and a
// slice's window of C's offsets (enqueue_window_offsets; host reference
// tristream::window_offsets).
//
// Contract: given R packed rows (ids strictly increasing and below `rows`, offsets[0..R] with
// offsets[R] = the block's edges) in device memory, writes out[u] = offsets[#{r : ids[r] < u}]
// for every u in [0, rows]: the dense offsets of the same block. out must not overlap the
// packed arrays. Enqueued on `stream`; returns at once.
//
// Method: each thread owns kSpan consecutive dense rows; it finds the first packed row at or
// after its first dense row by a binary search over ids (the ids of a block are a few MiB at most
// and stay in L2), then walks its span and the packed rows together. Work and writes are
// proportional to the dense rows, whatever the gaps between packed rows; a warp writes
// 32 x kSpan consecutive offsets.
#include "check.hpp"
#include "launch.hpp"

namespace tristream::cuda {
namespace {

constexpr int kBlock = 256;
constexpr std::uint64_t kSpan = 16;

__global__ void __launch_bounds__(kBlock)
    expand_kernel(std::uint64_t rows, std::uint64_t count, const vid_t* __restrict__ ids,
                  const eid_t* __restrict__ offsets, eid_t* __restrict__ out) {
  const std::uint64_t spans = (rows + 1 + kSpan - 1) / kSpan;
  for (std::uint64_t s = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       s < spans; s += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t u0 = s * kSpan;
    const std::uint64_t u1 = u0 + kSpan < rows + 1 ? u0 + kSpan : rows + 1;
    // r = #{ids < u0}
    std::uint64_t lo = 0, hi = count;
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (ids[mid] < u0)
        lo = mid + 1;
      else
        hi = mid;
    }
    std::uint64_t r = lo;
    for (std::uint64_t u = u0; u < u1; ++u) {
      while (r < count && ids[r] < u) ++r;
      out[u] = offsets[r];
    }
  }
}

__global__ void __launch_bounds__(kBlock)
    window_kernel(const eid_t* __restrict__ off, std::uint64_t rows, std::uint64_t v0,
                  std::uint64_t v1, eid_t* __restrict__ out) {
  for (std::uint64_t v = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       v <= rows; v += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    out[v] = off[v < v0 ? v0 : (v > v1 ? v1 : v)];
}

}  // namespace

void enqueue_window_offsets(const eid_t* off, std::uint64_t rows, std::uint64_t v0,
                            std::uint64_t v1, eid_t* out, void* stream) {
  const std::uint64_t blocks = std::min<std::uint64_t>((rows + 1 + kBlock - 1) / kBlock, 1u << 16);
  window_kernel<<<static_cast<unsigned>(blocks), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      off, rows, v0, v1, out);
  TS_CUDA_CHECK_LAUNCH();
}

void enqueue_expand_packed(std::uint64_t rows, std::uint64_t count, const vid_t* ids,
                           const eid_t* offsets, eid_t* out, void* stream) {
  const std::uint64_t spans = (rows + 1 + kSpan - 1) / kSpan;
  const std::uint64_t blocks = std::min<std::uint64_t>((spans + kBlock - 1) / kBlock, 1u << 16);
  expand_kernel<<<static_cast<unsigned>(blocks), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      rows, count, ids, offsets, out);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace tristream::cuda
