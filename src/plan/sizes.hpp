// plan/sizes.hpp — small shared helpers of the planner's files: the device alignment and the
// thread count a plan assumes (0 = every core).
#pragma once

#include <cstdint>
#include <thread>

namespace tristream::plan_internal {

constexpr std::uint64_t kAlign = 256;
inline std::uint64_t align_up(std::uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

inline unsigned resolve_threads(unsigned t) {
  if (t) return t;
  unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}

}  // namespace tristream::plan_internal
