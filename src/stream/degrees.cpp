// stream/degrees.cpp — undirected degrees streamed chunk by chunk (streamed_degrees, and
// streamed_wedges when only their wedge count is wanted; tristream/pipeline.hpp), for
// transitivity and clustering without loading the graph, on as many
// threads as a memory cap allows (each holds a decompressed chunk). A signal
// (common/interrupt.hpp) skips the remaining chunks and throws Error(Interrupted).
#include <algorithm>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "stream/in_degrees.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

namespace {

std::uint64_t largest_chunk(const GraphSource& g) {
  std::uint64_t max_chunk = 0;
  for (const auto& c : g.chunks())
    max_chunk = std::max<std::uint64_t>(max_chunk, c.edges * sizeof(vid_t));
  return max_chunk;
}

// Bytes a thread of the pass holds beside the degrees: a decompressed chunk, and with several
// threads its counters of the highest ids (InDegreeCounter).
std::uint64_t thread_bytes(const GraphSource& g) {
  return std::max<std::uint64_t>(largest_chunk(g), 1) +
         stream::InDegreeCounter<eid_t>::lane_bytes(
             std::min(g.n(), stream::InDegreeCounter<eid_t>::kHot));
}

// Adds every column's count to d[v] (d holds n entries), the chunks streamed on as many threads
// as max_bytes allows beside d (0: no cap).
template <class T>
void add_in_degrees(const GraphSource& g, unsigned threads, std::uint64_t max_bytes,
                    std::vector<T>& d) {
  const std::uint64_t n = g.n();
  const auto& chunks = g.chunks();
  // 1. The threads: fewer when max_bytes allows fewer (one needs no per-thread counters).
  std::uint64_t T_ = resolve_threads(threads);
  if (max_bytes) {
    const std::uint64_t held = n * sizeof(T);
    const std::uint64_t room = max_bytes > held ? max_bytes - held : 0;
    T_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(T_, room / thread_bytes(g)));
  }
  T_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(T_, chunks.size()));
  // 2. The chunks, each on one thread.
  ThreadPool pool(static_cast<unsigned>(T_));
  stream::InDegreeCounter<T> counter(d.data(), n, static_cast<unsigned>(T_));
  pool.for_each_item(chunks.size(), [&](std::size_t k, unsigned lane) {
    if (interrupt_requested()) return;
    if (const vid_t* cols = g.resident_chunk(k)) return counter.add(lane, cols, chunks[k].edges);
    std::vector<vid_t> buf(chunks[k].edges);
    g.read_chunk(k, buf.data());
    counter.add(lane, buf.data(), buf.size());
  });
  throw_if_interrupted();
  counter.merge();
}

}  // namespace

std::vector<eid_t> streamed_degrees(const GraphSource& g, unsigned threads,
                                    std::uint64_t max_bytes) {
  // The out-degrees from the offsets, the in-degrees from the columns.
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  std::vector<eid_t> d(n);
  for (std::uint64_t u = 0; u < n; ++u) d[u] = off[u + 1] - off[u];
  add_in_degrees(g, threads, max_bytes, d);
  return d;
}

WedgeSum streamed_wedges(const GraphSource& g, unsigned threads, std::uint64_t max_bytes) {
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  // 1. The in-degrees in 32 bits: a column id is above its row, so a vertex has fewer than
  //    n <= 2^32 in-neighbours.
  TS_CHECK(n <= (std::uint64_t{1} << 32), "vertex ids are 32-bit");
  std::vector<std::uint32_t> in(n, 0);
  add_in_degrees(g, threads, max_bytes, in);
  // 2. The wedges, exact.
  WedgeSum w;
  for (std::uint64_t u = 0; u < n; ++u) w.add_degree(off[u + 1] - off[u] + in[u]);
  return w;
}

std::uint64_t streamed_degrees_bytes(const GraphSource& g, unsigned threads) {
  return g.n() * sizeof(eid_t) + resolve_threads(threads) * thread_bytes(g);
}

}  // namespace tristream
