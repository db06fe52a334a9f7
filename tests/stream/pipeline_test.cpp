// pipeline_test.cpp — the streaming pipeline on the CPU backend: every scheme and p gives exactly
// the p = 1 count and the brute-force oracle (totals and per vertex), with small chunks so units
// span chunks; small host budgets; device OOM re-plans; SIGINT; statistics and traces; .tcsr files.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <tuple>

#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

using test::EdgeList;

// Reads a whitespace-separated edge list from tests/data (comments start with # or %), compacting
// the ids to 0..n-1 in order of first appearance.
EdgeList load_data(const std::string& name) {
  std::ifstream f(test::data_file(name));
  std::string line;
  std::map<std::uint64_t, vid_t> ids;
  EdgeList e;
  auto id = [&](std::uint64_t x) {
    auto it = ids.find(x);
    if (it != ids.end()) return it->second;
    const vid_t v = static_cast<vid_t>(ids.size());
    ids.emplace(x, v);
    return v;
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '%') continue;
    std::istringstream in(line);
    std::uint64_t a, b;
    if (in >> a >> b) {
      const vid_t x = id(a);
      const vid_t y = id(b);
      e.emplace_back(x, y);
    }
  }
  return e;
}

struct Case {
  std::string name;
  EdgeList edges;
};

std::vector<Case> cases() {
  return {
      {"karate", load_data("karate.el")},
      {"k5_messy", load_data("k5_messy.el")},
      {"petersen", load_data("petersen.el")},
      {"clique30", test::complete_graph(30)},
      {"cliques", test::disjoint_cliques(6, 7)},
      {"friendship", test::friendship(12)},
      {"wheel", test::wheel(25)},
      {"random", test::random_graph(400, 4000, 7)},
      {"skewed", test::skewed_graph(600, 5000, 3)},
  };
}

std::unique_ptr<StreamingBackend> cpu_backend(std::uint64_t simulated = 0) {
  CpuBackendOptions o;
  o.counter.threads = 2;
  o.simulated_device_bytes = simulated;
  return make_cpu_streaming_backend(make_cpu_counter(o.counter), o);
}

PipelineOptions popts(Scheme s, std::uint32_t p, bool per_vertex) {
  PipelineOptions o;
  o.backend = "cpu";
  o.scheme = s;
  o.parts = p;
  o.per_vertex = per_vertex;
  o.threads = 2;
  o.handle_sigint = false;
  return o;
}

// The distinct blocks of every unit of a plan, summed over the units (A, and B and C unless
// they are A or B).
std::uint64_t distinct_blocks(const Plan& plan) {
  std::uint64_t n = 0;
  for (const WorkUnit& w : plan.units) n += 1 + (w.b_is_a ? 0 : 1) + (w.c_is_a || w.c_is_b ? 0 : 1);
  return n;
}

// Vertices (original ids) whose per-vertex count differs from the brute-force oracle; `got` is
// indexed by oriented id.
std::uint64_t per_vertex_mismatches(const std::vector<count_t>& got,
                                    const std::vector<vid_t>& new_of_old,
                                    const std::vector<count_t>& oracle) {
  std::uint64_t bad = 0;
  for (std::size_t v = 0; v < oracle.size(); ++v) bad += got[new_of_old[v]] != oracle[v];
  return bad;
}

// A test graph, oriented, with its brute-force oracle: n, the old -> new id map, the oriented
// graph, the triangle count and each vertex's count under its original id.
struct Oracled {
  std::uint64_t n = 0;
  std::vector<vid_t> new_of_old;
  OrientedGraph g;
  count_t triangles = 0;
  std::vector<count_t> per_vertex;
};
Oracled oracled(const test::EdgeList& e) {
  Oracled o;
  o.n = test::vertex_count(e);
  o.g = orient_edge_list(o.n, e, &o.new_of_old);
  o.triangles = test::brute_force_triangles(o.n, e);
  o.per_vertex = test::brute_force_per_vertex(o.n, e);
  return o;
}

class EveryScheme : public ::testing::TestWithParam<std::tuple<Scheme, std::uint32_t>> {};

TEST_P(EveryScheme, EqualsTheOracleAndInCore) {
  const auto [scheme, p] = GetParam();
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(c.edges);
    for (std::uint64_t chunk : {5u, 64u}) {
      SCOPED_TRACE("chunk_edges " + std::to_string(chunk));
      auto src = memory_source(g, chunk);
      auto be = cpu_backend();
      CountReport in_core = count_with_backend(*src, popts(Scheme::Range, 1, false), *be);
      EXPECT_EQ(in_core.triangles, oracle);
      CountReport r = count_with_backend(*src, popts(scheme, p, true), *be);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_EQ(r.plan.partition.p, g.m() ? p : 1u);
      ASSERT_EQ(r.per_vertex.size(), n);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      EXPECT_EQ(r.stats.units, r.plan.units.size());
      EXPECT_FALSE(r.interrupted);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SchemesAndParts, EveryScheme,
                         ::testing::Combine(::testing::Values(Scheme::Range, Scheme::Hash,
                                                              Scheme::Vertex),
                                            ::testing::Values(1u, 2u, 3u, 4u, 7u, 16u)),
                         [](const ::testing::TestParamInfo<std::tuple<Scheme, std::uint32_t>>& pi) {
                           return scheme_name(std::get<0>(pi.param)) + "_p" +
                                  std::to_string(std::get<1>(pi.param));
                         });

// The three ways a unit's blocks are built: from the host block cache, by parallel walks over
// pinned chunks (no block cache), and by the windowed sequential walk (no caches at all).
TEST(Pipeline, EveryBuildPathCountsExactly) {
  auto e = test::skewed_graph(1500, 15000, 53);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 97);
  const std::int64_t caches[3][2] = {{-1, -1}, {1ll << 30, 0}, {0, 0}};
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex})
    for (std::uint32_t p : {2u, 3u, 7u})
      for (const auto& c : caches) {
        SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " chunk cache " +
                     std::to_string(c[0]) + " block cache " + std::to_string(c[1]));
        auto o = popts(s, p, true);
        o.chunk_cache_bytes = c[0];
        o.block_cache_bytes = c[1];
        auto be = cpu_backend();
        CountReport r = count_with_backend(*src, o, *be);
        EXPECT_EQ(r.triangles, oracle);
        EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      }
}

