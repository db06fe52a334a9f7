// cuda/host_registrations.cpp — HostRegistrations (host_registrations.hpp).
#include "host_registrations.hpp"

#include <algorithm>
#include <vector>

#include "check.hpp"

namespace tristream::cuda {

void HostRegistrations::add(const void* p, std::uint64_t bytes, const void* group) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lk(mu_);
  regs_[a] = Reg{a + bytes, group};
}

std::vector<void*> HostRegistrations::take(const void* group) {
  std::vector<void*> out;
  std::lock_guard<std::mutex> lk(mu_);
  // (a group's pieces follow each other from the group's own start)
  auto it = regs_.find(reinterpret_cast<std::uintptr_t>(group));
  while (it != regs_.end() && it->second.group == group) {
    out.push_back(reinterpret_cast<void*>(it->first));
    it = regs_.erase(it);
  }
  return out;
}

void HostRegistrations::remove(const void* p) {
  std::lock_guard<std::mutex> lk(mu_);
  regs_.erase(reinterpret_cast<std::uintptr_t>(p));
}

HostRegistrations& host_registrations() {
  // (never destroyed: a backend that outlives static destruction still finds it)
  static HostRegistrations* const registry = new HostRegistrations;
  return *registry;
}

void HostRegistrations::copy(void* dst, const void* src, std::uint64_t bytes,
                             cudaStream_t stream) const {
  // 1. The pieces: each within one registration, or outside all of them (found under the lock;
  // the copies, pageable ones synchronous, outside it).
  const auto lo = reinterpret_cast<std::uintptr_t>(src), hi = lo + bytes;
  std::vector<std::uintptr_t> cuts;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = regs_.upper_bound(lo);
    if (it != regs_.begin() && std::prev(it)->second.end > lo) --it;
    for (; it != regs_.end() && it->first < hi; ++it) {
      if (it->first > lo) cuts.push_back(it->first);
      if (it->second.end < hi) cuts.push_back(it->second.end);
    }
  }
  // 2. One copy per piece.
  std::uintptr_t at = lo;
  cuts.push_back(hi);
  for (const std::uintptr_t end : cuts) {
    if (end <= at) continue;
    TS_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(dst) + (at - lo),
                                  reinterpret_cast<const void*>(at), end - at,
                                  cudaMemcpyHostToDevice, stream));
    at = end;
  }
}

}  // namespace tristream::cuda
