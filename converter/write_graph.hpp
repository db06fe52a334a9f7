// write_graph.hpp — converter internals: the tail shared by the in-memory and the out-of-core
// paths. From the unique undirected edges in compact ids and the vertex degrees it ranks the
// vertices by (degree, id), orients each edge from the lower rank to the higher one, fills the
// rows of G+ range by range within the memory limit and streams them into tcsr::Writer. The
// output bytes depend only on the edge set, never on the thread count or the memory limit.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "idmap.hpp"
#include "progress.hpp"
#include "sort.hpp"
#include "spill_file.hpp"
#include "tristream/convert.hpp"
#include "tristream/edge_sorter.hpp"
#include "util.hpp"

namespace tristream::conv {

// Unique edge keys (a << 32 | b, a < b), in memory (in any order), in segments of a spill file
// (in key order), read in blocks, or held by an EdgeSorter (after its unique_and_degrees).
struct KeySource {
  EdgeSorter* device = nullptr;             // (count: its unique keys)
  BigBuffer<std::uint64_t>* mem = nullptr;  // rewritten in place, then released, by write_graph
  std::vector<KeySpan> runs;  // in memory: where the keys lie in *mem (none: [0, count))
  const TempFile* file = nullptr;
  std::vector<Segment> segments;
  std::uint64_t count = 0;
  // fn(keys, count) for consecutive blocks of at most `block` keys. From a file, a thread reads
  // the next block (in pieces on `read_threads` threads) while fn takes the current one (two
  // buffers of `block` keys).
  template <typename Fn>
  void for_each_block(std::size_t block, unsigned read_threads, Fn&& fn) const {
    if (mem) {
      TS_CHECK(runs.empty(), "keys in runs are read by write_graph alone");
      for (std::uint64_t i = 0; i < count; i += block)
        fn(mem->data() + i, static_cast<std::size_t>(std::min<std::uint64_t>(block, count - i)));
      return;
    }
    std::vector<Segment> pieces;  // (in keys of the file)
    for (const Segment& g : segments)
      for (std::uint64_t i = 0; i < g.count; i += block)
        pieces.push_back(Segment{g.first + i, std::min<std::uint64_t>(block, g.count - i)});
    BigBuffer<std::uint64_t> buf[2] = {BigBuffer<std::uint64_t>(block),
                                       BigBuffer<std::uint64_t>(block)};
    auto read = [this, &pieces, &buf, read_threads](std::size_t j) {
      const std::size_t k = static_cast<std::size_t>(pieces[j].count);
      const std::size_t got =
          file->read_at(pieces[j].first * 8, buf[j & 1].data(), k * 8, read_threads);
      TS_CHECK(got == k * 8, "spill file shorter than written");
    };
    std::future<void> next;  // (declared after buf: on an exception its destructor waits)
    if (!pieces.empty()) next = std::async(std::launch::async, read, std::size_t{0});
    for (std::size_t j = 0; j < pieces.size(); ++j) {
      next.get();
      if (j + 1 < pieces.size()) next = std::async(std::launch::async, read, j + 1);
      fn(buf[j & 1].data(), static_cast<std::size_t>(pieces[j].count));
    }
  }
};

struct TailResult {
  std::uint64_t n = 0, max_degree = 0, max_out_degree = 0;
  std::uint64_t raw_adjacency_bytes = 0, compressed_adjacency_bytes = 0;  // of the written file
};

// Where the tail writes and how much it may use.
struct TailContext {
  std::string output;
  ConvertOptions options;
  std::uint64_t limit = 0;  // bytes for the row ranges and the per-vertex arrays
  std::string tmp_dir;
  unsigned threads = 1;
  Progress* progress = nullptr;
  tcsr::Names* names = nullptr;  // --names: moved into the file (indexed by original id)
  // Out of core: called once write_graph has read src's keys for the last time, so that the
  // caller may close their spill file behind the work (CloseBehind); src.file is not read after.
  std::function<void()> source_read;
};

// Writes the .tcsr file. Preconditions: src holds every unique edge once, its ids below
// degree.size() (at most 2^32) and degree their undirected degrees, n of them above 0 (the
// vertices; ids of degree 0 are none). The original id of key id v is idmap->ids()[v], or v itself
// when idmap is null. Releases degree and idmap once the ranks are taken (their memory goes to
// the row ranges).
TailResult write_graph(const KeySource& src, std::uint64_t n, BigBuffer<std::uint32_t>& degree,
                       IdMap* idmap, const TailContext& ctx);

}  // namespace tristream::conv