// The host preparation runs on the pool: blocks are built in two passes over row segments (count,
// then fill in place), the preload decompresses several row parts' chunks at once, and the slot
// copies are cut into pieces; the vertex scheme builds A and C on the pool when the chunks fit.
// Any number of threads builds the same blocks: counts and per-vertex counts equal the oracle on
// 1, 3 and 8 threads, for every build path, for p a power of two (hash: shifts) and not (hash:
// multiplicative division).
TEST(Pipeline, PreparationThreadCountsGiveIdenticalCounts) {
  auto e = test::skewed_graph(2500, 30000, 61);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 211);
  // {chunk cache, block cache, host budget}: as planned (preload), as planned with a host budget
  // that leaves little spare room, blocks built on demand, parallel walks into the slot
  const std::int64_t configs[4][3] = {{-1, -1, 0},
                                      {-1, -1, static_cast<std::int64_t>(g.m() * 20)},
                                      {1ll << 30, 1ll << 30, 0},
                                      {1ll << 30, 0, 0}};
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex})
    for (std::uint32_t p : {3u, 8u})
      for (const auto& c : configs) {
        if (s == Scheme::Vertex && c[1] > 0) continue;  // no block cache in the vertex scheme
        std::vector<count_t> first_pv;
        for (unsigned threads : {1u, 3u, 8u}) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " chunk cache " +
                       std::to_string(c[0]) + " block cache " + std::to_string(c[1]) + " host " +
                       std::to_string(c[2]) + " threads " + std::to_string(threads));
          auto o = popts(s, p, true);
          o.threads = threads;
          o.chunk_cache_bytes = c[0];
          o.block_cache_bytes = c[1];
          o.host_memory = static_cast<std::uint64_t>(c[2]);
          auto be = cpu_backend();
          CountReport r = count_with_backend(*src, o, *be);
          ASSERT_EQ(r.plan.partition.p, p);
          EXPECT_EQ(r.triangles, oracle);
          ASSERT_EQ(r.per_vertex.size(), n);
          EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          if (first_pv.empty())
            first_pv = r.per_vertex;
          else
            EXPECT_TRUE(r.per_vertex == first_pv);
          EXPECT_EQ(r.stats.units, r.plan.units.size());
        }
      }
}

// A source whose chunk `bad` cannot be read (the graph's metadata stays intact).
class FailingSource : public GraphSource {
 public:
  FailingSource(const GraphSource& g, std::uint64_t bad) : g_(g), bad_(bad) {}
  std::string name() const override { return g_.name(); }
  std::uint64_t n() const override { return g_.n(); }
  eid_t m() const override { return g_.m(); }
  const eid_t* offsets() const override { return g_.offsets(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return g_.chunks(); }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    if (k == bad_) throw Error(ErrorKind::Input, "test: chunk " + std::to_string(k) + " is bad");
    g_.read_chunk(k, out);
  }
  std::uint64_t compressed_bytes() const override { return g_.compressed_bytes(); }

 private:
  const GraphSource& g_;
  std::uint64_t bad_;
};

// The blocks are built on a background thread while the first units are counted: a chunk that
// fails there fails the run with its error (and the run joins the thread: no hang, no leak).
TEST(Pipeline, BackgroundPreloadFailureSurfaces) {
  auto e = test::skewed_graph(2000, 20000, 67);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 150);
  ASSERT_GT(src->chunks().size(), 10u);
  for (Scheme s : {Scheme::Range, Scheme::Hash}) {
    SCOPED_TRACE(scheme_name(s));
    auto o = popts(s, 4, false);
    PlanOptions po = resolve_plan_options(o, nullptr);
    po.host_budget = 0;
    Plan plan = plan_graph(*src, po);
    ASSERT_EQ(plan.partition.p, 4u);
    ASSERT_GE(plan.block_cache_bytes, plan.row_parts_bytes);  // every block preloaded
    FailingSource bad(*src, src->chunks().size() - 2);        // a late row part's chunk
    auto be = cpu_backend();
    try {
      run_plan(bad, plan, *be, o);
      FAIL() << "expected an error";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(err.what()).find("chunk"), std::string::npos) << err.what();
    }
    be->release();
  }
}

TEST(Pipeline, AutoWithSmallDeviceBudgets) {
  auto e = test::skewed_graph(3000, 30000, 17);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 300);
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  for (std::uint64_t div : {1u, 2u, 4u, 8u}) {
    for (Scheme s : {Scheme::Auto, Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
      SCOPED_TRACE(scheme_name(s) + " 1/" + std::to_string(div));
      // LSTC's proxy rows (the hubs' edges) make the vertex scheme need more room
      if (s == Scheme::Vertex && div > 1) continue;
      const std::uint64_t budget = full / div;
      auto o = popts(s, 0, false);
      o.gpu_memory = budget;
      auto be = cpu_backend();
      CountReport r = count_with_backend(*src, o, *be);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_LE(r.plan.device_bytes, budget);
      if (div > 1) {
        EXPECT_GT(r.plan.partition.p, 1u);
      }
    }
  }
}

