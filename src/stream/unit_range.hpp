// stream/unit_range.hpp — the blocks of a range or hash unit (A = G_ij, B = G_ik, C = G_jk), or
// of a pair unit (A = G_ij, B = G_{i,>=j}, C = G_{j,>=j}).
//
// From the host block store when it is on (copied into the host slot by every core at once, or
// with direct uploads lent to the backend from where they are, kept alive through `keep`);
// otherwise built into the slot from the rows of parts i and j (in parallel from pinned chunks,
// or by the sequential walk). A reused A (reuse_a: the slot holds it already) is not built.
// Postcondition: every block the unit builds has exactly the census's columns (else
// Error(Internal)), and is marked packed or dense as it lies in the slot.
#pragma once

#include <memory>
#include <vector>

#include "stream/host_block_store.hpp"

namespace tristream::stream {

class RangeUnitBuilder {
 public:
  // All outlive the builder; copy_pool copies cached blocks into the slot; rec: the worker's
  // recorder (its units' waits for the store's preload). The store may be shared.
  RangeUnitBuilder(BlockBuilder& builder, HostBlockStore& store, ThreadPool& copy_pool,
                   Recorder& rec);
  // Builds unit w's blocks into `slot` at the places L gives; keep receives the cached blocks
  // the unit lends its host images from.
  void build(const WorkUnit& w, bool reuse_a, unsigned char* slot, UnitLayout& L,
             std::vector<std::shared_ptr<const void>>& keep);
  // The seconds units waited for the store's preload since the last call.
  double take_waited();

 private:
  bool from_store(const WorkUnit& w, bool reuse_a, unsigned char* slot, UnitLayout& L,
                  std::vector<std::shared_ptr<const void>>& keep);
  BlockBuilder& builder_;
  HostBlockStore& store_;
  ThreadPool& copy_pool_;
  HostBlockStore::Caller caller_;
};

}  // namespace tristream::stream
