// pipeline_test.cpp — the streaming pipeline on the CPU backend: every scheme and p gives exactly
// the p = 1 count and the brute-force oracle (totals and per vertex), with small chunks so units
// span chunks; small host budgets; SIGINT; statistics and traces; .tcsr files.
#include "pipeline_util.hpp"
#include "stream/workers.hpp"
#include "stream_util.hpp"

namespace tristream::stream_test {
namespace {

class EveryScheme : public ::testing::TestWithParam<std::tuple<Scheme, std::uint32_t>> {};

TEST_P(EveryScheme, EqualsTheOracleAndInCore) {
  const auto [scheme, p] = GetParam();
  expect_scheme_exact(cases(), scheme, p);
}

INSTANTIATE_TEST_SUITE_P(SchemesAndParts, EveryScheme,
                         ::testing::Combine(::testing::Values(Scheme::Range, Scheme::Hash,
                                                              Scheme::Vertex, Scheme::Pair),
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
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair})
    for (std::uint32_t p : {2u, 3u, 7u})
      for (const auto& c : caches) {
        SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " chunk cache " +
                     std::to_string(c[0]) + " block cache " + std::to_string(c[1]));
        auto o = popts(s, p, true);
        Knobs k;
        k.chunk_cache_bytes = c[0];
        k.block_cache_bytes = c[1];
        auto be = cpu_backend();
        CountReport r = count_tuned(*src, o, *be, k);
        EXPECT_EQ(r.triangles, oracle);
        EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      }
}

// Without the background preload (PipelineOptions::preload false, TRISTREAM_NO_PRELOAD=1) every
// unit builds its blocks when it needs them, from the block cache: the same counts, one worker
// and several, and no row part is built ahead of a unit (the preload's builds are unit -1's).
TEST(Pipeline, WithoutThePreloadEveryUnitBuildsItsOwnBlocksExactly) {
  auto e = test::skewed_graph(1500, 15000, 59);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 97);
  auto built_ahead = [](const CountReport& r) {
    return std::count_if(r.stats.spans.begin(), r.stats.spans.end(),
                         [](const TraceSpan& t) { return t.stage == "build" && t.unit < 0; });
  };
  for (Scheme s : {Scheme::Range, Scheme::Pair})
    for (std::uint32_t p : {2u, 7u})
      for (int workers : {1, 3})
        for (bool preload : {true, false}) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " x" + std::to_string(workers) +
                       (preload ? " preload" : " no preload"));
          auto o = popts(s, p, true);
          o.preload = preload;
          CountReport r;
          if (workers == 1) {
            auto be = cpu_backend();
            r = count_with_backend(*src, o, *be);
          } else {
            std::vector<Worker> ws;
            for (int w = 0; w < workers; ++w) ws.push_back({cpu_backend(), false});
            r = count_with_workers(*src, o, ws);
          }
          EXPECT_EQ(r.triangles, oracle);
          EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          EXPECT_EQ(r.stats.units, r.plan.units.size());
          if (preload)
            EXPECT_GT(built_ahead(r), 0);  // (every row part fits the block cache here)
          else
            EXPECT_EQ(built_ahead(r), 0);
        }
}

// Chunks the source holds decoded (the in-core image's: GraphSource::resident_chunk) are built
// from in place, every build path, and give the oracle's counts without copying any of them.
TEST(Pipeline, ResidentChunksCountExactlyOnEveryBuildPath) {
  auto e = test::skewed_graph(1500, 15000, 59);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto mem = memory_source(g, 97);
  const std::int64_t caches[3][2] = {{-1, -1}, {1ll << 30, 0}, {0, 0}};
  for (std::uint64_t every : {1u, 2u})
    for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair})
      for (std::uint32_t p : {1u, 3u, 7u})
        for (const auto& c : caches) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " every " +
                       std::to_string(every) + " chunk cache " + std::to_string(c[0]) +
                       " block cache " + std::to_string(c[1]));
          const test::ResidentSource src(*mem, g.csr.cols, every);
          auto o = popts(s, p, true);
          Knobs k;
          k.chunk_cache_bytes = c[0];
          k.block_cache_bytes = c[1];
          auto be = cpu_backend();
          CountReport r = count_tuned(src, o, *be, k);
          EXPECT_EQ(r.triangles, oracle);
          EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          if (p > 1) {
            EXPECT_EQ(src.resident_copies(), 0u);  // (p = 1: the in-core unit's copy)
          }
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
          Knobs k;
          o.threads = threads;
          k.chunk_cache_bytes = c[0];
          k.block_cache_bytes = c[1];
          o.host_memory = static_cast<std::uint64_t>(c[2]);
          auto be = cpu_backend();
          CountReport r = count_tuned(*src, o, *be, k);
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

// The blocks are built on a background thread while the first units are counted: a chunk that
// fails there fails the run with its error (and the run joins the thread: no hang, no leak).
TEST(Pipeline, BackgroundPreloadFailureSurfaces) {
  auto e = test::skewed_graph(2000, 20000, 67);
  OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  auto src = memory_source(g, 150);
  ASSERT_GT(src->chunks().size(), 10u);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair}) {
    SCOPED_TRACE(scheme_name(s));
    auto o = popts(s, 4, false);
    PlanOptions po = resolve_plan_options(o, nullptr);
    po.host_budget = 0;
    Plan plan = plan_graph(*src, po);
    ASSERT_EQ(plan.partition.p, 4u);
    ASSERT_GE(plan.block_cache_bytes, plan.row_parts_bytes);  // every block preloaded
    test::FailingSource bad(*src, src->chunks().size() - 2);  // a late row part's chunk
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
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair}) {
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
}  // namespace tristream::stream_test