TEST(Pipeline, VertexSchemeOutOfCoreOnDisjointCliques) {
  // Disjoint cliques: each partition's proxies are its own cliques, so LSTC fits small budgets.
  auto e = test::disjoint_cliques(40, 12);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 100);
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  auto o = popts(Scheme::Vertex, 0, true);
  o.gpu_memory = full / 2;
  auto be = cpu_backend();
  CountReport r = count_with_backend(*src, o, *be);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GT(r.plan.partition.p, 1u);
  EXPECT_LE(r.plan.device_bytes, full / 2);
}

// The progress callback sees every unit once, in order, ending at the planned total.
TEST(Pipeline, ReportsProgressPerUnit) {
  auto e = test::random_graph(600, 9000, 17);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 64);
  for (std::uint32_t p : {1u, 3u}) {
    auto o = popts(Scheme::Range, p, false);
    std::vector<std::uint64_t> seen;
    std::uint64_t last_total = 0;
    double last_seconds = -1;
    bool seconds_monotone = true;
    o.on_unit_done = [&](std::uint64_t done, std::uint64_t total, double seconds) {
      seen.push_back(done);
      last_total = total;
      seconds_monotone = seconds_monotone && seconds >= last_seconds;
      last_seconds = seconds;
    };
    auto be = cpu_backend();
    CountReport r = count_with_backend(*src, o, *be);
    ASSERT_EQ(seen.size(), r.plan.units.size()) << "p=" << p;
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i + 1);
    EXPECT_EQ(last_total, r.plan.units.size());
    EXPECT_TRUE(seconds_monotone);
  }
}

TEST(Pipeline, SmallHostBudgetCountsExactly) {
  auto e = test::random_graph(5000, 60000, 23);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 1024);
  // Far less than the graph: the offsets plus a third of the columns.
  const std::uint64_t host = (g.n() + 1) * 8 + g.m() * 4 / 3;
  auto o = popts(Scheme::Auto, 0, false);
  o.host_memory = host;
  auto be = cpu_backend();
  CountReport r = count_with_backend(*src, o, *be);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GT(r.plan.partition.p, 1u);
  EXPECT_LE(r.plan.host_bytes, host);
  EXPECT_LT(2 * r.plan.slot_bytes, g.m() * 4);
}

TEST(Pipeline, DeviceOutOfMemoryReplans) {
  auto e = test::random_graph(2000, 20000, 29);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 500);
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  auto o = popts(Scheme::Auto, 0, false);
  o.gpu_memory = full;              // the plan believes the graph fits ...
  auto be = cpu_backend(full / 3);  // ... but the device has a third of it
  CountReport r = count_with_backend(*src, o, *be);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GE(r.stats.replans, 1u);
  EXPECT_GT(r.plan.partition.p, 1u);
  // Too little for anything: the OOM surfaces after max_replans.
  auto tiny = cpu_backend(64);
  o.max_replans = 2;
  EXPECT_THROW(count_with_backend(*src, o, *tiny), Error);
}

TEST(Pipeline, SigintStopsBetweenUnits) {
  auto e = test::random_graph(500, 5000, 31);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 100);
  clear_interrupt();
  struct sigaction old;
  sigaction(SIGINT, nullptr, &old);
  install_sigint_handler();
  std::raise(SIGINT);
  EXPECT_TRUE(interrupt_requested());
  auto be = cpu_backend();
  CountReport r = count_with_backend(*src, popts(Scheme::Range, 3, false), *be);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stats.units, 0u);
  clear_interrupt();
  sigaction(SIGINT, &old, nullptr);
}

TEST(Pipeline, StatsAndTrace) {
  auto e = test::random_graph(1000, 10000, 37);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 200);
  test::TempDir tmp;
  auto o = popts(Scheme::Range, 3, false);
  o.trace_path = tmp.file("trace.json");
  auto be = cpu_backend();
  CountReport r = count_with_backend(*src, o, *be);
  const auto& s = r.stats;
  EXPECT_GT(s.wall_s, 0);
  EXPECT_EQ(s.kernel.spans, r.plan.units.size());
  EXPECT_GT(s.decompress.bytes, 0u);
  EXPECT_GT(s.transform.bytes, 0u);
  EXPECT_GE(s.exposed_transfer_s, 0);
  EXPECT_LE(s.exposed_transfer_s, s.wall_s + 1e-9);
  EXPECT_DOUBLE_EQ(s.overlap, 1.0);  // nothing is uploaded on the CPU backend
  const std::string j = s.to_json();
  for (const char* key : {"\"wall_s\":", "\"exposed_transfer_s\":", "\"overlap\":", "\"kernel\":{",
                          "\"upload\":{", "\"decompress\":{", "\"transform\":{", "\"read\":{"})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_NE(s.summary().find("units"), std::string::npos);
  const std::string t = test::read_text(o.trace_path);
  EXPECT_NE(t.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(t.find("\"ph\":\"X\""), std::string::npos);
  EXPECT_NE(t.find("kernel u0"), std::string::npos);
}

