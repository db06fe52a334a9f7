// stream/degrees.cpp — undirected degrees streamed chunk by chunk (streamed_degrees,
// tristream/pipeline.hpp), for transitivity and clustering without loading the graph. A signal
// (common/interrupt.hpp) skips the remaining chunks and throws Error(Interrupted).
#include <algorithm>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

std::vector<eid_t> streamed_degrees(const GraphSource& g, unsigned threads) {
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  std::vector<eid_t> d(n);
  for (std::uint64_t u = 0; u < n; ++u) d[u] = off[u + 1] - off[u];
  ThreadPool pool(resolve_threads(threads));
  const auto& chunks = g.chunks();
  pool.run(chunks.size(), [&](std::size_t k) {
    if (interrupt_requested()) return;
    std::vector<vid_t> buf(chunks[k].edges);
    g.read_chunk(k, buf.data());
    for (vid_t v : buf) {
      TS_CHECK(v < n, "column id out of range");
      __atomic_fetch_add(&d[v], eid_t{1}, __ATOMIC_RELAXED);
    }
  });
  throw_if_interrupted();
  return d;
}

std::uint64_t streamed_degrees_bytes(const GraphSource& g, unsigned threads) {
  std::uint64_t max_chunk = 0;
  for (const auto& c : g.chunks())
    max_chunk = std::max<std::uint64_t>(max_chunk, c.edges * sizeof(vid_t));
  return g.n() * sizeof(eid_t) + resolve_threads(threads) * max_chunk;
}

}  // namespace tristream
