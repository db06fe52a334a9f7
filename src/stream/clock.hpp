// stream/clock.hpp — the engine's clock (steady seconds) and the 256-byte slot alignment.
#pragma once

#include <chrono>
#include <cstdint>

namespace tristream::stream {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Blocks in a slot start at multiples of kSlotAlign bytes.
constexpr std::uint64_t kSlotAlign = 256;
inline std::uint64_t align_up(std::uint64_t x) {
  return (x + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
}

// The thread priorities of a run (common/thread_priority.hpp), as nice values relative to the
// thread that starts it:
//   base - 5  the driver, which issues the GPU work, and the preload's registrar: a registration
//             (cudaHostRegister) holds the CUDA driver's lock, so every copy and launch the driver
//             issues meanwhile waits for it, and a registrar that loses its core to the builders
//             stalls the GPU (a priority inversion). Raising a thread above base needs
//             CAP_SYS_NICE (or RLIMIT_NICE); without it they stay at base.
//   base + 3  the builder and its pool (the preload's critical path);
//   base + 8  the preload's decompressor, which runs ahead.
// The threads that run above base are created before their creator lowers itself.
constexpr int kDriverBoost = 5, kBuilderDrop = 3, kDecompressorDrop = 8;

}  // namespace tristream::stream