TEST(Pipeline, EmptyGraphCountsZero) {
  OrientedGraph g;
  g.csr.offsets.assign(6, 0);
  g.csr.col_space = 5;
  auto src = memory_source(g, 8);
  auto be = cpu_backend();
  CountReport r = count_with_backend(*src, popts(Scheme::Auto, 0, true), *be);
  EXPECT_EQ(r.triangles, 0u);
  EXPECT_EQ(r.per_vertex, std::vector<count_t>(5, 0));
}

// ---- streamed staging: the in-core unit built and uploaded in pieces --------------------------

// A backend with a separate "device": device slots apart from the host slots / staging buffers.
// A piece's copy happens late (when the host waits for its buffer, or closes the unit's upload),
// like an asynchronous copy, so a buffer the pipeline overwrote too early uploads wrong bytes and
// the count goes wrong. Every byte of a streamed unit's [upload_from, bytes) must be uploaded
// exactly once and nothing outside it. Counts with the CPU counter over the device slot.
//
// The device block cache (use_device_cache, on unless device_cache is false) is emulated as the
// CUDA backend runs it: each block kept by its key as a copy of what was uploaded from the
// layout's host images, the same policy and the same block sizes, so the uploads match the
// planner's simulation; a hit is checked against the layout's host image (cache_mismatches),
// so a key naming two different blocks shows here and in the count. With the cache the slots
// are the plan's units in flight (host slots for the first two only), and a unit's copies and
// count run late, when it is collected, like work queued on a GPU: a host image the pipeline
// freed or overwrote while its unit was in flight, or a block evicted under it, shows as a
// mismatch (or a wrong count).
class DeviceDouble final : public StreamingBackend {
 public:
  bool device_cache = true;
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_mismatches = 0, cache_evictions = 0;
  std::uint64_t cached_upload_bytes = 0;  // bytes uploaded into the cache
  std::uint64_t device_limit = 0;         // throw DeviceOutOfMemory above it (0 = none)
  std::function<void()> on_piece;         // called after every upload_piece_async
  std::uint64_t pieces = 0, streamed_allocations = 0, releases = 0;
  // Direct uploads: register_host refuses when refuse_registration; the counts of
  // registrations, of direct copies, and of blocks whose host image (lent by the layout) differs
  // from what reached the device.
  bool refuse_registration = false;
  std::atomic<std::uint64_t> registered{0}, unregistered{0};
  std::uint64_t direct_copies = 0, image_mismatches = 0, unregistered_sources = 0;
  std::uint64_t host_slot_bytes = 0;  // bytes uploaded from the host slot (not streamed)
  // Packed blocks uploaded and expanded here as the CUDA backend does; their dense rows.
  std::uint64_t packed_uploads = 0, packed_dense_rows = 0;
  std::uint64_t sliced_counts = 0;  // counts of slices (UnitLayout::sliced)

