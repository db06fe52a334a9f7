// pipeline_device_test.cpp — the streaming pipeline against a backend with a device of its own
// (fake_backend.hpp): the driver's call order and slots, streamed staging in pieces of any size,
// direct uploads from the host block store, the preload within its chunk cache, many units in
// flight through the device block cache, sliced units and packed blocks on every build path,
// re-planning on device out-of-memory; counts equal the brute-force oracle.
#include "fake_backend.hpp"

namespace tristream::stream_test {
namespace {

// The driver's calls in order: one allocation first, then per unit an upload, a count and (after
// it) one wait on the unit's slot, a slot reused only after its previous unit's wait; unit u in
// slot u % slots; the release last. With two slots and with the device block cache's units in
// flight.
TEST(Pipeline, CallsTheBackendInOrder) {
  auto e = test::skewed_graph(1500, 15000, 29);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 97);
  for (bool cache : {false, true}) {
    SCOPED_TRACE(cache ? "device cache" : "two slots");
    FakeBackend dd;
    dd.device_cache = cache;
    CountReport r = count_with_backend(*src, popts(Scheme::Range, 4, false), dd);
    EXPECT_EQ(r.triangles, oracle);
    ASSERT_GE(dd.calls.size(), 2u);
    EXPECT_EQ(dd.calls.front(), "allocate");
    EXPECT_EQ(dd.calls.back(), "release");
    std::map<std::string, int> state;  // per slot: 0 idle, 1 uploaded, 2 counting
    std::uint64_t counts = 0, waits = 0, uploads = 0;
    for (std::size_t x = 1; x + 1 < dd.calls.size(); ++x) {
      const std::string& c = dd.calls[x];
      const std::string slot = c.substr(c.find(' ') + 1);
      if (c.rfind("upload", 0) == 0) {
        EXPECT_EQ(state[slot], 0) << x << ": " << c;
        EXPECT_EQ(slot, std::to_string(uploads++ % static_cast<std::uint64_t>(dd.max_slots)));
        state[slot] = 1;
      } else if (c.rfind("count", 0) == 0) {
        EXPECT_EQ(state[slot], 1) << x << ": " << c;
        state[slot] = 2;
        ++counts;
      } else if (c.rfind("wait", 0) == 0) {
        EXPECT_EQ(state[slot], 2) << x << ": " << c;
        state[slot] = 0;
        ++waits;
      } else {
        ADD_FAILURE() << x << ": " << c;
      }
    }
    EXPECT_EQ(counts, r.plan.units.size());
    EXPECT_EQ(waits, counts);
    EXPECT_EQ(dd.max_slots, cache ? std::max(r.plan.slots, r.plan.in_flight) : r.plan.slots);
    EXPECT_EQ(dd.calls[1], "upload 0");
  }
}

// Graphs for streamed staging: empty rows (isolated vertices), a hub row much longer than the
// pieces, cliques; small chunks so pieces and chunks cut each other everywhere.
std::vector<Case> staging_cases() {
  test::EdgeList sparse = test::random_graph(3000, 2500, 61);  // many empty rows
  test::EdgeList hub = test::complete_graph(12);
  for (vid_t v = 12; v < 900; ++v) hub.emplace_back(0, v);  // row 0: ~900 columns
  for (vid_t v = 12; v + 1 < 900; v += 3) hub.emplace_back(v, v + 1);
  return {
      {"random", test::random_graph(400, 4000, 7)},
      {"skewed", test::skewed_graph(600, 5000, 3)},
      {"sparse", sparse},
      {"hub", hub},
      {"cliques", test::disjoint_cliques(6, 7)},
  };
}

TEST(StreamedStaging, PiecesOfAnySizeCountExactly) {
  // Pieces smaller than one offset or column (1, 3, 7 bytes), rows spanning pieces, pieces larger
  // than the slot; one, two and three staging buffers; CPU backend and the fake device.
  for (const auto& c : staging_cases()) {
    SCOPED_TRACE(c.name);
    const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(c.edges);
    for (std::uint64_t chunk : {5u, 333u}) {
      auto src = memory_source(g, chunk);
      auto cpu = cpu_backend();
      const count_t in_core =
          count_with_backend(*src, popts(Scheme::Range, 1, false), *cpu).triangles;
      EXPECT_EQ(in_core, oracle);
      for (std::int64_t piece : {1, 3, 7, 8, 13, 256, 4100, 1 << 22})
        for (int buffers : {1, 2, 3}) {
          SCOPED_TRACE("chunk " + std::to_string(chunk) + " piece " + std::to_string(piece) +
                       " buffers " + std::to_string(buffers));
          auto o = popts(Scheme::Range, 1, true);
          Knobs k;
          k.piece_bytes = piece;
          k.staging_buffers = buffers;
          FakeBackend dd;
          for (StreamingBackend* be :
               {static_cast<StreamingBackend*>(cpu.get()), static_cast<StreamingBackend*>(&dd)}) {
            CountReport r = count_tuned(*src, o, *be, k);
            EXPECT_EQ(r.triangles, in_core) << be->name();
            EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u) << be->name();
            EXPECT_EQ(r.stats.units, 1u);
          }
          const std::uint64_t slot = in_core_bytes(g.n(), g.m(), false);
          EXPECT_EQ(dd.pieces, (slot + static_cast<std::uint64_t>(piece) - 1) /
                                   static_cast<std::uint64_t>(piece));
          EXPECT_EQ(dd.streamed_allocations, 1u);
        }
    }
  }
}

