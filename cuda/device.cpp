// cuda/device.cpp — device queries (device.hpp) and the backend probes of counter.hpp.
#include "device.hpp"

#include <cuda_runtime_api.h>

#include "check.hpp"
#include "tristream/counter.hpp"

namespace tristream {

bool built_with_cuda() {
  return true;
}

int cuda_device_count() {
  int n = 0;
  // No driver, no device, a broken installation: all mean "no usable device". Never throws.
  return cuda::cuda_ok(cudaGetDeviceCount(&n)) ? n : 0;
}

std::uint64_t cuda_device_total_memory(int ordinal) {
  if (ordinal < 0 || ordinal >= cuda_device_count()) return 0;
  cudaDeviceProp p{};
  return cuda::cuda_ok(cudaGetDeviceProperties(&p, ordinal)) ? p.totalGlobalMem : 0;
}

namespace cuda {

void check_device_ordinal(int ordinal) {
  const int n = cuda_device_count();
  if (ordinal < 0 || ordinal >= n)
    throw Error(ErrorKind::Usage, "--device " + std::to_string(ordinal) + ": " +
                                      (n == 0 ? std::string("no CUDA device is usable")
                                              : "there are " + std::to_string(n) +
                                                    " CUDA device(s), numbered from 0"));
}

void select_device(int ordinal) {
  check_device_ordinal(ordinal);
  TS_CUDA_CHECK(cudaSetDevice(ordinal));
}

MemoryInfo memory_info(int ordinal) {
  select_device(ordinal);
  std::size_t free = 0, total = 0;
  TS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

DeviceInfo device_info(int ordinal) {
  select_device(ordinal);
  cudaDeviceProp p{};
  TS_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  d.shared_per_block_optin = p.sharedMemPerBlockOptin;
  const MemoryInfo m = memory_info(ordinal);
  d.free_memory = m.free;
  d.total_memory = m.total;
  return d;
}

}  // namespace cuda
}  // namespace tristream
