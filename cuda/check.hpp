// cuda/check.hpp — the one CUDA checking macro of the project (cuda/ internal; needs the CUDA
// runtime headers, so only cuda/*.cu and cuda/*.cpp include it).
//
// TS_CUDA_CHECK(call) throws tristream::Error(ErrorKind::Device,
//     "<call text>: <cudaGetErrorString> (file:line)") when the call does not return cudaSuccess.
// TS_CUDA_CHECK_NOTHROW(call) is for destructors and cleanup paths: it reports the failure on
// stderr and carries on.
// TS_CUDA_CHECK_LAUNCH() checks the last kernel launch (cudaGetLastError).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "tristream/error.hpp"

namespace tristream::cuda {

[[noreturn]] inline void throw_cuda(cudaError_t status, const char* call, const char* file,
                                    int line) {
  throw Error(ErrorKind::Device, std::string(call) + ": " + cudaGetErrorString(status) + " (" +
                                     file + ":" + std::to_string(line) + ")");
}

inline void report_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "tristream: %s: %s (%s:%d)\n", call, cudaGetErrorString(status), file, line);
}

}  // namespace tristream::cuda

#define TS_CUDA_CHECK(call)                                                      \
  do {                                                                           \
    const cudaError_t ts_cuda_status_ = (call);                                  \
    if (ts_cuda_status_ != cudaSuccess)                                          \
      ::tristream::cuda::throw_cuda(ts_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define TS_CUDA_CHECK_NOTHROW(call)                                               \
  do {                                                                            \
    const cudaError_t ts_cuda_status_ = (call);                                   \
    if (ts_cuda_status_ != cudaSuccess)                                           \
      ::tristream::cuda::report_cuda(ts_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define TS_CUDA_CHECK_LAUNCH() TS_CUDA_CHECK(cudaGetLastError())