  bool register_host(void* p, std::uint64_t bytes) override {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);
    EXPECT_EQ(bytes % 4096, 0u);
    if (refuse_registration) return false;
    std::lock_guard<std::mutex> lk(reg_mu_);
    EXPECT_EQ(live_.count(p), 0u) << "registered twice";
    live_[p] = bytes;
    ++registered;
    return true;
  }
  void unregister_host(void* p) noexcept override {
    std::lock_guard<std::mutex> lk(reg_mu_);
    live_.erase(p);
    ++unregistered;
  }

  bool use_device_cache(std::uint64_t capacity) override {
    cache_on_ = device_cache && capacity > 0;
    cache_ = DeviceBlockCache(capacity);
    entries_.clear();
    return cache_on_;
  }

  std::string name() const override { return "double"; }
  std::string describe() const override { return "device double"; }
  bool device_is_host() const override { return false; }
  std::uint64_t free_device_bytes() override { return device_limit; }
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    EXPECT_TRUE(slots >= 1 && slots <= (cache_on_ ? 31 : 2)) << slots << " slots";
    max_slots = std::max(max_slots, slots);
    alloc_device(slots, slot_bytes, pv_rows);
    for (int s = 0; s < slots && (!cache_on_ || s < 2); ++s) host_[s].assign(slot_bytes / 8 + 1, 0);
  }
  int max_slots = 0;                                   // the most slots (units in flight) allocated
  std::map<std::int64_t, std::uint64_t> unit_uploads;  // device cache: bytes uploaded per unit
  std::uint64_t early_collections = 0;  // units collected before their turn (cache room)
  bool device_cache_fits(const UnitLayout& L) override {
    if (!cache_on_) return true;
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    const bool fits = cache_.fits(req, L.num_blocks);
    early_collections += fits ? 0 : 1;
    return fits;
  }
  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    alloc_device(slots, slot_bytes, pv_rows);
    staging_.assign(static_cast<std::size_t>(buffers),
                    std::vector<std::uint64_t>(piece_bytes / 8 + 1));
    pending_.assign(static_cast<std::size_t>(buffers), Copy{});
    piece_bytes_ = piece_bytes;
    ++streamed_allocations;
  }
  unsigned char* host_slot(int s) override {
    auto& h = host_.at(static_cast<std::size_t>(s));
    return h.empty() ? nullptr : reinterpret_cast<unsigned char*>(h.data());
  }
  unsigned char* staging_buffer(int b) override {
    return reinterpret_cast<unsigned char*>(staging_.at(static_cast<std::size_t>(b)).data());
  }
  void wait_staging(int b) override { complete(b); }
  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    Copy& c = pending_.at(static_cast<std::size_t>(b));
    if (c.active) {
      ADD_FAILURE() << "staging buffer " << b << " reused before wait_staging";
      complete(b);
    }
    EXPECT_GT(bytes, 0u);
    EXPECT_LE(bytes, piece_bytes_);
    EXPECT_LE(at + bytes, slot_bytes_);
    c = Copy{true, s, at, bytes};
    ++pieces;
    if (on_piece) on_piece();
  }
  void upload_async(int s, const UnitLayout& L) override {
    auto* dev = reinterpret_cast<unsigned char*>(dev_[s].data());
    if (cache_on_ && !L.streamed) {
      upload_cached(s, L);
      return;
    }
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      off_[s][bi] = reinterpret_cast<const eid_t*>(dev + L.blocks[bi].offsets_at);
      cols_[s][bi] = reinterpret_cast<const vid_t*>(dev + L.blocks[bi].cols_at);
    }
    if (!L.streamed) {
      std::memcpy(dev + L.upload_from, host_slot(s) + L.upload_from, L.bytes - L.upload_from);
      host_slot_bytes += L.bytes - L.upload_from;
      for (const DirectUpload& d : L.direct) {
        EXPECT_LE(d.at + d.bytes, slot_bytes_);
        const bool from_slot = in_host_slot(s, d.host, d.bytes);
        unregistered_sources += from_slot || registered_range(d.host, d.bytes) ? 0 : 1;
        std::memcpy(dev + d.at, d.host, d.bytes);
        if (from_slot)
          host_slot_bytes += d.bytes;
        else
          ++direct_copies;
      }
      // packed blocks: their images (registered or in the host slot) expanded into place
      for (int bi = 0; bi < L.num_blocks; ++bi) {
        const SlotBlock& b = L.blocks[bi];
        if (!b.packed || !L.uploads(bi)) continue;
        const PackedRows& hp = L.host_packed[bi];
        EXPECT_TRUE(hp.valid());
        EXPECT_EQ(hp.count, b.packed_rows);
        EXPECT_EQ(hp.edges(), b.edges);
        for (const void* q :
             {static_cast<const void*>(hp.ids), static_cast<const void*>(hp.offsets)})
          unregistered_sources +=
              in_host_slot(s, q, 1) || registered_range(static_cast<const unsigned char*>(q), 1)
                  ? 0
                  : 1;
        expand_packed(hp, b.rows, reinterpret_cast<eid_t*>(dev + b.offsets_at));
        ++packed_uploads;
        packed_dense_rows += b.rows;
      }
      return;
    }
    for (std::size_t b = 0; b < pending_.size(); ++b)
      if (pending_[b].active && pending_[b].slot == s) complete(static_cast<int>(b));
    std::uint64_t wrong = 0;
    for (std::uint64_t x = 0; x < cover_[s].size(); ++x)
      wrong += cover_[s][x] != (x >= L.upload_from && x < L.bytes ? 1 : 0);
    EXPECT_EQ(wrong, 0u) << "bytes of unit " << L.unit << " not uploaded exactly once";
    std::fill(cover_[s].begin(), cover_[s].end(), 0);
  }
  void count_async(int s, const UnitLayout& L) override {
    result_[s] = SlotResult{};
    PerVertexOut pv;
    if (L.per_vertex) {
      std::uint64_t at = 0;
      count_t* spaces[3] = {nullptr, nullptr, nullptr};
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = pv_[s].data() + at;
        std::fill(spaces[x], spaces[x] + L.space_rows[x], 0);
        at += L.space_rows[x];
        result_[s].per_vertex[x] = spaces[x];
      }
      pv = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    if (L.sliced) ++sliced_counts;
    if (cache_on_ && !L.streamed) {  // runs when collected (wait), after its late copies
      late_[s] = L;
      late_pv_[s] = pv;
      late_count_[s] = true;
      return;
    }
    run_count(s, L, pv, false);
  }
  SlotResult wait(int s) override {
    if (late_count_[s]) {  // the unit's queued work: its copies into the cache, then its count
      late_count_[s] = false;
      run_cached(s, late_[s]);
      run_count(s, late_[s], late_pv_[s], true);
    }
    if (cache_on_) {
      cache_.release(s);
      result_[s].uploaded_bytes = static_cast<std::int64_t>(uploaded_[s]);
      result_[s].cache_hit_bytes = hit_bytes_[s];
      result_[s].upload_start = result_[s].upload_end = 0;  // an instant copy, so it is recorded
    }
    return result_[s];
  }
  void release() override {
    dev_.clear();
    host_.clear();
    cover_.clear();
    staging_.clear();
    pending_.clear();
    ++releases;
  }

 private:
  struct Copy {
    bool active = false;
    int slot = 0;
    std::uint64_t at = 0, bytes = 0;
  };
  void alloc_device(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) {
    const std::uint64_t need =
        cache_on_ ? cache_.capacity() : static_cast<std::uint64_t>(slots) * slot_bytes;
    if (device_limit && need > device_limit)
      throw DeviceOutOfMemory("out of memory (device double)", need);
    // the tests' graphs are small: a larger slot is a planner bug (and the bound keeps g++ 13's
    // -Wstringop-overflow from reasoning about sizes beyond any object)
    if (slot_bytes > (std::uint64_t{1} << 32) || pv_rows > (std::uint64_t{1} << 32))
      throw DeviceOutOfMemory("device double: slot of " + std::to_string(slot_bytes) + " bytes",
                              slot_bytes);
    release();
    const auto n = static_cast<std::size_t>(slots);
    dev_.resize(n);
    host_.resize(n);
    cover_.resize(n);
    pv_.assign(n, std::vector<count_t>(pv_rows, 0));
    result_.assign(n, SlotResult{});
    off_.assign(n, {nullptr, nullptr, nullptr});
    cols_.assign(n, {nullptr, nullptr, nullptr});
    uploaded_.assign(n, 0);
    hit_bytes_.assign(n, 0);
    late_.assign(n, UnitLayout{});
    late_pv_.assign(n, PerVertexOut{});
    late_count_.assign(n, false);
    late_hit_.assign(n, {false, false, false});
    for (std::size_t s = 0; s < n && !cache_on_; ++s) {           // the cache replaces device slots
      dev_[s].assign(slot_bytes / 8 + 1, 0xdeadbeefdeadbeefull);  // garbage until uploaded
      cover_[s].assign(slot_bytes, 0);
    }
    slot_bytes_ = slot_bytes;
  }
  // The count of slot s over the blocks off_/cols_ point at, after checking them against the
  // host images the layout lends; with check_csr (late copies) a block that is not a CSR of its
  // shape (copied from a host image overwritten too early) is a mismatch and is not counted.
  void run_count(int s, const UnitLayout& L, const PerVertexOut& pv, bool check_csr) {
    auto view = [&](int bi) {
      return CsrView{L.blocks[bi].rows, off_[s][bi], cols_[s][bi], L.blocks[bi].col_space};
    };
    bool valid = true;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (b.packed != L.host_packed[bi].valid() || b.packed == (L.host_offsets[bi] != nullptr))
        ++image_mismatches;
      if (!same_as_host_image(L, bi, off_[s][bi], cols_[s][bi])) ++image_mismatches;
      if (check_csr) valid &= valid_csr(b, off_[s][bi], cols_[s][bi]);
    }
    std::vector<eid_t> window;
    if (valid)
      result_[s].triangles =
          counter_->count(view(L.a), view(L.b), counted_c(L, view(L.c), window), pv);
    else
      ++image_mismatches;
  }
  // Whether a block's device copy is a CSR of its shape (offsets from 0 to edges, not
  // decreasing; columns inside the column space).
  static bool valid_csr(const SlotBlock& b, const eid_t* off, const vid_t* cols) {
    if (off[0] != 0 || off[b.rows] != b.edges) return false;
    for (std::uint64_t r = 0; r < b.rows; ++r)
      if (off[r + 1] < off[r]) return false;
    for (eid_t e = 0; e < b.edges; ++e)
      if (cols[e] >= b.col_space) return false;
    return true;
  }
  // Whether the device copy of block bi (dense offsets, columns) equals the layout's host image.
  static bool same_as_host_image(const UnitLayout& L, int bi, const eid_t* off, const vid_t* cols) {
    const SlotBlock& b = L.blocks[bi];
    if (L.host_offsets[bi] && std::memcmp(L.host_offsets[bi], off, (b.rows + 1) * sizeof(eid_t)))
      return false;
    if (L.host_packed[bi].valid()) {
      std::vector<eid_t> dense(b.rows + 1);
      expand_packed(L.host_packed[bi], b.rows, dense.data());
      if (std::memcmp(dense.data(), off, dense.size() * sizeof(eid_t))) return false;
    }
    return !(L.host_cols[bi] && b.edges &&
             std::memcmp(L.host_cols[bi], cols, b.edges * sizeof(vid_t)));
  }
  // The unit through the emulated device block cache (DeviceBlockCache::admit, as the CUDA
  // backend runs it, when the upload is queued); its copies run late (run_cached).
  void upload_cached(int s, const UnitLayout& L) {
    uploaded_[s] = hit_bytes_[s] = 0;
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    bool hit[3] = {false, false, false};
    for (const std::uint64_t victim : cache_.admit(req, L.num_blocks, s, hit)) {
      entries_.erase(victim);
      ++cache_evictions;
    }
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      late_hit_[s][bi] = hit[bi];
      if (!hit[bi]) entries_[b.cache_key] = Entry{};  // allocated, written by the late copy
      (hit[bi] ? hit_bytes_[s] : uploaded_[s]) += b.image_bytes();
    }
    unit_uploads[L.unit] = uploaded_[s];
  }
  // The unit's queued copies, when it is collected: hits checked against the host images (the
  // block must still be there, written by an earlier unit's copy), then each miss copied from
  // its host images (which must be registered or in a host slot, as the CUDA backend needs them
  // pinned, and still intact).
  void run_cached(int s, const UnitLayout& L) {
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      auto it = entries_.find(b.cache_key);
      if (it == entries_.end()) {  // evicted while a unit in flight held it
        ++cache_mismatches;
        it = entries_.emplace(b.cache_key, Entry{}).first;
      }
      Entry& e = it->second;
      if (late_hit_[s][bi]) {
        ++cache_hits;
        if (!e.written || e.off.size() != b.rows + 1 || e.cols.size() != b.edges ||
            !same_as_host_image(L, bi, e.off.data(), e.cols.data()))
          ++cache_mismatches;
      } else {
        ++cache_misses;
        e.written = true;
        e.off.assign(b.rows + 1, 0);
        e.cols.assign(b.edges, 0);
        if (b.packed) {
          const PackedRows& hp = L.host_packed[bi];
          EXPECT_TRUE(hp.valid());
          EXPECT_EQ(hp.count, b.packed_rows);
          if (hp.valid()) expand_packed(hp, b.rows, e.off.data());
          count_source(s, hp.ids, packed_bytes(b.packed_rows));
          ++packed_uploads;
          packed_dense_rows += b.rows;
        } else {
          EXPECT_NE(L.host_offsets[bi], nullptr);
          if (L.host_offsets[bi])
            std::memcpy(e.off.data(), L.host_offsets[bi], (b.rows + 1) * sizeof(eid_t));
          count_source(s, L.host_offsets[bi], dense_offsets_bytes(b.rows));
        }
        if (b.edges) {
          EXPECT_NE(L.host_cols[bi], nullptr);
          if (L.host_cols[bi]) std::memcpy(e.cols.data(), L.host_cols[bi], b.edges * sizeof(vid_t));
          count_source(s, L.host_cols[bi], b.edges * sizeof(vid_t));
        }
        cached_upload_bytes += b.image_bytes();
      }
      off_[s][bi] = e.off.data();
      cols_[s][bi] = e.cols.data();
    }
  }
  // A copy's source: the host slot or registered memory (else unregistered_sources).
  void count_source(int s, const void* p, std::uint64_t bytes) {
    if (!p) return;
    const bool from_slot = in_host_slot(s, p, bytes);
    if (!from_slot && !registered_range(static_cast<const unsigned char*>(p), bytes))
      ++unregistered_sources;
    if (from_slot)
      host_slot_bytes += bytes;
    else
      ++direct_copies;
  }
  void complete(int b) {
    Copy& c = pending_.at(static_cast<std::size_t>(b));
    if (!c.active) return;
    std::memcpy(reinterpret_cast<unsigned char*>(dev_[c.slot].data()) + c.at, staging_buffer(b),
                c.bytes);
    for (std::uint64_t x = c.at; x < c.at + c.bytes; ++x)
      cover_[c.slot][x] = static_cast<unsigned char>(std::min(cover_[c.slot][x] + 1, 255));
    c.active = false;
  }
  // Whether [p, p + bytes) lies in slot s's host slot (with the device cache: in either host
  // slot, which units in any slot take in turn).
  bool in_host_slot(int s, const void* p, std::uint64_t bytes) const {
    const auto* q = static_cast<const unsigned char*>(p);
    for (std::size_t x = 0; x < host_.size(); ++x) {
      if (!cache_on_ && x != static_cast<std::size_t>(s)) continue;
      const auto* b = reinterpret_cast<const unsigned char*>(host_[x].data());
      if (!host_[x].empty() && q >= b && q + bytes <= b + host_[x].size() * 8) return true;
    }
    return false;
  }
  bool registered_range(const unsigned char* p, std::uint64_t bytes) {
    std::lock_guard<std::mutex> lk(reg_mu_);
    for (const auto& r : live_) {
      const auto* lo = static_cast<const unsigned char*>(r.first);
      if (p >= lo && p + bytes <= lo + r.second) return true;
    }
    return false;
  }
  std::mutex reg_mu_;
  std::map<void*, std::uint64_t> live_;
  std::unique_ptr<Counter> counter_ = make_cpu_counter();
  std::vector<std::vector<std::uint64_t>> dev_, host_;  // per slot
  std::vector<std::vector<unsigned char>> cover_;
  std::vector<std::vector<count_t>> pv_;
  std::vector<std::vector<std::uint64_t>> staging_;
  std::vector<Copy> pending_;
  std::vector<SlotResult> result_;
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  // the blocks each slot's count reads (in the slot, or in the emulated cache)
  std::vector<std::array<const eid_t*, 3>> off_;
  std::vector<std::array<const vid_t*, 3>> cols_;
  struct Entry {
    bool written = false;  // by the late copy of the unit that missed it
    std::vector<eid_t> off;
    std::vector<vid_t> cols;
  };
  bool cache_on_ = false;
  DeviceBlockCache cache_;
  std::map<std::uint64_t, Entry> entries_;
  std::vector<std::uint64_t> uploaded_, hit_bytes_;
  // the cache's units in flight: layout, per-vertex outputs and hits, run when collected
  std::vector<UnitLayout> late_;
  std::vector<PerVertexOut> late_pv_;
  std::vector<char> late_count_;
  std::vector<std::array<bool, 3>> late_hit_;
};

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
  // than the slot; one, two and three staging buffers; CPU backend and the device double.
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
          o.piece_bytes = piece;
          o.staging_buffers = buffers;
          DeviceDouble dd;
          for (StreamingBackend* be :
               {static_cast<StreamingBackend*>(cpu.get()), static_cast<StreamingBackend*>(&dd)}) {
            CountReport r = count_with_backend(*src, o, *be);
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
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {2u, 3u, 4u, 7u})
      for (bool pv : {false, true})
        for (bool refuse : {false, true})
          for (bool cache : {true, false}) {
            SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + (pv ? " per-vertex" : "") +
                         (refuse ? " refused" : "") + (cache ? " device cache" : " slots"));
            DeviceDouble dd;
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
          o.threads = threads;
          o.chunk_cache_bytes = static_cast<std::int64_t>(cache);
          DeviceDouble dd;
          dd.refuse_registration = refuse;
          CountReport r = count_with_backend(*src, o, dd);
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

