// cuda/check.hpp — the one CUDA error checker of the project (cuda/ internal; needs the CUDA
// runtime headers, so only files of cuda/ and its testing target include it).
//
// Contract:
//   TS_CUDA_CHECK(call)           throws when the call does not return cudaSuccess: the message
//                                 names the call text, cudaGetErrorString and file:line.
//   TS_CUDA_CHECK_ALLOC(call, n)  the same for an allocation of n bytes (n goes into the message
//                                 and into DeviceOutOfMemory::requested()).
//   TS_CUDA_CHECK_LAUNCH()        checks the last kernel launch (cudaGetLastError).
//   TS_CUDA_CHECK_NOTHROW(call)   for destructors and cleanup paths: reports a failure on stderr
//                                 and carries on.
// A failure whose code is device out-of-memory (is_out_of_memory: cudaErrorMemoryAllocation,
// which cudaMalloc, cudaMallocAsync, cudaMallocFromPoolAsync, cudaMallocHost and the memory-pool
// calls return when memory runs out) throws tristream::DeviceOutOfMemory, so the pipeline re-plans
// with a smaller device budget; every other failure throws Error(ErrorKind::Device). The error is
// recognised by its code, never by its message text. Throwing clears the runtime's last error, so
// a later TS_CUDA_CHECK_LAUNCH does not report an old, already reported failure.
// cuda_ok(status) is for probes whose failure the caller handles itself (a device count, an
// optional registration): it clears the last error and says whether the call succeeded.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "tristream/error.hpp"

namespace tristream::cuda {

// Whether a CUDA status means "out of memory" (the only such code of the runtime API).
inline bool is_out_of_memory(cudaError_t status) noexcept {
  return status == cudaErrorMemoryAllocation;
}

// "CALL: ERROR STRING (FILE:LINE)" for a failed call.
std::string cuda_failure(cudaError_t status, const char* call, const char* file, int line);

// Throws DeviceOutOfMemory (is_out_of_memory) or Error(Device) for a failed call; `bytes` is the
// size of the allocation that failed (0 when not an allocation or unknown).
[[noreturn]] void throw_cuda(cudaError_t status, const char* call, const char* file, int line,
                             std::uint64_t bytes = 0);

// Prints the failure on stderr; never throws.
void report_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept;

// True for cudaSuccess; otherwise clears the runtime's last error and returns false.
inline bool cuda_ok(cudaError_t status) noexcept {
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

}  // namespace tristream::cuda

#define TS_CUDA_CHECK(call)                                                      \
  do {                                                                           \
    const cudaError_t ts_cuda_status_ = (call);                                  \
    if (ts_cuda_status_ != cudaSuccess)                                          \
      ::tristream::cuda::throw_cuda(ts_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define TS_CUDA_CHECK_ALLOC(call, bytes)                                                  \
  do {                                                                                    \
    const cudaError_t ts_cuda_status_ = (call);                                           \
    if (ts_cuda_status_ != cudaSuccess)                                                   \
      ::tristream::cuda::throw_cuda(ts_cuda_status_, #call, __FILE__, __LINE__, (bytes)); \
  } while (0)

#define TS_CUDA_CHECK_NOTHROW(call)                                               \
  do {                                                                            \
    const cudaError_t ts_cuda_status_ = (call);                                   \
    if (ts_cuda_status_ != cudaSuccess)                                           \
      ::tristream::cuda::report_cuda(ts_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define TS_CUDA_CHECK_LAUNCH() TS_CUDA_CHECK(cudaGetLastError())
