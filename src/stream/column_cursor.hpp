// stream/column_cursor.hpp — the columns of consecutive edge ranges, for streamed staging.
//
// read(e0, e1, out) writes the columns of edges [e0, e1) (ranges in non-decreasing order; the next
// range may start up to one edge before the previous one ended). A chunk wholly inside a range is
// decompressed straight into `out` (the chunks of a range in parallel on the pool); a chunk that
// straddles two ranges goes through one carried buffer and is decompressed once for both. Host
// memory: at most two chunks, whatever the size of the graph.
#pragma once

#include <cstdint>
#include <vector>

#include "stream/recorder.hpp"
#include "tristream/plan.hpp"

namespace tristream {
class ThreadPool;
}

namespace tristream::stream {

class ColumnCursor {
 public:
  ColumnCursor(const GraphSource& g, ThreadPool& pool, Recorder& rec, std::int64_t unit);
  void read(eid_t e0, eid_t e1, vid_t* out);

 private:
  std::uint64_t chunk_of(eid_t e) const;
  const GraphSource& g_;
  ThreadPool& pool_;
  Recorder& rec_;
  std::int64_t unit_;
  std::vector<eid_t> first_edges_;
  std::vector<vid_t> carry_, spare_;
  std::uint64_t carry_chunk_ = ~std::uint64_t{0};
};

}  // namespace tristream::stream