// With the device block cache, up to Plan::in_flight units are in flight (the double runs a
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
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {3u, 7u, 16u})
      for (int path = 0; path < 3; ++path)
        for (bool refuse : {false, true}) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " path " +
                       std::to_string(path) + (refuse ? " refused" : ""));
          auto o = popts(s, p, false);
          o.chunk_cache_bytes = caches[path][0];
          o.block_cache_bytes = caches[path][1];
          // a slow link (10 MB/s), so that on this small graph uploads weigh like kernels and
          // the planner's estimate prefers deep queues for some of these plans
          o.plan_rates.upload_bytes_per_s = 1e7;
          DeviceDouble dd;
          dd.refuse_registration = refuse;
          CountReport r = count_with_backend(*src, o, dd);
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
// device double with its device block cache, totals and per vertex against the oracle.
TEST(Pipeline, SlicedUnitsCountExactly) {
  auto e = test::skewed_graph(1500, 16000, 11);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 211);
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {3u, 7u})
      for (std::uint32_t slices : {2u, 5u, 64u})
        for (bool per_vertex : {false, true})
          for (bool device_double : {false, true}) {
            SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " slices " +
                         std::to_string(slices) + (per_vertex ? " per-vertex" : "") +
                         (device_double ? " device double" : " cpu"));
            auto o = popts(s, p, per_vertex);
            DeviceDouble dd;
            auto cpu = cpu_backend();
            StreamingBackend& be = device_double ? static_cast<StreamingBackend&>(dd) : *cpu;
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
            if (device_double) {
              EXPECT_EQ(dd.sliced_counts, sliced);
              EXPECT_EQ(dd.image_mismatches, 0u);
              EXPECT_EQ(dd.cache_mismatches, 0u);
            }
          }
}

