// cuda/cut_rows.cu — cuts a block out of B on the device (SlotBlock::cut, tristream/pipeline.hpp:
// pair's A = G_ij from the row part B = R_i already there), so that the host neither builds nor
// uploads it. Host reference: tristream::cut_rows.
//
// Contract (launch.hpp, enqueue_cut_rows): B's rows (rows + 1 dense offsets, each row's columns
// sorted) with their columns in [lo, hi), as ids column - lo, written as dense offsets out_off
// (rows + 1, out_off[0] = 0) and columns out_cols. Columns past `cap` are not written (the census
// gives the block's edges exactly, so none are). out_* must not overlap B. Enqueued on `stream`;
// returns at once.
//
// Method, three steps on the stream:
//   1. one thread per row: the start of [lo, hi) in B(u) by a binary search (kept in scratch)
//      and its length, by a second search from there, into out_off[u + 1];
//   2. an inclusive scan of out_off[1..rows] in place (CUB), so out_off[u] is row u's start;
//   3. one thread per row copies its run, less lo (A's rows are short: a row of B split over
//      the column parts).
#include <cub/device/device_scan.cuh>

#include "check.hpp"
#include "launch.hpp"
#include "memory.hpp"

namespace tristream::cuda {
namespace {

constexpr int kBlock = 256;

__device__ inline eid_t first_at_least(const vid_t* __restrict__ cols, eid_t s, eid_t t,
                                       std::uint64_t x) {
  while (s < t) {
    const eid_t mid = s + (t - s) / 2;
    if (cols[mid] < x)
      s = mid + 1;
    else
      t = mid;
  }
  return s;
}

__global__ void __launch_bounds__(kBlock)
    cut_lengths(std::uint64_t rows, const eid_t* __restrict__ b_off,
                const vid_t* __restrict__ b_cols, std::uint64_t lo, std::uint64_t hi,
                eid_t* __restrict__ start, eid_t* __restrict__ out_off) {
  for (std::uint64_t u = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       u < rows; u += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const eid_t e1 = b_off[u + 1];
    const eid_t s = first_at_least(b_cols, b_off[u], e1, lo);
    const eid_t t = first_at_least(b_cols, s, e1, hi);
    start[u] = s;
    out_off[u + 1] = t - s;
    if (u == 0) out_off[0] = 0;
  }
}

__global__ void __launch_bounds__(kBlock)
    cut_copy(std::uint64_t rows, const vid_t* __restrict__ b_cols, const eid_t* __restrict__ start,
             std::uint64_t lo, const eid_t* __restrict__ out_off, vid_t* __restrict__ out_cols,
             std::uint64_t cap) {
  for (std::uint64_t u = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       u < rows; u += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const eid_t o0 = out_off[u], o1 = out_off[u + 1] < cap ? out_off[u + 1] : cap;
    const vid_t* src = b_cols + start[u];
    for (eid_t o = o0; o < o1; ++o) out_cols[o] = static_cast<vid_t>(*src++ - lo);
  }
}

}  // namespace

void enqueue_cut_rows(std::uint64_t rows, const eid_t* b_off, const vid_t* b_cols, std::uint64_t lo,
                      std::uint64_t hi, eid_t* out_off, vid_t* out_cols, std::uint64_t cap,
                      void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (rows == 0) {
    TS_CUDA_CHECK(cudaMemsetAsync(out_off, 0, sizeof(eid_t), s));
    return;
  }
  const auto blocks =
      static_cast<unsigned>(std::min<std::uint64_t>((rows + kBlock - 1) / kBlock, 1u << 16));
  // 1. Each row's run: its start in B and its length.
  AsyncBuffer<eid_t> start(rows, s);
  cut_lengths<<<blocks, kBlock, 0, s>>>(rows, b_off, b_cols, lo, hi, start.get(), out_off);
  TS_CUDA_CHECK_LAUNCH();
  // 2. The lengths into offsets, in place.
  std::size_t temp_bytes = 0;
  const auto n = static_cast<std::int64_t>(rows);
  TS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, out_off + 1, out_off + 1, n, s));
  {
    AsyncBuffer<char> temp(temp_bytes, s);
    TS_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(temp.get(), temp_bytes, out_off + 1, out_off + 1, n, s));
  }
  // 3. The runs' columns, less lo.
  cut_copy<<<blocks, kBlock, 0, s>>>(rows, b_cols, start.get(), lo, out_off, out_cols, cap);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace tristream::cuda
