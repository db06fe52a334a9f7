// stream/column_cursor.cpp — columns of consecutive edge ranges (stream/column_cursor.hpp).
#include "stream/column_cursor.hpp"

#include <algorithm>
#include <cstring>

#include "common/thread_pool.hpp"
#include "stream/clock.hpp"

namespace tristream::stream {

ColumnCursor::ColumnCursor(const GraphSource& g, ThreadPool& pool, Recorder& rec, std::int64_t unit)
    : g_(g), pool_(pool), rec_(rec), unit_(unit) {
  first_edges_.reserve(g.chunks().size());
  for (const auto& c : g.chunks()) first_edges_.push_back(c.first_edge);
}

std::uint64_t ColumnCursor::chunk_of(eid_t e) const {
  return static_cast<std::uint64_t>(std::upper_bound(first_edges_.begin(), first_edges_.end(), e) -
                                    first_edges_.begin() - 1);
}

void ColumnCursor::read(eid_t e0, eid_t e1, vid_t* out) {
  if (e0 >= e1) return;
  const auto& chunks = g_.chunks();
  const std::uint64_t c0 = chunk_of(e0), c1 = chunk_of(e1 - 1);
  auto inside = [&](std::uint64_t c) {
    return chunks[c].first_edge >= e0 && chunks[c].first_edge + chunks[c].edges <= e1;
  };
  std::uint64_t comp = 0, raw = 0;
  const double t0 = now_s();
  // A partial head that is not the carried chunk (only when a range starts inside a chunk
  // the previous range did not reach): decompressed into the carry first.
  const bool head_partial = !inside(c0);
  if (head_partial && carry_chunk_ != c0) {
    carry_.resize(chunks[c0].edges);
    g_.read_chunk(c0, carry_.data());
    carry_chunk_ = c0;
    comp += chunks[c0].compressed_size;
    raw += chunks[c0].edges * sizeof(vid_t);
  }
  const bool tail_partial = c1 != c0 && !inside(c1);
  std::vector<std::uint64_t> direct;
  for (std::uint64_t c = c0; c <= c1; ++c)
    if (inside(c)) direct.push_back(c);
  if (tail_partial) spare_.resize(chunks[c1].edges);
  const std::size_t jobs = direct.size() + (tail_partial ? 1 : 0);
  pool_.run(jobs, [&](std::size_t x) {
    if (x < direct.size())
      g_.read_chunk(direct[x], out + (chunks[direct[x]].first_edge - e0));
    else
      g_.read_chunk(c1, spare_.data());
  });
  for (auto c : direct) {
    comp += chunks[c].compressed_size;
    raw += chunks[c].edges * sizeof(vid_t);
  }
  if (tail_partial) {
    comp += chunks[c1].compressed_size;
    raw += chunks[c1].edges * sizeof(vid_t);
  }
  const double t1 = now_s();
  if (raw) {
    rec_.span("read", unit_, t0, t0, comp);
    rec_.span("decompress", unit_, t0, t1, raw);
  }
  auto copy_part = [&](std::uint64_t c, const vid_t* buf) {
    const eid_t cs = std::max(e0, chunks[c].first_edge);
    const eid_t ce = std::min(e1, chunks[c].first_edge + chunks[c].edges);
    std::memcpy(out + (cs - e0), buf + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
  };
  if (head_partial) copy_part(c0, carry_.data());
  if (tail_partial) {
    copy_part(c1, spare_.data());
    carry_.swap(spare_);
    carry_chunk_ = c1;
  }
}

}  // namespace tristream::stream