// Sparse blocks travel packed (packed_rows.hpp) from every parallel build path: the block
// cache (direct uploads, and through the host slot when registration is refused) and parallel
// walks into the slot; the sequential walk writes dense offsets. The device double expands packed
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
        for (int backend = 0; backend < 3; ++backend) {  // double, double refusing, CPU
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " path " +
                       std::to_string(path) + " backend " + std::to_string(backend));
          auto o = popts(s, p, true);
          o.chunk_cache_bytes = caches[path][0];
          o.block_cache_bytes = caches[path][1];
          DeviceDouble dd;
          dd.refuse_registration = backend == 1;
          auto cpu = cpu_backend();
          CountReport r = count_with_backend(*src, o, backend == 2 ? *cpu : dd);
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
  o.piece_bytes = 3;
  DeviceDouble dd;
  CountReport r = count_with_backend(*src, o, dd);
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
  DeviceDouble dd;
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
  DeviceDouble dd;
  dd.on_piece = [&] {
    if (dd.pieces == 3) std::raise(SIGINT);
  };
  auto o = popts(Scheme::Range, 1, false);
  o.piece_bytes = 1000;
  CountReport r = count_with_backend(*src, o, dd);
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
  DeviceDouble dd;
  dd.device_limit = slot / 2;  // ... but the device has half of it
  CountReport r = count_with_backend(*src, o, dd);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_GE(r.stats.replans, 1u);
  EXPECT_GT(r.plan.partition.p, 1u);
  EXPECT_FALSE(r.plan.streamed_staging());
  EXPECT_EQ(dd.streamed_allocations, 0u);  // the first allocation threw before it counted
}

