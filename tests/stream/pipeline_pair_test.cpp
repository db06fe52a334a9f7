// pipeline_pair_test.cpp — the pair scheme (units = pairs of range parts i <= j, A = G_ij,
// B = R_i, C = R_j: the row parts whole, global column ids) against the brute-force oracle and the
// in-core count: every test graph at several p (p = 40: above the rows of the small graphs, capped
// at them), every build path and thread count, the fake device with the device block cache on and
// off (direct uploads and through the host slots), sliced units, .tcsr files and the CLI, totals
// and per vertex; the plan's shape (p(p+1)/2 units at most, blocks of the exact edges, the
// per-vertex spaces).
#include <future>
#include <tuple>

#include "fake_backend.hpp"
#include "stream_util.hpp"

namespace tristream::stream_test {
namespace {

// The test graphs, plus one whose ids are spread out (most rows empty) and a hub graph.
std::vector<Case> pair_cases() {
  std::vector<Case> all = cases();
  EdgeList sparse;
  for (const auto& [a, b] : test::random_graph(120, 900, 29))
    sparse.emplace_back(static_cast<vid_t>(a * 7 + 3), static_cast<vid_t>(b * 7 + 3));
  all.push_back({"empty_rows", sparse});
  EdgeList hub = test::random_graph(300, 1500, 31);
  for (vid_t v = 1; v < 300; v += 2) hub.emplace_back(0, v);
  all.push_back({"hub", hub});
  return all;
}

class PairParts : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(PairParts, EqualsTheOracleAndInCore) {
  expect_scheme_exact(pair_cases(), Scheme::Pair, GetParam(),
                      [](const CountReport& r, std::uint64_t want_p) {
                        if (want_p > 1) {
                          EXPECT_EQ(r.plan.partition.scheme, Scheme::Pair);
                          EXPECT_LE(r.plan.units.size(), want_p * (want_p + 1) / 2);
                        }
                      });
}

INSTANTIATE_TEST_SUITE_P(SchemesAndParts, PairParts, ::testing::Values(1u, 2u, 3u, 5u, 16u, 40u),
                         [](const ::testing::TestParamInfo<std::uint32_t>& pi) {
                           return "pair_p" + std::to_string(pi.param);
                         });

// The plan: units (i, j) with i <= j by descending i, A = G_ij, B and C the row parts R_i and
// R_j (the suffix block G_{a,>=0}, column part p) with the exact edges and every vertex as
// column space, B and C shared when i == j; per vertex, a unit needs every vertex (w's space,
// which u and v share in part 0) and parts i and j.
TEST(PairPlan, UnitsAreThePairsWithWholeRowParts) {
  auto e = test::skewed_graph(1200, 12000, 13);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 97);
  for (std::uint32_t p : {2u, 4u, 9u}) {
    SCOPED_TRACE(p);
    PlanOptions po = resolve_plan_options(popts(Scheme::Pair, p, false), nullptr);
    const Plan plan = plan_graph(*src, po);
    const Partition& P = plan.partition;
    ASSERT_EQ(P.scheme, Scheme::Pair);
    ASSERT_EQ(P.p, p);
    std::uint64_t units = 0;
    for (std::size_t u = 0; u < plan.units.size(); ++u) {
      const WorkUnit& w = plan.units[u];
      if (u > 0) {
        // by descending i, then j; or in groups of pair_group row parts from the top, each by
        // j, then descending i
        const WorkUnit& v = plan.units[u - 1];
        const std::uint32_t G = plan.pair_group;
        ASSERT_GE(G, 1u);
        const auto key = [&](const WorkUnit& x) {
          return std::make_tuple((p - 1 - x.i) / G, G > 1 ? x.j : 0u, p - 1 - x.i, x.j);
        };
        EXPECT_LT(key(v), key(w));
      }
      EXPECT_LE(w.i, w.j);
      EXPECT_EQ(w.k, w.j);
      EXPECT_EQ(w.a.col_part, w.j);
      EXPECT_EQ(w.b.row_part, w.i);
      EXPECT_EQ(w.b.col_part, p);
      EXPECT_EQ(w.c.row_part, w.j);
      EXPECT_EQ(w.c.col_part, p);
      EXPECT_EQ(w.c_is_b, w.i == w.j);
      EXPECT_FALSE(w.b_is_a);
      EXPECT_EQ(w.b.col_space, g.n());
      EXPECT_EQ(w.b.edges, g.csr.offsets[P.bounds[w.i + 1]] - g.csr.offsets[P.bounds[w.i]]);
      for (const BlockInfo* bi : {&w.a, &w.b, &w.c})
        EXPECT_EQ(bi->edges, test::naive_block(g.csr, P, bi->row_part, bi->col_part).cols.size());
      ++units;
    }
    EXPECT_LE(units, std::uint64_t{p} * (p + 1) / 2);
    EXPECT_GT(units, 0u);
    // a unit per pair (i, j) whose A and C hold edges
    std::uint64_t want = 0;
    for (std::uint32_t i = 0; i < p; ++i)
      for (std::uint32_t j = i; j < p; ++j)
        want += !test::naive_block(g.csr, P, i, j).cols.empty() &&
                !test::naive_block(g.csr, P, j, p).cols.empty();
    EXPECT_EQ(units, want);
  }
  const Plan pv = plan_graph(*src, resolve_plan_options(popts(Scheme::Pair, 3, true), nullptr));
  std::uint64_t most = 0;
  for (const WorkUnit& w : pv.units) {
    const std::uint64_t rows = g.n() + (w.i != 0 ? pv.partition.rows(w.i) : 0) +
                               (w.j != 0 && w.j != w.i ? pv.partition.rows(w.j) : 0);
    EXPECT_EQ(w.device_bytes, w.slot_bytes + rows * sizeof(count_t));
    most = std::max(most, rows);
  }
  EXPECT_EQ(pv.per_vertex_rows, most);
}

// Every build path — the preloaded block cache, blocks built on demand in a small block cache,
// parallel walks into the slot, the sequential walk — on 1, 3 and 8 threads, and a device budget
// that lets the planner choose p.
TEST(PairPipeline, EveryBuildPathAndThreadCountCountsExactly) {
  auto e = test::skewed_graph(2000, 22000, 53);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 97);
  // {chunk cache, block cache}: as planned, blocks on demand (a cache of two row parts), parallel
  // walks, the sequential walk
  for (std::uint32_t p : {2u, 3u, 7u}) {
    PlanOptions po = resolve_plan_options(popts(Scheme::Pair, p, false), nullptr);
    const Plan base = plan_graph(*src, po);
    const std::int64_t two = static_cast<std::int64_t>(2 * base.row_part_max_bytes);
    const std::int64_t caches[4][2] = {{-1, -1}, {1ll << 30, two}, {1ll << 30, 0}, {0, 0}};
    for (const auto& c : caches)
      for (unsigned threads : {1u, 3u, 8u}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " chunk cache " + std::to_string(c[0]) +
                     " block cache " + std::to_string(c[1]) + " threads " +
                     std::to_string(threads));
        auto o = popts(Scheme::Pair, p, false);
        o.threads = threads;
        Knobs k;
        k.chunk_cache_bytes = c[0];
        k.block_cache_bytes = c[1];
        auto be = cpu_backend();
        CountReport r = count_tuned(*src, o, *be, k);
        ASSERT_EQ(r.plan.partition.p, p);
        EXPECT_EQ(r.triangles, oracle);
        EXPECT_EQ(r.stats.units, r.plan.units.size());
      }
  }
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  for (std::uint64_t div : {2u, 4u, 8u}) {
    SCOPED_TRACE("1/" + std::to_string(div));
    auto o = popts(Scheme::Pair, 0, false);
    o.gpu_memory = full / div;
    auto be = cpu_backend();
    CountReport r = count_with_backend(*src, o, *be);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(r.plan.partition.scheme, Scheme::Pair);
    EXPECT_GT(r.plan.partition.p, 1u);
    EXPECT_LE(r.plan.device_bytes, full / div);
  }
}

