// sizes.cpp — the bytes of a block on the device, of a block as uploaded and cached on the host
// (offsets packed when smaller), and of the graph loaded whole (tristream/plan.hpp).
#include <algorithm>

#include "tristream/device_cache.hpp"
#include "tristream/packed_rows.hpp"
#include "tristream/plan.hpp"

namespace tristream {

std::uint64_t block_bytes(std::uint64_t rows, eid_t edges) {
  return device_block_bytes(rows, edges);
}

std::uint64_t packed_block_bytes(std::uint64_t rows, eid_t edges) {
  const std::uint64_t offsets =
      std::min(dense_offsets_bytes(rows), packed_bytes(std::min<std::uint64_t>(rows, edges)));
  return offsets + edges * sizeof(vid_t);
}

std::uint64_t in_core_bytes(std::uint64_t n, eid_t m, bool per_vertex) {
  return block_bytes(n, m) + (per_vertex ? n * sizeof(count_t) : 0);
}

}  // namespace tristream
