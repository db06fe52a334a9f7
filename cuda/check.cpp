// cuda/check.cpp — the failure paths of the CUDA error checker (check.hpp): the message, the
// error type chosen by the status code (DeviceOutOfMemory for out-of-memory, Error(Device) for
// the rest) and the no-throw report.
#include "check.hpp"

#include <cstdio>

#include "tristream/error.hpp"
#include "tristream/pipeline.hpp"  // DeviceOutOfMemory

namespace tristream::cuda {

std::string cuda_failure(cudaError_t status, const char* call, const char* file, int line) {
  return std::string(call) + ": " + cudaGetErrorString(status) + " (" + file + ":" +
         std::to_string(line) + ")";
}

void throw_cuda(cudaError_t status, const char* call, const char* file, int line,
                std::uint64_t bytes) {
  // The status is in hand; reset the runtime's last error so that it is not reported again by
  // the next launch check (sticky errors stay: they cannot be cleared).
  (void)cudaGetLastError();
  std::string what = cuda_failure(status, call, file, line);
  if (is_out_of_memory(status)) {
    if (bytes) what += ", " + std::to_string(bytes) + " bytes requested";
    throw DeviceOutOfMemory(what, bytes);
  }
  throw Error(ErrorKind::Device, what);
}

void report_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "tristream: %s: %s (%s:%d)\n", call, cudaGetErrorString(status), file, line);
}

}  // namespace tristream::cuda