// The fake device: direct uploads from the preloaded block cache and through the host slots
// (registration refused), with the device block cache (blocks by key: a row part's key must
// not name a plain one) and with two device slots; parallel and sequential walks into the slots.
// Every host image equals what reached the device and the cache never served a wrong block.
TEST(PairPipeline, FakeDeviceWithAndWithoutTheDeviceCache) {
  auto e = test::skewed_graph(2000, 24000, 5);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 173);
  const std::int64_t caches[3][2] = {{-1, -1}, {1ll << 30, 0}, {0, 0}};
  std::uint64_t hits = 0;
  for (std::uint32_t p : {2u, 3u, 7u, 16u})
    for (int path = 0; path < 3; ++path)
      for (bool refuse : {false, true})
        for (bool cache : {true, false}) {
          const bool pv = path == 1;  // per vertex on one path (fewer units in flight then)
          SCOPED_TRACE("p=" + std::to_string(p) + " path " + std::to_string(path) +
                       (refuse ? " refused" : "") + (cache ? " device cache" : " slots"));
          auto o = popts(Scheme::Pair, p, pv);
          Knobs k;
          k.chunk_cache_bytes = caches[path][0];
          k.block_cache_bytes = caches[path][1];
          k.upload_bytes_per_s = 1e7;  // uploads weigh like kernels: deeper queues
          FakeBackend dd;
          dd.refuse_registration = refuse;
          dd.device_cache = cache;
          CountReport r = count_tuned(*src, o, dd, k);
          ASSERT_EQ(r.plan.partition.p, p);
          ASSERT_GT(r.plan.device_cache_bytes, 0u);
          EXPECT_EQ(r.triangles, oracle);
          if (pv) {
            EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          }
          EXPECT_EQ(r.stats.units, r.plan.units.size());
          EXPECT_EQ(dd.image_mismatches, 0u);
          // every unit's A = G_ij cut from B on the device, once (no other unit has it)
          EXPECT_EQ(dd.cuts, r.plan.units.size());
          EXPECT_EQ(dd.unregistered_sources, 0u);
          EXPECT_EQ(dd.registered.load(), dd.unregistered.load());
          if (cache) {
            EXPECT_EQ(dd.cache_mismatches, 0u);
            EXPECT_EQ(dd.cache_hits + dd.cache_misses, distinct_blocks(r.plan));
            EXPECT_EQ(dd.cached_upload_bytes, r.stats.upload.bytes);
            hits += dd.cache_hits;
          } else {
            EXPECT_EQ(dd.cache_hits + dd.cache_misses, 0u);
          }
          if (path == 0 && !refuse) {
            EXPECT_GT(dd.direct_copies, 0u);
            EXPECT_EQ(dd.host_slot_bytes, 0u);
          }
        }
  EXPECT_GT(hits, 0u);  // B = R_i serves the run of i, C = R_j every i <= j
}

