// plan/sizes.hpp — small shared helpers of the planner's files: the device alignment. (The thread
// count a plan assumes is common/thread_pool.hpp's resolve_threads.)
#pragma once

#include <cstdint>

namespace tristream::plan_internal {

constexpr std::uint64_t kAlign = 256;
inline std::uint64_t align_up(std::uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

}  // namespace tristream::plan_internal
