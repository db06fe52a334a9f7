// block_build_bench.cpp — the host block builder alone (stream/block_builder.hpp): every row part
// of a range plan built into its blocks G_ab (b >= a), as the host block store's preload builds
// them for range units (pair units need only the row parts whole, which the GPU count views in
// its in-core image and cuts on the device). All chunks are decoded and pinned once before the
// timed loop, the destinations allocated and touched once, so the figure is the two passes' own
// work. Reports edges per second (each edge of the graph lies in exactly one G_ab) and the bytes
// the passes move (the columns read twice, the columns and offsets written) beside the time, so
// memory bandwidth is the ceiling to compare with.
//
// usage: block_build_bench [google benchmark flags]
//   TRISTREAM_BENCH_GRAPH  a .tcsr file to build from; without it a hub-dominated graph of scale
//                          TRISTREAM_BENCH_SCALE [18] (64 hubs, hub share 0.5, edge factor 8) is
//                          generated in memory
//   TRISTREAM_BENCH_PARTS  the range plan's p [25]
// Arguments: the builder's threads.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/thread_pool.hpp"
#include "stream/block_builder.hpp"
#include "stream/chunk_reader.hpp"
#include "stream/clock.hpp"
#include "stream/recorder.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"
#include "tristream/plan.hpp"

namespace {

using namespace tristream;

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// The graph, its source and a range plan, made once for every benchmark.
struct Fixture {
  std::unique_ptr<tcsr::Reader> reader;
  OrientedGraph generated;
  std::unique_ptr<GraphSource> src;
  Plan plan;

  Fixture() {
    const char* path = std::getenv("TRISTREAM_BENCH_GRAPH");
    if (path && *path) {
      reader = std::make_unique<tcsr::Reader>(path);
      src = reader_source(*reader);
    } else {
      GenerateOptions g;
      g.kind = "hub";
      g.scale = static_cast<unsigned>(env_u64("TRISTREAM_BENCH_SCALE", 18));
      g.edge_factor = 8;
      g.hubs = 64;
      g.hub_share = 0.5;
      const auto e = generate_edges(g);
      std::uint64_t n = 0;
      for (const auto& [u, v] : e) n = std::max(n, std::max(u, v) + 1);
      std::vector<std::pair<vid_t, vid_t>> edges;
      edges.reserve(e.size());
      for (const auto& [u, v] : e) edges.emplace_back(static_cast<vid_t>(u), static_cast<vid_t>(v));
      generated = orient_edge_list(n, edges);
      src = memory_source(generated, 1u << 21);
    }
    PlanOptions po;
    po.scheme = Scheme::Range;
    po.parts = static_cast<std::uint32_t>(env_u64("TRISTREAM_BENCH_PARTS", 25));
    plan = plan_graph(*src, po);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_BuildRowParts(benchmark::State& state) {
  Fixture& f = fixture();
  const Partition& P = f.plan.partition;
  const auto threads = static_cast<unsigned>(state.range(0));
  PipelineStats stats;
  stream::Recorder rec(stream::now_s(), stats, false);
  ThreadPool pool(threads);
  // every chunk stays decoded: a cache of the whole graph
  const std::uint64_t all = f.src->m() * sizeof(vid_t) * 2 + (64ull << 20);
  stream::ChunkReader reader(*f.src, pool, f.plan.window_chunks, all, rec);
  stream::BlockBuilder builder(P, reader);
  // destinations per row part, allocated and touched once
  struct Dest {
    std::vector<eid_t> off;
    std::vector<vid_t> cols;
  };
  std::vector<std::vector<Dest>> dest(P.p);
  std::vector<std::vector<std::uint64_t>> needed(P.p);
  std::uint64_t edges = 0, offsets = 0;
  for (std::uint32_t a = 0; a < P.p; ++a) {
    builder.rows_needed(a, needed[a]);
    if (!reader.pin(needed[a], -1)) {
      state.SkipWithError("the chunk cache cannot hold a row part");
      return;
    }
    dest[a].resize(P.p - a);
    for (std::uint32_t d = 0; d < P.p - a; ++d) {
      // room for the dense form (a packed image is smaller) and every column of the row part
      dest[a][d].off.assign(P.rows(a) + 1, 0);
      dest[a][d].cols.assign(f.src->offsets()[P.bounds[a + 1]] - f.src->offsets()[P.bounds[a]] + 1,
                             0);
    }
  }
  for (auto _ : state) {
    edges = 0;
    offsets = 0;
    for (std::uint32_t a = 0; a < P.p; ++a) {
      const std::uint32_t q = P.p - a;
      std::vector<std::uint32_t> parts(q);
      std::vector<stream::BuildDest> d(q);
      for (std::uint32_t x = 0; x < q; ++x) {
        parts[x] = a + x;
        d[x].off = dest[a][x].off.data();
        d[x].cols = dest[a][x].cols.data();
        d[x].cap = dest[a][x].cols.size();
      }
      if (!reader.pin(needed[a], -1)) {
        state.SkipWithError("the chunk cache cannot hold a row part");
        return;
      }
      builder.build(a, parts.data(), q, d.data(), [](std::size_t, eid_t) {});
      for (std::uint32_t x = 0; x < q; ++x) {
        edges += d[x].edges;
        offsets += d[x].packed ? d[x].nonempty * (sizeof(eid_t) + sizeof(vid_t)) / sizeof(eid_t)
                               : P.rows(a) + 1;
      }
    }
    benchmark::ClobberMemory();
  }
  state.counters["p"] = P.p;
  state.counters["edges"] = static_cast<double>(edges);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * edges));
  // columns read twice and written once, offsets written
  state.SetBytesProcessed(static_cast<std::int64_t>(
      state.iterations() * (edges * 3 * sizeof(vid_t) + offsets * sizeof(eid_t))));
}

BENCHMARK(BM_BuildRowParts)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