// With a device budget the device block cache takes all of it and the units run in groups of
// row parts (Plan::pair_group): exact, totals and per vertex, with every cached block intact; and
// a plan made ahead (PipelineOptions::ready_plan) is taken when it was made with the count's
// options, ignored otherwise.
TEST(PairPipeline, GroupsInTheWholeDeviceBudgetAndPlansMadeAhead) {
  auto e = test::skewed_graph(3000, 40000, 17);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 389);
  std::uint32_t grouped = 0;
  // (per vertex, a pair unit's arrays span every vertex: half the footprint)
  for (bool pv : {false, true})
    for (std::uint64_t div :
         pv ? std::vector<std::uint64_t>{2} : std::vector<std::uint64_t>{3, 4}) {
      SCOPED_TRACE(std::string(pv ? "per vertex" : "count") + " at 1/" + std::to_string(div));
      auto o = popts(Scheme::Pair, 0, pv);
      o.gpu_memory = in_core_bytes(g.n(), g.m(), pv) / div;
      o.host_memory = std::uint64_t{4} << 30;  // (the default would follow the machine's load)
      FakeBackend dd;
      CountReport r = count_with_backend(*src, o, dd);
      EXPECT_EQ(r.triangles, oracle);
      if (pv) {
        EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      }
      ASSERT_EQ(r.plan.partition.scheme, Scheme::Pair);
      EXPECT_LE(r.plan.device_bytes, o.gpu_memory);
      EXPECT_GE(r.plan.device_cache_bytes, 2 * r.plan.slot_bytes);
      EXPECT_EQ(dd.cache_mismatches, 0u);
      EXPECT_EQ(dd.cached_upload_bytes, r.stats.upload.bytes);
      EXPECT_EQ(r.stats.planned_ahead_s, 0.0);
      grouped += r.plan.pair_group > 1 ? 1 : 0;
      // the same count with the plan made ahead, and with one made for another budget
      for (bool same : {true, false}) {
        auto o2 = o;
        PlanOptions made_for = resolve_plan_options(o, &dd);
        if (!same) made_for.threads += 1;  // made for another count
        o2.ready_plan = made_ahead(*src, made_for, 0.25);
        const ReadyPlan& ready = o2.ready_plan.get();
        FakeBackend dd2;
        CountReport r2 = count_with_backend(*src, o2, dd2);
        EXPECT_EQ(r2.triangles, oracle);
        EXPECT_EQ(r2.stats.planned_ahead_s, same ? 0.25 : 0.0);
        EXPECT_EQ(r2.plan.device_bytes, same ? ready.plan.device_bytes : r.plan.device_bytes);
        EXPECT_EQ(r2.plan.units.size(), r.plan.units.size());
        if (pv) {
          EXPECT_EQ(r2.per_vertex, r.per_vertex);
        }
      }
    }
  EXPECT_GT(grouped, 0u);
}

