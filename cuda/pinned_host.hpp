// cuda/pinned_host.hpp — page-locked host memory for the streaming backend's host slots, staging
// buffers and per-vertex arrays (cuda/ internal).
//
// Contract: pin_host returns `bytes` (at least) of zeroed host memory registered with CUDA
// (cudaHostRegister, portable), or throws Error(Internal) naming the size and `what`: a failure
// here is the host budget's, not the device's, so it is never DeviceOutOfMemory. unpin_host
// unregisters and frees it (null is allowed); it never throws.
#pragma once

#include <cstdint>

namespace tristream::cuda {

unsigned char* pin_host(std::uint64_t bytes, const char* what);
void unpin_host(unsigned char* p) noexcept;

}  // namespace tristream::cuda
