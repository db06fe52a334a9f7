// memory_source.cpp — a GraphSource over an in-memory oriented graph (tristream/plan.hpp), cut
// into chunks that start and end inside rows as a file's do; the tests' stand-in for a .tcsr.
#include <algorithm>
#include <cstring>

#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

class MemorySource final : public GraphSource {
 public:
  MemorySource(const OrientedGraph& g, std::uint64_t chunk_edges) : g_(g) {
    if (chunk_edges == 0) chunk_edges = 1;
    const eid_t m = g.m();
    const eid_t* off = g.csr.offsets.data();
    for (eid_t e = 0; e < m; e += chunk_edges) {
      tcsr::ChunkInfo c;
      c.first_edge = e;
      c.edges = std::min<eid_t>(chunk_edges, m - e);
      // first_row: the row holding edge e (the last row whose offset <= e with a non-empty row).
      c.first_row = static_cast<std::uint64_t>(std::upper_bound(off, off + g.n() + 1, e) - off - 1);
      const std::uint64_t last_row = static_cast<std::uint64_t>(
          std::upper_bound(off, off + g.n() + 1, e + c.edges - 1) - off - 1);
      c.rows = last_row - c.first_row + 1;
      c.raw_size = c.edges * sizeof(vid_t);
      c.compressed_size = c.raw_size;
      c.file_offset = e * sizeof(vid_t);
      chunks_.push_back(c);
    }
  }
  std::string name() const override { return "<memory>"; }
  std::uint64_t n() const override { return g_.n(); }
  eid_t m() const override { return g_.m(); }
  const eid_t* offsets() const override { return g_.csr.offsets.data(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return chunks_; }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    TS_CHECK(k < chunks_.size(), "chunk index out of range");
    const auto& c = chunks_[k];
    std::memcpy(out, g_.csr.cols.data() + c.first_edge, c.edges * sizeof(vid_t));
  }
  std::uint64_t compressed_bytes() const override { return g_.m() * sizeof(vid_t); }

 private:
  const OrientedGraph& g_;
  std::vector<tcsr::ChunkInfo> chunks_;
};

}  // namespace

std::unique_ptr<GraphSource> memory_source(const OrientedGraph& g, std::uint64_t chunk_edges) {
  return std::make_unique<MemorySource>(g, chunk_edges);
}

}  // namespace tristream