// Slices of pair units (the tail cover's pieces) count their task once between them.
TEST(PairPipeline, SlicedUnitsCountExactly) {
  auto e = test::skewed_graph(1500, 16000, 11);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  auto src = memory_source(g, 211);
  for (std::uint32_t p : {3u, 7u})
    for (std::uint32_t slices : {2u, 5u, 64u})
      for (bool fake_device : {false, true}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " slices " + std::to_string(slices) +
                     (fake_device ? " fake device" : " cpu"));
        auto o = popts(Scheme::Pair, p, false);
        FakeBackend dd;
        auto cpu = cpu_backend();
        StreamingBackend& be = fake_device ? static_cast<StreamingBackend&>(dd) : *cpu;
        const Plan base = plan_graph(*src, resolve_plan_options(o, &be));
        ASSERT_EQ(base.partition.p, p);
        const Plan plan = test::sliced_plan(base, slices, false, 1);
        CountReport r = run_plan(*src, plan, be, o);
        EXPECT_EQ(r.triangles, oracle);
        EXPECT_EQ(r.stats.units, plan.units.size());
        if (fake_device) {
          EXPECT_EQ(dd.image_mismatches, 0u);
          EXPECT_EQ(dd.cache_mismatches, 0u);
        }
      }
}

// Through a .tcsr file and the command line: `count --scheme pair --parts P` prints the oracle's
// count and a pair plan, and its `--per-vertex` file equals the in-core count's.
TEST(PairCli, CountsTcsrFilesFromTheCommandLine) {
  auto e = test::skewed_graph(2000, 20000, 41);
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(e);
  test::TempDir tmp;
  tcsr::WriteOptions wo;
  wo.chunk_bytes = 256;  // 64 edges a chunk
  wo.threads = 2;
  tcsr::write_file(tmp.file("g.tcsr"), g, wo);
  tcsr::Reader reader(tmp.file("g.tcsr"));
  for (std::uint32_t p : {1u, 3u, 7u}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(count_file(reader, popts(Scheme::Pair, p, false)).triangles, oracle);
  }
  const std::string file = test::q(tmp.file("g.tcsr"));
  for (const char* p : {"2", "5", "16"}) {
    SCOPED_TRACE(p);
    auto r = test::run_cli(std::string("count ") + file + " --backend cpu --scheme pair --parts " +
                           p + " --json -q");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"triangles\":" + std::to_string(oracle)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"scheme\":\"pair\""), std::string::npos) << r.out;
  }
  auto plan = test::run_cli("plan " + file + " --backend cpu --scheme pair --parts 4");
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("scheme pair, p = 4"), std::string::npos) << plan.out;
  auto pv = test::run_cli("count " + file + " --backend cpu --scheme pair --parts 3 --per-vertex " +
                          test::q(tmp.file("pv.csv")) + " -q");
  ASSERT_EQ(pv.status, 0) << pv.err;
  auto one = test::run_cli("count " + file + " --backend cpu --parts 1 --per-vertex " +
                           test::q(tmp.file("pv1.csv")) + " -q");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(test::read_text(tmp.file("pv.csv")), test::read_text(tmp.file("pv1.csv")));
  EXPECT_GT(test::read_text(tmp.file("pv.csv")).size(), n);
}

}  // namespace
}  // namespace tristream::stream_test