// Direct uploads: with every block preloaded and a backend with its own device memory, the
// blocks are uploaded straight from the host block cache (registered with the backend, not
// copied into the host slot). Counts and per-vertex counts equal the oracle, the host images the
// layouts lend the backend equal what reached the device, every source was registered and every
// registration is undone; a backend that refuses registration gets the copy path. Both with the
// device block cache (blocks by key, as the CUDA backend keeps them) and with two device slots.
TEST(Pipeline, DirectUploadsFromTheBlockCache) {
  auto e = test::skewed_graph(2500, 30000, 83);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 211);
  std::uint64_t range_packed = 0;
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair})
    for (std::uint32_t p : {2u, 3u, 4u, 7u})
      for (bool pv : {false, true})
        for (bool refuse : {false, true})
          for (bool cache : {true, false}) {
            SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + (pv ? " per-vertex" : "") +
                         (refuse ? " refused" : "") + (cache ? " device cache" : " slots"));
            FakeBackend dd;
            dd.refuse_registration = refuse;
            dd.device_cache = cache;
            CountReport r = count_with_backend(*src, popts(s, p, pv), dd);
            ASSERT_EQ(r.plan.partition.p, p);
            ASSERT_GE(r.plan.block_cache_bytes, r.plan.row_parts_bytes);  // preloaded
            ASSERT_GT(r.plan.device_cache_bytes, 0u);
            EXPECT_EQ(r.triangles, oracle);
            if (pv) {
              EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
            }
            EXPECT_EQ(dd.image_mismatches, 0u);
            EXPECT_EQ(dd.unregistered_sources, 0u);
            EXPECT_EQ(dd.registered.load(), dd.unregistered.load());
            if (s == Scheme::Range && p >= 3) range_packed += dd.packed_uploads;
            if (refuse) {
              EXPECT_EQ(dd.direct_copies, 0u);
            } else {
              EXPECT_GT(dd.direct_copies, 0u);
              EXPECT_GT(dd.registered.load(), 0u);
              EXPECT_EQ(dd.host_slot_bytes, 0u);  // nothing went through the host slot
            }
            EXPECT_EQ(dd.max_slots, cache && !pv ? r.plan.in_flight : 2);
            if (cache) {
              EXPECT_EQ(dd.cache_mismatches, 0u);
              EXPECT_EQ(dd.cache_hits + dd.cache_misses, distinct_blocks(r.plan));
              EXPECT_EQ(dd.cached_upload_bytes, r.stats.upload.bytes);
              EXPECT_LE(r.stats.upload.bytes, r.plan.bytes_moved);
              if (p >= 3) {
                EXPECT_GT(dd.cache_hits, 0u);
                EXPECT_GT(r.stats.device_cache_hit_bytes, 0u);
              }
            } else {
              EXPECT_EQ(dd.cache_hits + dd.cache_misses, 0u);
              EXPECT_EQ(r.stats.device_cache_hit_bytes, 0u);
            }
          }
  EXPECT_GT(range_packed, 0u);
}

