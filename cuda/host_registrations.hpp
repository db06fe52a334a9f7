// cuda/host_registrations.hpp — the host memory the streaming backend registered
// (register_host), and host-to-device copies split where their source crosses from one
// registration into the next (cuda/ internal).
//
// A cudaMemcpyAsync whose source spans two registrations fails (invalid argument). The in-core
// image is registered in pieces out of core (InCoreImage::register_columns: each row part as soon
// as it is decoded), and a block's columns may start in one piece and end in the next; every
// host-to-device copy of the streaming backend goes through copy(), which issues one copy per
// registration (or unregistered run) the source spans.
//
// Contract: add() after a successful cudaHostRegister, remove() before cudaHostUnregister; the
// registrations are disjoint. Any thread (the preload's registrar adds while the driver copies).
// copy() throws through TS_CUDA_CHECK like any call of the backend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>

namespace tristream::cuda {

class HostRegistrations {
 public:
  void add(const void* p, std::uint64_t bytes);
  void remove(const void* p);
  // Copies [src, src + bytes) to dst on `stream`, split at the registrations' edges.
  void copy(void* dst, const void* src, std::uint64_t bytes, cudaStream_t stream) const;

 private:
  mutable std::mutex mu_;
  std::map<std::uintptr_t, std::uintptr_t> regs_;  // start -> end
};

}  // namespace tristream::cuda
