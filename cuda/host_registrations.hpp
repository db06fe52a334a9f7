// cuda/host_registrations.hpp — the host memory the streaming backends registered
// (register_host), and host-to-device copies split where their source crosses from one
// registration into the next (cuda/ internal).
//
// A cudaMemcpyAsync whose source spans two registrations fails (invalid argument). The in-core
// image is registered in pieces out of core (InCoreImage::register_columns: each row part as soon
// as it is decoded), and a block's columns may start in one piece and end in the next; every
// host-to-device copy of the streaming backend goes through copy(), which issues one copy per
// registration (or unregistered run) the source spans.
//
// One registry for the process (host_registrations()): registrations are portable
// (cudaHostRegisterPortable), so memory that one backend registered is a registered source for
// every backend of the process, and with several workers (--devices) the host block store and
// the in-core image register through the first GPU's backend while every GPU copies from them.
//
// Contract: add() after a successful cudaHostRegister, take() or remove() before
// cudaHostUnregister; the registrations are disjoint. A registration of the backend's caller may
// be made of several (group: the caller's pointer; StreamingBackend::register_host registers in
// pieces). Any thread (the preload's registrar adds while the drivers copy). copy() throws
// through TS_CUDA_CHECK like any call of the backend.
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
  // Forgets the one registration that starts at p (a piece of a registration that failed).
  void remove(const void* p);
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

// The process's registry (see above).
HostRegistrations& host_registrations();

}  // namespace tristream::cuda