// The background preload is a pipeline (decompressor, builder, registrar on threads of their
// own): for chunk caches from a sixteenth of the graph (row parts built on demand) to twice the
// graph, 1 or 4 threads, with and without registration, the count is exact, every cached block is
// registered and unregistered once (or none when registration is refused), the chunk cache never
// holds more than its capacity (the batch built plus the next one decompressed ahead), and a chunk
// is decompressed again only when batches that are not consecutive share it: never with hash (every
// row part reads every chunk), at most two chunks per row part with range.
TEST(Pipeline, PreloadPipelineStaysWithinTheChunkCache) {
  auto e = test::skewed_graph(2500, 30000, 71);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 131);
  const std::uint64_t raw = src->m() * sizeof(vid_t);
  std::uint64_t max_chunk = 0;
  for (const auto& c : src->chunks()) max_chunk = std::max(max_chunk, c.edges * sizeof(vid_t));
  ASSERT_GT(src->chunks().size(), 100u);
  int preloaded = 0;
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {3u, 16u})
      for (std::uint64_t cache : {raw / 16, raw / 4, raw / 2, 2 * raw})
        for (int how = 0; how < 3; ++how) {
          const unsigned threads = how == 0 ? 1 : 4;
          const bool refuse = how == 2;
          if (s == Scheme::Hash && p == 16 && cache < raw) continue;  // 816 walks of the graph
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " chunk cache " +
                       std::to_string(cache) + " threads " + std::to_string(threads) +
                       (refuse ? " refused" : ""));
          auto o = popts(s, p, false);
          Knobs k;
          o.threads = threads;
          k.chunk_cache_bytes = static_cast<std::int64_t>(cache);
          FakeBackend dd;
          dd.refuse_registration = refuse;
          CountReport r = count_tuned(*src, o, dd, k);
          ASSERT_EQ(r.plan.partition.p, p);
          ASSERT_GE(r.plan.block_cache_bytes, r.plan.row_parts_bytes);  // a preload
          EXPECT_EQ(r.triangles, oracle);
          EXPECT_EQ(dd.image_mismatches, 0u);
          EXPECT_EQ(dd.unregistered_sources, 0u);
          EXPECT_EQ(dd.registered.load(), dd.unregistered.load());
          if (refuse) {
            EXPECT_EQ(dd.registered.load(), 0u);
          }
          EXPECT_LE(r.stats.chunk_cache_peak_bytes, cache);
          EXPECT_GT(r.stats.chunk_cache_peak_bytes, 0u);
          if (cache == 2 * raw) {
            ++preloaded;
            EXPECT_GT(dd.direct_copies + dd.host_slot_bytes, 0u);
            if (!refuse) {
              EXPECT_GT(dd.registered.load(), 0u);
            }
            if (s == Scheme::Hash) {
              EXPECT_EQ(r.stats.decompress.bytes, raw);
            } else {
              EXPECT_GE(r.stats.decompress.bytes, raw);
              EXPECT_LE(r.stats.decompress.bytes, raw + 2 * p * max_chunk);
            }
          }
        }
  EXPECT_EQ(preloaded, 2 * 2 * 3);
}

