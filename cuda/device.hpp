// cuda/device.hpp — device queries without CUDA types, for the planner, the CLI and the
// pipeline. In a build without CUDA (stub.cpp) every query reports "no device".
#pragma once

#include <cstdint>
#include <string>

namespace tristream::cuda {

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::uint64_t total_memory = 0;  // bytes
  std::uint64_t free_memory = 0;   // bytes, from cudaMemGetInfo at the time of the query
  std::uint64_t l2_bytes = 0;
  std::uint64_t shared_per_block_optin = 0;
};

// Describes device `ordinal` (makes it current). Throws Error(Device) if it cannot be used.
DeviceInfo device_info(int ordinal);

// Free and total memory of device `ordinal` in bytes (cudaMemGetInfo). Throws Error(Device).
struct MemoryInfo {
  std::uint64_t free = 0;
  std::uint64_t total = 0;
};
MemoryInfo memory_info(int ordinal);

// A Usage error ("--device N: ...") when device `ordinal` does not exist; makes no context.
void check_device_ordinal(int ordinal);

// Makes `ordinal` the current device, with a Usage error when it does not exist.
void select_device(int ordinal);

// Throws Error(Usage) unless `kernel` names a CUDA kernel: auto|lstc|trust|wedge|gui|bitmap
// (optionally ":VARIANT", a tuning switch of the benchmark).
void validate_kernel_name(const std::string& kernel);

}  // namespace tristream::cuda
