// stream/degrees.cpp — undirected degrees streamed chunk by chunk (streamed_degrees, and
// streamed_wedges when only their wedge count is wanted; tristream/pipeline.hpp), for
// transitivity and clustering without loading the graph, on as many
// threads as a memory cap allows (each holds a decompressed chunk). A signal
// (common/interrupt.hpp) skips the remaining chunks and throws Error(Interrupted).
#include <algorithm>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

namespace {

std::uint64_t largest_chunk(const GraphSource& g) {
  std::uint64_t max_chunk = 0;
  for (const auto& c : g.chunks())
    max_chunk = std::max<std::uint64_t>(max_chunk, c.edges * sizeof(vid_t));
  return max_chunk;
}

}  // namespace

std::vector<eid_t> streamed_degrees(const GraphSource& g, unsigned threads,
                                    std::uint64_t max_bytes) {
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  // 1. The threads: each holds one decompressed chunk; fewer when max_bytes allows fewer.
  std::uint64_t T = resolve_threads(threads);
  if (max_bytes) {
    const std::uint64_t chunk = std::max<std::uint64_t>(largest_chunk(g), 1);
    const std::uint64_t room = max_bytes > n * sizeof(eid_t) ? max_bytes - n * sizeof(eid_t) : 0;
    T = std::max<std::uint64_t>(1, std::min<std::uint64_t>(T, room / chunk));
  }
  // 2. The out-degrees from the offsets, the in-degrees from the columns.
  std::vector<eid_t> d(n);
  for (std::uint64_t u = 0; u < n; ++u) d[u] = off[u + 1] - off[u];
  ThreadPool pool(static_cast<unsigned>(T));
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

double streamed_wedges(const GraphSource& g, unsigned threads, std::uint64_t max_bytes) {
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  // 1. The in-degrees in 32 bits: a column id is above its row, so a vertex has fewer than
  //    n <= 2^32 in-neighbours. The threads as in streamed_degrees, with 4 bytes per vertex.
  TS_CHECK(n <= (std::uint64_t{1} << 32), "vertex ids are 32-bit");
  std::uint64_t T = resolve_threads(threads);
  if (max_bytes) {
    const std::uint64_t chunk = std::max<std::uint64_t>(largest_chunk(g), 1);
    const std::uint64_t in_bytes = n * sizeof(std::uint32_t);
    const std::uint64_t room = max_bytes > in_bytes ? max_bytes - in_bytes : 0;
    T = std::max<std::uint64_t>(1, std::min<std::uint64_t>(T, room / chunk));
  }
  std::vector<std::uint32_t> in(n, 0);
  ThreadPool pool(static_cast<unsigned>(T));
  const auto& chunks = g.chunks();
  pool.run(chunks.size(), [&](std::size_t k) {
    if (interrupt_requested()) return;
    std::vector<vid_t> buf(chunks[k].edges);
    g.read_chunk(k, buf.data());
    for (vid_t v : buf) {
      TS_CHECK(v < n, "column id out of range");
      __atomic_fetch_add(&in[v], std::uint32_t{1}, __ATOMIC_RELAXED);
    }
  });
  throw_if_interrupted();
  // 2. The wedges in vertex order, as wedge_count sums them (the same double).
  double w = 0;
  for (std::uint64_t u = 0; u < n; ++u) {
    const double d = static_cast<double>(off[u + 1] - off[u] + in[u]);
    w += d * (d - 1) / 2;
  }
  return w;
}

std::uint64_t streamed_degrees_bytes(const GraphSource& g, unsigned threads) {
  return g.n() * sizeof(eid_t) + resolve_threads(threads) * largest_chunk(g);
}

}  // namespace tristream