// With the device block cache, up to Plan::in_flight units are in flight (the fake runs a
// unit's copies and count only when it is collected, as a GPU would run queued work): on every
// build path — the preloaded block cache with direct uploads, the same through the host slots
// (registration refused), parallel walks and the sequential walk into the host slots — the count
// is exact, every host image is intact when its copy runs, no block is evicted under a unit in
// flight, and with direct uploads a unit uploads exactly when the planner's replay (its lanes
// and early collections included) says it does.
TEST(Pipeline, ManyUnitsInFlightThroughTheDeviceCache) {
  auto e = test::skewed_graph(2000, 24000, 5);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 173);
  const std::int64_t caches[3][2] = {{-1, -1}, {1ll << 30, 0}, {0, 0}};
  std::uint64_t early = 0;
  int most = 0;
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair})
    for (std::uint32_t p : {3u, 7u, 16u})
      for (int path = 0; path < 3; ++path)
        for (bool refuse : {false, true}) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " path " +
                       std::to_string(path) + (refuse ? " refused" : ""));
          auto o = popts(s, p, false);
          Knobs k;
          k.chunk_cache_bytes = caches[path][0];
          k.block_cache_bytes = caches[path][1];
          // a slow link (10 MB/s), so that on this small graph uploads weigh like kernels and
          // the planner's estimate prefers deep queues for some of these plans
          k.upload_bytes_per_s = 1e7;
          FakeBackend dd;
          dd.refuse_registration = refuse;
          CountReport r = count_tuned(*src, o, dd, k);
          ASSERT_EQ(r.plan.partition.p, p);
          EXPECT_EQ(dd.max_slots, r.plan.in_flight);
          most = std::max(most, r.plan.in_flight);
          EXPECT_EQ(r.triangles, oracle);
          EXPECT_EQ(r.stats.units, r.plan.units.size());
          EXPECT_EQ(dd.image_mismatches, 0u);
          EXPECT_EQ(dd.cache_mismatches, 0u);
          EXPECT_EQ(dd.unregistered_sources, 0u);
          EXPECT_EQ(dd.cache_hits + dd.cache_misses, distinct_blocks(r.plan));
          if (path > 0 || refuse) {
            EXPECT_GT(dd.host_slot_bytes, 0u);
          }
          // (a unit built in a host slot waits for that slot's previous unit as well, which the
          // planner does not foresee: the replay is exact with direct uploads)
          std::uint64_t wrong = 0;
          for (std::size_t u = 0; u < r.plan.units.size() && path == 0 && !refuse; ++u)
            wrong += (dd.unit_uploads.at(static_cast<std::int64_t>(u)) > 0) !=
                     (r.plan.units[u].upload_bytes > 0);
          EXPECT_EQ(wrong, 0u);
          // the preload's blocks live in one arena, registered once, and unregistered by the end
          if (path == 0 && !refuse) {
            EXPECT_EQ(dd.registered.load(), 1u);
          }
          EXPECT_EQ(dd.unregistered.load(), dd.registered.load());
          early += dd.early_collections;
        }
  EXPECT_GE(most, 8);    // the planner chose deep queues here
  EXPECT_GT(early, 0u);  // the cache's room, not only the lanes, limited the units in flight
}

