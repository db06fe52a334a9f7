// stream/unit_vertex.hpp — the blocks of a vertex (LSTC) unit.
//
// A = the rows of V_i with their columns rebased into X = N+(V_i) (the proxies: local id ->
// global id, in ascending order); C = the rows of X restricted to X, rebased; B is A. When the
// chunks fit the chunk cache, both are built on the pool (A: rows copied and X marked per
// segment; C: two passes, count then fill); otherwise by the windowed sequential walk.
// Postcondition: |X| equals the census's C rows (else Error(Internal)); C's edges, bounded by the
// plan, are set exactly in L; with per-vertex counts, L's spaces are V_i's rows and X.
#pragma once

#include <cstdint>
#include <vector>

#include "stream/block_builder.hpp"
#include "stream/slot_state.hpp"

namespace tristream::stream {

class VertexUnitBuilder {
 public:
  // builder (its reader and segments) outlives this.
  VertexUnitBuilder(const Partition& partition, BlockBuilder& builder);
  void build(const WorkUnit& w, bool per_vertex, unsigned char* slot, UnitLayout& L, SlotState& st);

 private:
  const Partition& P_;
  BlockBuilder& builder_;
  ChunkReader& reader_;
  const GraphSource& g_;
  unsigned threads_;
  std::vector<std::uint64_t> bits_;  // X as a bitmap over the vertices
  std::vector<std::uint32_t> rank_;  // members before each word of bits_
};

}  // namespace tristream::stream
