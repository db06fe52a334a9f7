// planes.hpp — tcsr internals: a chunk's 4-byte ids as byte planes (kFlagPlanes, FORMAT.md): in
// blocks of kPlaneBlockIds ids (the chunk's last block shorter), byte b of the block's id i at
// byte b * k + i of the block (k ids in it). After delta coding most ids are small, so the high
// planes are long runs of zeros that zstd takes at once: it compresses and decompresses faster
// and the frames are smaller than from the ids as they are.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tristream/format.hpp"
#include "tristream/types.hpp"

namespace tristream::tcsr::detail {

inline constexpr std::size_t kPlaneBlockIds = std::size_t{1} << 18;
// The scratch a conversion in place needs: one block.
inline constexpr std::size_t kPlaneScratchBytes = kPlaneBlockIds * sizeof(vid_t);
static_assert(kPlaneScratchBytes == Reader::kPlaneScratchBytes, "the readers' scratch is a block");

// in[0, count) -> byte planes at out: straight into out where it is other memory, else in place
// through scratch (kPlaneScratchBytes, or 4 * count if less).
inline void ids_to_planes(const vid_t* in, vid_t* out, std::size_t count, unsigned char* scratch) {
  for (std::size_t b0 = 0; b0 < count; b0 += kPlaneBlockIds) {
    const std::size_t k = std::min(kPlaneBlockIds, count - b0);
    const vid_t* block = in + b0;
    unsigned char* to = in == out ? scratch : reinterpret_cast<unsigned char*>(out + b0);
    for (std::size_t i = 0; i < k; ++i) {
      const vid_t x = block[i];
      to[i] = static_cast<unsigned char>(x);
      to[k + i] = static_cast<unsigned char>(x >> 8);
      to[2 * k + i] = static_cast<unsigned char>(x >> 16);
      to[3 * k + i] = static_cast<unsigned char>(x >> 24);
    }
    if (in == out) std::memcpy(out + b0, scratch, k * sizeof(vid_t));
  }
}

// Byte planes of `count` ids -> the ids, in place (scratch as above).
inline void planes_to_ids(vid_t* ids, std::size_t count, unsigned char* scratch) {
  for (std::size_t b0 = 0; b0 < count; b0 += kPlaneBlockIds) {
    const std::size_t k = std::min(kPlaneBlockIds, count - b0);
    vid_t* block = ids + b0;
    std::memcpy(scratch, block, k * sizeof(vid_t));
    const unsigned char *p0 = scratch, *p1 = scratch + k, *p2 = scratch + 2 * k,
                        *p3 = scratch + 3 * k;
    for (std::size_t i = 0; i < k; ++i)
      block[i] = static_cast<vid_t>(p0[i]) | static_cast<vid_t>(p1[i]) << 8 |
                 static_cast<vid_t>(p2[i]) << 16 | static_cast<vid_t>(p3[i]) << 24;
  }
}

}  // namespace tristream::tcsr::detail