// Slices (the tail cover's pieces of a heavy unit, WorkUnit::slices): a sliced task counts only
// the triangles whose middle vertex lies in its slice of C's rows, so its slices together count
// it exactly once. Every other unit of range and hash plans (p in {3, 7}) is cut into 2, 5 or
// 64 slices (more slices than some blocks have rows: empty slices), on the CPU backend and on the
// fake device with its device block cache, totals and per vertex against the oracle.
TEST(Pipeline, SlicedUnitsCountExactly) {
  auto e = test::skewed_graph(1500, 16000, 11);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 211);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair})
    for (std::uint32_t p : {3u, 7u})
      for (std::uint32_t slices : {2u, 5u, 64u})
        for (bool per_vertex : {false, true})
          for (bool fake_device : {false, true}) {
            SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " slices " +
                         std::to_string(slices) + (per_vertex ? " per-vertex" : "") +
                         (fake_device ? " fake device" : " cpu"));
            auto o = popts(s, p, per_vertex);
            FakeBackend dd;
            auto cpu = cpu_backend();
            StreamingBackend& be = fake_device ? static_cast<StreamingBackend&>(dd) : *cpu;
            const Plan base = plan_graph(*src, resolve_plan_options(o, &be));
            ASSERT_EQ(base.partition.p, p);
            const Plan plan = test::sliced_plan(base, slices, per_vertex, 1);
            std::uint64_t sliced = 0;
            for (const WorkUnit& w : plan.units) sliced += w.slices > 1;
            ASSERT_GT(sliced, 0u);
            CountReport r = run_plan(*src, plan, be, o);
            EXPECT_EQ(r.triangles, oracle);
            EXPECT_EQ(r.stats.units, plan.units.size());
            if (per_vertex) {
              EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
            }
            if (fake_device) {
              EXPECT_EQ(dd.sliced_counts, sliced);
              EXPECT_EQ(dd.image_mismatches, 0u);
              EXPECT_EQ(dd.cache_mismatches, 0u);
            }
          }
}

// Sparse blocks travel packed (packed_rows.hpp) from every parallel build path: the block
// cache (direct uploads, and through the host slot when registration is refused) and parallel
// walks into the slot; the sequential walk writes dense offsets. The fake device expands packed
// blocks as the CUDA backend does and checks every host image; the CPU backend expands in its
// slot. Range and hash blocks of a sparse graph (hash packs from p = 3 here), p in {3, 7, 16}.
TEST(Pipeline, PackedBlocksOnEveryBuildPath) {
  auto e = test::random_graph(4000, 6000, 97);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 131);
  // {chunk cache, block cache}: preloaded block cache, parallel walks into the slot, sequential
  const std::int64_t caches[3][2] = {{-1, -1}, {1ll << 30, 0}, {0, 0}};
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {3u, 7u, 16u})
      for (int path = 0; path < 3; ++path)
        for (int backend = 0; backend < 3; ++backend) {  // fake, fake refusing, CPU
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " path " +
                       std::to_string(path) + " backend " + std::to_string(backend));
          auto o = popts(s, p, true);
          Knobs k;
          k.chunk_cache_bytes = caches[path][0];
          k.block_cache_bytes = caches[path][1];
          FakeBackend dd;
          dd.refuse_registration = backend == 1;
          auto cpu = cpu_backend();
          CountReport r = count_tuned(*src, o, backend == 2 ? *cpu : dd, k);
          ASSERT_EQ(r.plan.partition.p, p);
          EXPECT_EQ(r.triangles, oracle);
          EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          if (backend == 2) continue;
          EXPECT_EQ(dd.image_mismatches, 0u);
          EXPECT_EQ(dd.unregistered_sources, 0u);
          if (path < 2) {
            EXPECT_GT(dd.packed_uploads, 0u);
          } else {
            EXPECT_EQ(dd.packed_uploads, 0u);
          }
          // the plan's upload estimate (packed blocks where smaller, the device block cache) is
          // an upper bound of what was uploaded where the builders pack; the sequential walk
          // writes dense offsets
          EXPECT_GT(r.stats.upload.bytes, 0u);
          if (path < 2) {
            EXPECT_LE(r.stats.upload.bytes, r.plan.bytes_moved);
          }
          EXPECT_EQ(dd.cache_mismatches, 0u);
          EXPECT_GT(dd.cache_hits, 0u);
        }
}

