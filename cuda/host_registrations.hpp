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
// Contract: add() after a successful cudaHostRegister, take() before cudaHostUnregister; the
// registrations are disjoint. A registration of the backend's caller may be made of several
// (group: the caller's pointer; StreamingBackend::register_host registers in pieces). Any thread
// (the preload's registrar adds while the driver copies). copy() throws through TS_CUDA_CHECK
// like any call of the backend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace tristream::cuda {

class HostRegistrations {
 public:
  void add(const void* p, std::uint64_t bytes, const void* group);
  // Forgets the registrations of `group` and returns their starts.
  std::vector<void*> take(const void* group);
  // Copies [src, src + bytes) to dst on `stream`, split at the registrations' edges.
  void copy(void* dst, const void* src, std::uint64_t bytes, cudaStream_t stream) const;

 private:
  struct Reg {
    std::uintptr_t end = 0;
    const void* group = nullptr;
  };
  mutable std::mutex mu_;
  std::map<std::uintptr_t, Reg> regs_;  // start -> end, group
};

}  // namespace tristream::cuda
