// tristream/host_registrar.hpp — the small interface through which host memory is made a source
// of direct uploads (pinned on CUDA). StreamingBackend is one; tests use a fake that records the
// calls.
#pragma once

#include <cstdint>

namespace tristream {

class HostRegistrar {
 public:
  virtual ~HostRegistrar() = default;
  // Makes [p, p + bytes) (page-aligned, owned by the caller, already written) a source that
  // uploads may copy from directly: pins it on CUDA. Returns false when it cannot or need not
  // (the CPU backend, whose slots are its device). May be called from any thread.
  virtual bool register_host(void* p, std::uint64_t bytes) {
    (void)p;
    (void)bytes;
    return false;
  }
  // Undoes a successful register_host before the memory is freed. No-throw; any thread.
  virtual void unregister_host(void* p) noexcept { (void)p; }
};

}  // namespace tristream
