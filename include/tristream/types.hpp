// tristream/types.hpp — the integer types every library shares.
//
// Vertex ids are 32-bit while n < 2^32 (checked where graphs are loaded); edge offsets, edge
// counts and triangle counts are 64-bit everywhere, so graphs with more than 2^32 edges work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace tristream {

using vid_t = std::uint32_t;      // vertex id after compaction, in rank order (0..n-1)
using eid_t = std::uint64_t;      // edge offset or edge count
using count_t = std::uint64_t;    // triangle count
using orig_id_t = std::uint64_t;  // vertex id as it appeared in the input

inline constexpr std::uint64_t kMaxVertices =
    std::numeric_limits<vid_t>::max();  // n must be <= this

}  // namespace tristream