// PackedRows: expansion, degrees and the packing rule against dense references, on seeded
// random blocks of several sizes and densities (empty rows at both ends included).
TEST(PackedRows, ExpandsAndAnswersDegreesLikeDenseOffsets) {
  std::mt19937_64 rng(2026);
  for (std::uint64_t rows : {0u, 1u, 2u, 7u, 64u, 1000u, 40000u})
    for (double fill : {0.0, 0.01, 0.3, 1.0}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + " fill " + std::to_string(fill));
      std::vector<eid_t> dense(rows + 1, 0);
      std::vector<vid_t> ids;
      std::vector<eid_t> offs{0};
      std::bernoulli_distribution has(fill);
      std::uniform_int_distribution<eid_t> deg(1, 5);
      for (std::uint64_t u = 0; u < rows; ++u) {
        const eid_t d = has(rng) ? deg(rng) : 0;
        dense[u + 1] = dense[u] + d;
        if (d) {
          ids.push_back(static_cast<vid_t>(u));
          offs.push_back(dense[u + 1]);
        }
      }
      const PackedRows pr{ids.size(), ids.data(), offs.data()};
      EXPECT_EQ(pr.edges(), dense[rows]);
      std::vector<eid_t> out(rows + 1, ~eid_t{0});
      expand_packed(pr, rows, out.data());
      EXPECT_EQ(out, dense);
      std::uint64_t wrong = 0;
      for (std::uint64_t u = 0; u < rows; ++u) wrong += pr.degree(u) != dense[u + 1] - dense[u];
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(packs(rows, ids.size()), packed_bytes(ids.size()) < (rows + 1) * sizeof(eid_t));
    }
  EXPECT_EQ(packed_bytes(0), 8u);
  EXPECT_EQ(packed_bytes(3), 16u + 32u);  // ids padded to 8 bytes, then 4 offsets
  EXPECT_FALSE(packs(0, 0));              // a block without rows stays dense
  EXPECT_TRUE(packs(1, 0));
  EXPECT_FALSE(packs(10, 10));  // every row with columns: 12 bytes a row against 8
}

TEST(StreamedStaging, EmptyGraphCountsZero) {
  OrientedGraph g;
  g.csr.offsets.assign(6, 0);
  g.csr.col_space = 5;
  auto src = memory_source(g, 8);
  auto o = popts(Scheme::Range, 1, true);
  Knobs k;
  k.piece_bytes = 3;
  FakeBackend dd;
  CountReport r = count_tuned(*src, o, dd, k);
  EXPECT_EQ(r.triangles, 0u);
  EXPECT_EQ(r.per_vertex, std::vector<count_t>(5, 0));
  EXPECT_EQ(dd.pieces, 0u);
}

// The planner chooses streamed staging when the host slot does not fit the host budget; the run
// reports every piece as an upload span, and the bytes built and uploaded are the slot's.
TEST(StreamedStaging, PlannedFromTheHostBudgetWithStats) {
  auto e = test::random_graph(5000, 60000, 41);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 1024);
  const std::uint64_t slot = in_core_bytes(g.n(), g.m(), false);
  const std::uint64_t host = (g.n() + 1) * 8 + 2 * 1024 * 4 + slot / 2;
  PlanOptions po;
  po.host_budget = host;
  po.threads = 2;  // device_is_host = false: a device holds the slot
  Plan plan = plan_graph(*src, po);
  ASSERT_TRUE(plan.streamed_staging());
  ASSERT_EQ(plan.partition.p, 1u);
  EXPECT_LE(plan.host_bytes, host);
  test::TempDir tmp;
  auto o = popts(Scheme::Auto, 0, false);
  o.trace_path = tmp.file("trace.json");
  auto be = cpu_backend();
  CountReport r = run_plan(*src, plan, *be, o);
  EXPECT_EQ(r.triangles, oracle);
  const std::uint64_t pieces = (slot + plan.piece_bytes - 1) / plan.piece_bytes;
  EXPECT_EQ(r.stats.upload.bytes, slot);
  EXPECT_EQ(r.stats.upload.spans, pieces);
  EXPECT_EQ(r.stats.transform.bytes, slot);
  EXPECT_EQ(r.stats.decompress.bytes, g.m() * sizeof(vid_t));  // every chunk once
  EXPECT_EQ(r.stats.kernel.spans, 1u);
  EXPECT_GE(r.stats.transform.busy_s, 0);
  // through count_with_backend with a device: the same plan, chosen from --host-memory
  auto o2 = popts(Scheme::Auto, 0, false);
  o2.host_memory = host;
  FakeBackend dd;
  CountReport r2 = count_with_backend(*src, o2, dd);
  EXPECT_EQ(r2.triangles, oracle);
  EXPECT_TRUE(r2.plan.streamed_staging());
  EXPECT_EQ(dd.pieces, pieces);
}

