// stream/slot_state.hpp — what the driver keeps per slot while its unit is in flight, and the
// ring of staging buffers of a streamed unit.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tristream/pipeline.hpp"

namespace tristream::stream {

struct SlotState {
  std::int64_t unit = -1;  // the unit in flight in this slot
  UnitLayout layout;
  std::uint32_t space_part[3] = {0, 0, 0};  // range/hash: the part of each per-vertex space
  std::vector<vid_t> proxies;               // vertex: X (local id -> global id)
  std::uint64_t row0 = 0;                   // vertex: first row of V_i
  // Direct uploads: the cached blocks the unit in flight uploads from (or whose host images it
  // lends the backend), kept until the slot is prepared again (its count has finished then).
  std::vector<std::shared_ptr<const void>> keep;
};

// Streamed staging of one unit: the backend, the slot and the ring of staging buffers.
struct Staging {
  StreamingBackend* backend = nullptr;
  int slot = 0;
  int buffers = 2;
  std::uint64_t piece_bytes = 0;
  std::uint64_t next = 0;  // pieces sent so far (the next piece uses buffer next % buffers)
};

}  // namespace tristream::stream
