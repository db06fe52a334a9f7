// cuda/grid.hpp — the grid of a grid-stride kernel (the converter's sorter and row tally; cuda/
// internal): a thread per item in blocks of `block` threads, at most 32 blocks per multiprocessor
// of the current device (the kernels loop over the rest).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "check.hpp"

namespace tristream::cuda {

inline int stride_grid(std::uint64_t items, int block) {
  int dev = 0, sms = 0;
  TS_CUDA_CHECK(cudaGetDevice(&dev));
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::uint64_t b = static_cast<std::uint64_t>(block);
  return static_cast<int>(
      std::clamp<std::uint64_t>((items + b - 1) / b, 1, static_cast<std::uint64_t>(sms) * 32));
}

}  // namespace tristream::cuda