// Through real .tcsr files: small chunks, every scheme, and a corrupt chunk.
TEST(PipelineFile, CountsTcsrFiles) {
  auto e = test::skewed_graph(2000, 20000, 41);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  test::TempDir tmp;
  tcsr::WriteOptions wo;
  wo.chunk_bytes = 256;  // 64 edges a chunk
  wo.threads = 2;
  tcsr::write_file(tmp.file("g.tcsr"), g, wo);
  tcsr::Reader reader(tmp.file("g.tcsr"));
  ASSERT_GT(reader.chunks().size(), 10u);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
    for (std::uint32_t p : {1u, 3u, 7u}) {
      SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p));
      CountReport r = count_file(reader, popts(s, p, false));
      EXPECT_EQ(r.triangles, oracle);
    }
  }
  auto o = popts(Scheme::Auto, 0, false);
  o.gpu_memory = in_core_bytes(g.n(), g.m(), false) / 4;
  EXPECT_EQ(count_file(reader, o).triangles, oracle);
}

TEST(PipelineFile, CorruptChunkNamesTheChunk) {
  auto e = test::random_graph(3000, 30000, 43);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  test::TempDir tmp;
  tcsr::WriteOptions wo;
  wo.chunk_bytes = 4096;
  tcsr::write_file(tmp.file("g.tcsr"), g, wo);
  std::uint64_t at = 0;
  {
    tcsr::Reader r(tmp.file("g.tcsr"));
    ASSERT_GT(r.chunks().size(), 4u);
    const auto& c = r.chunks()[3];
    at = c.file_offset + c.compressed_size / 2;
  }
  {
    std::fstream f(tmp.file("g.tcsr"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char b = 0;
    f.read(&b, 1);
    b = static_cast<char>(b ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(&b, 1);
  }
  tcsr::Reader reader(tmp.file("g.tcsr"));
  try {
    count_file(reader, popts(Scheme::Range, 2, false));
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(err.what()).find("chunk"), std::string::npos) << err.what();
  }
}

TEST(PlanCli, PrintsAPlan) {
  auto e = test::random_graph(3000, 30000, 47);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  test::TempDir tmp;
  tcsr::write_file(tmp.file("g.tcsr"), g);
  auto r = test::run_cli("plan '" + tmp.file("g.tcsr") + "' --gpu-memory 64K --json");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* key : {"\"scheme\":", "\"parts\":", "\"units\":[",
                          "\"device_bytes\":", "\"total_estimated_bytes\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  auto t = test::run_cli("plan '" + tmp.file("g.tcsr") + "' --gpu-memory 1K");
  EXPECT_EQ(t.status, 1);
  EXPECT_NE(t.err.find("no partition fits"), std::string::npos) << t.err;
  auto s = test::run_cli("plan '" + tmp.file("g.tcsr") + "' --scheme nope");
  EXPECT_EQ(s.status, 1);
}

}  // namespace
}  // namespace tristream