TEST(StreamedStaging, SigintStopsBetweenPieces) {
  auto e = test::random_graph(2000, 20000, 67);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 100);
  clear_interrupt();
  struct sigaction old;
  sigaction(SIGINT, nullptr, &old);
  install_sigint_handler();
  FakeBackend dd;
  dd.on_piece = [&] {
    if (dd.pieces == 3) std::raise(SIGINT);
  };
  auto o = popts(Scheme::Range, 1, false);
  Knobs k;
  k.piece_bytes = 1000;
  CountReport r = count_tuned(*src, o, dd, k);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stats.units, 0u);
  EXPECT_EQ(dd.pieces, 3u);
  EXPECT_GE(dd.releases, 1u);
  clear_interrupt();
  sigaction(SIGINT, &old, nullptr);
}

TEST(StreamedStaging, DeviceOutOfMemoryReplans) {
  // The streamed in-core plan asks for the whole graph on the device; the device has less, so
  // the pipeline re-plans with half the budget, out of core, and still counts exactly.
  auto e = test::random_graph(5000, 60000, 71);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 1024);
  const std::uint64_t slot = in_core_bytes(g.n(), g.m(), false);
  auto o = popts(Scheme::Auto, 0, false);
  o.gpu_memory = slot;  // the plan believes the graph fits ...
  o.host_memory = (g.n() + 1) * 8 + 2 * 1024 * 4 + slot / 2;  // ... with streamed staging
  FakeBackend dd;
  dd.device_bytes = slot / 2;  // ... but the device has half of it
  CountReport r = count_with_backend(*src, o, dd);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GE(r.stats.replans, 1u);
  EXPECT_GT(r.plan.partition.p, 1u);
  EXPECT_FALSE(r.plan.streamed_staging());
  EXPECT_EQ(dd.streamed_allocations, 0u);  // the first allocation threw before it counted
}

TEST(Pipeline, DeviceOutOfMemoryReplans) {
  auto e = test::random_graph(2000, 20000, 29);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 500);
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  auto o = popts(Scheme::Auto, 0, false);
  o.gpu_memory = full;  // the plan believes the graph fits ...
  FakeBackend dd;
  dd.device_bytes = full / 3;  // ... but the device has a third of it
  CountReport r = count_with_backend(*src, o, dd);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GE(r.stats.replans, 1u);
  EXPECT_GT(r.plan.partition.p, 1u);
  // the failed allocation is released (and nothing uploaded) before the next plan allocates
  const auto second = std::find(dd.calls.begin() + 1, dd.calls.end(), "allocate");
  ASSERT_NE(second, dd.calls.end());
  EXPECT_EQ(dd.calls[0], "allocate");
  EXPECT_GE(second - dd.calls.begin(), 2);
  EXPECT_TRUE(std::all_of(dd.calls.begin() + 1, second, [](auto& c) { return c == "release"; }));
  EXPECT_EQ(dd.calls.back(), "release");
  // Too little for anything: the out-of-memory surfaces after max_replans, each one released.
  FakeBackend tiny;
  tiny.device_bytes = 64;
  o.max_replans = 2;
  EXPECT_THROW(count_with_backend(*src, o, tiny), DeviceOutOfMemory);
  EXPECT_EQ(std::count(tiny.calls.begin(), tiny.calls.end(), "allocate"), 3);  // 1 + 2 re-plans
  EXPECT_EQ(tiny.calls.back(), "release");
  EXPECT_EQ(tiny.pieces + tiny.sliced_counts, 0u);
}

}  // namespace
}  // namespace tristream::stream_test
