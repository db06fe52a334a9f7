// plan_test.cpp — the partition planner without a GPU: partitions, the census, budgets and edge
// cases (fits exactly, one byte short, a row larger than the budget, the empty graph), JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "plan_internal.hpp"
#include "test_util.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

OrientedGraph oriented(const test::EdgeList& e) {
  return orient_edge_list(test::vertex_count(e), e);
}

PlanOptions opts(Scheme s, std::uint32_t p, std::uint64_t device = 0, std::uint64_t host = 0) {
  PlanOptions o;
  o.scheme = s;
  o.parts = p;
  o.device_budget = device;
  o.host_budget = host;
  o.threads = 2;
  return o;
}

TEST(Partition, RoundTrips) {
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
    Partition P;
    P.scheme = s;
    P.p = 4;
    P.n = 23;
    if (s != Scheme::Hash) P.bounds = {0, 5, 5, 17, 23};
    std::uint64_t total = 0;
    for (std::uint32_t a = 0; a < P.p; ++a) total += P.rows(a);
    EXPECT_EQ(total, 23u);
    if (s == Scheme::Vertex) continue;
    for (std::uint64_t x = 0; x < 23; ++x) {
      const auto a = P.part_of(x);
      EXPECT_LT(P.local_of(x), P.rows(a));
      EXPECT_EQ(P.global_of(a, P.local_of(x)), x);
    }
  }
}

TEST(Partition, BalancedBoundsAreMonotone) {
  auto g = oriented(test::skewed_graph(400, 3000, 5));
  for (bool w : {false, true})
    for (std::uint32_t p : {1u, 2u, 3u, 7u, 16u, 1000u}) {
      auto b = balanced_bounds(g.n(), g.csr.offsets.data(), p, w);
      ASSERT_EQ(b.size(), p + 1u);
      EXPECT_EQ(b.front(), 0u);
      EXPECT_EQ(b.back(), g.n());
      EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
    }
}

TEST(Census, BlockSumsMatchTheGraph) {
  auto g = oriented(test::random_graph(300, 2500, 11));
  auto src = memory_source(g, 37);
  CensusOptions co;
  co.fine = 50;
  co.hash_mod = 6;
  co.vertex_groups = 4;
  co.threads = 3;
  Census c = take_census(*src, co);
  EXPECT_EQ(std::accumulate(c.fine_hist.begin(), c.fine_hist.end(), eid_t{0}), g.m());
  EXPECT_EQ(std::accumulate(c.hash_hist.begin(), c.hash_hist.end(), eid_t{0}), g.m());
  // exact hash cells
  std::vector<eid_t> h(36, 0);
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t e = g.csr.offsets[u]; e < g.csr.offsets[u + 1]; ++e)
      ++h[(u % 6) * 6 + g.csr.cols[e] % 6];
  EXPECT_EQ(h, c.hash_hist);
  // vertex candidates: p = 1, 2, 4; the proxies of p = 1 are the vertices with in-degree > 0
  ASSERT_EQ(c.vertex.size(), 3u);
  std::set<vid_t> heads(g.csr.cols.begin(), g.csr.cols.end());
  EXPECT_EQ(c.vertex[0].p, 1u);
  EXPECT_EQ(c.vertex[0].proxies[0], heads.size());
  EXPECT_GE(c.decompressed_bytes, g.m() * sizeof(vid_t));  // two passes (exact proxies)
}

TEST(Planner, InCoreWhenItFits) {
  auto g = oriented(test::complete_graph(30));
  auto src = memory_source(g, 64);
  const std::uint64_t need = in_core_bytes(g.n(), g.m(), false);
  Plan p = plan_graph(*src, opts(Scheme::Auto, 0, need));
  EXPECT_EQ(p.partition.p, 1u);
  ASSERT_EQ(p.units.size(), 1u);
  EXPECT_EQ(p.device_bytes, need);  // fits exactly
  EXPECT_NE(p.reason.find("in-core"), std::string::npos);
  EXPECT_EQ(p.bytes_moved, need);
}

TEST(Planner, OneByteShortGoesOutOfCore) {
  auto g = oriented(test::random_graph(2000, 30000, 3));
  auto src = memory_source(g, 512);
  const std::uint64_t need = in_core_bytes(g.n(), g.m(), false);
  Plan p = plan_graph(*src, opts(Scheme::Auto, 0, need - 1));
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.device_bytes, need - 1);
  EXPECT_EQ(p.slots, 2);
  EXPECT_LE(2 * p.slot_bytes, need - 1);
  EXPECT_FALSE(p.reason.empty());
  for (const auto& u : p.units) EXPECT_LE(u.device_bytes, p.slot_bytes);
}

TEST(Planner, EveryForcedSchemeFitsAQuarter) {
  auto g = oriented(test::skewed_graph(3000, 40000, 9));
  auto src = memory_source(g, 1000);
  const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / 4;
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Auto}) {
    SCOPED_TRACE(scheme_name(s));
    Plan p = plan_graph(*src, opts(s, 0, budget));
    EXPECT_GT(p.partition.p, 1u);
    EXPECT_LE(p.device_bytes, budget);
    if (s != Scheme::Auto) {
      EXPECT_EQ(p.partition.scheme, s);
    }
    EXPECT_GT(p.total_work, 0);
  }
  // LSTC's proxy rows (the hubs' edges) keep the vertex scheme from fitting a quarter of a
  // skewed graph: a usage error that says so, and a plan for a larger budget.
  try {
    Plan p = plan_graph(*src, opts(Scheme::Vertex, 0, budget));
    EXPECT_LE(p.device_bytes, budget);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no partition fits"), std::string::npos);
  }
  Plan v = plan_graph(*src, opts(Scheme::Vertex, 0, in_core_bytes(g.n(), g.m(), false) * 2));
  EXPECT_EQ(v.partition.p, 1u);  // in-core is cheapest when it fits
}

// auto compares estimated bytes moved (plus 1 MiB per unit), with hash plans' bytes counted
// 1.25 times (their kernels are slower per edge: bench/RESULTS.md). The forced schemes' plans
// are the candidates auto chooses among, so its choice follows from their costs. (On these small
// graphs the two schemes' costs differ by more than the factor, so this checks the comparison,
// not the factor's value; the factor's effect is measured at scales 25 and 26.)
TEST(Planner, AutoPicksTheCheaperOfRangeAndHash) {
  const PlanRates rates;  // a unit costs its fixed kernel seconds' worth of uploaded bytes
  auto cost = [&](const Plan& p) {
    return static_cast<double>(p.bytes_moved + p.bytes_decompressed) +
           static_cast<double>(p.units.size()) * rates.kernel_s_per_unit * rates.upload_bytes_per_s;
  };
  int decided = 0;
  for (std::uint64_t seed : {3u, 9u, 21u}) {
    SCOPED_TRACE(seed);
    auto g = oriented(test::skewed_graph(3000, 40000, seed));
    auto src = memory_source(g, 1000);
    for (std::uint64_t div : {3u, 4u, 6u, 8u}) {
      SCOPED_TRACE(div);
      const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / div;
      const Plan a = plan_graph(*src, opts(Scheme::Auto, 0, budget));
      const Plan r = plan_graph(*src, opts(Scheme::Range, 0, budget));
      const Plan h = plan_graph(*src, opts(Scheme::Hash, 0, budget));
      if (a.partition.scheme == Scheme::Vertex) continue;
      const double cr = cost(r), ch = 1.25 * cost(h);
      if (std::abs(cr - ch) < 0.01 * std::min(cr, ch)) continue;  // near ties: other criteria
      EXPECT_EQ(a.partition.scheme, ch < cr ? Scheme::Hash : Scheme::Range)
          << "range " << cr << ", hash x1.25 " << ch;
      ++decided;
    }
  }
  EXPECT_GT(decided, 0);
}

// Each unit is charged its fixed kernel seconds (PlanRates::kernel_s_per_unit) priced as the
// bytes the copy engine uploads meanwhile: the dearer a unit, the fewer units auto may take (with
// units nearly free it takes the fewest bytes; with a charge of the wrong sign it would take the
// most parts that fit).
TEST(Planner, DearerUnitsNeverGiveMoreParts) {
  for (std::uint64_t seed : {3u, 9u}) {
    SCOPED_TRACE(seed);
    auto g = oriented(test::skewed_graph(3000, 40000, seed));
    auto src = memory_source(g, 1000);
    for (Scheme s : {Scheme::Range, Scheme::Auto})
      for (std::uint64_t div : {3u, 5u, 8u}) {
        SCOPED_TRACE(div);
        const std::uint64_t budget = in_core_bytes(g.n(), g.m(), false) / div;
        std::uint32_t last_p = ~0u;
        std::size_t last_units = ~std::size_t{0};
        for (double k : {1e-9, 4e-4, 4e-3}) {
          PlanOptions o = opts(s, 0, budget);
          o.rates.kernel_s_per_unit = k;
          const Plan plan = plan_graph(*src, o);
          EXPECT_LE(plan.partition.p, last_p) << "kernel_s_per_unit " << k;
          if (plan.partition.scheme == Scheme::Range) {
            // and the range p is the fewest that fit: the cheapest in bytes on these graphs
            PlanOptions fewer = opts(Scheme::Range, plan.partition.p - 1, budget);
            EXPECT_THROW(plan_graph(*src, fewer), Error) << "p = " << plan.partition.p;
          }
          last_p = plan.partition.p;
          // (the units before the tail cover cut its donors into slices)
          const std::size_t units =
              plan.units.size() - plan.tail_cover_slices + plan.tail_cover_units;
          EXPECT_LE(units, last_units);
          last_units = units;
        }
      }
  }
}

TEST(Planner, ForcedPartsAndTaskCounts) {
  auto g = oriented(test::complete_graph(40));  // dense: no block is empty
  auto src = memory_source(g, 50);
  for (std::uint32_t p : {2u, 3u, 4u}) {
    Plan r = plan_graph(*src, opts(Scheme::Range, p));
    EXPECT_EQ(r.partition.p, p);
    EXPECT_EQ(r.units.size(), p * (p + 1) * (p + 2) / 6);
    Plan h = plan_graph(*src, opts(Scheme::Hash, p));
    EXPECT_EQ(h.units.size(), p * p * p);
    Plan v = plan_graph(*src, opts(Scheme::Vertex, p));
    EXPECT_LE(v.units.size(), p);
    // range units by descending i, so a unit needs only row parts >= its i (built from the
    // last row part down); inside a task by ascending j >= i, then k >= j (the row order), or
    // by k, then j (the column order); the slot's cached A is reused when the same
    for (std::size_t u = 0; u < r.units.size(); ++u) {
      const WorkUnit& w = r.units[u];
      EXPECT_TRUE(w.i <= w.j && w.j <= w.k);
      if (u == 0) continue;
      const WorkUnit& prev = r.units[u - 1];
      const std::uint32_t pa = r.column_order ? prev.k : prev.j,
                          pb = r.column_order ? prev.j : prev.k;
      const std::uint32_t wa = r.column_order ? w.k : w.j, wb = r.column_order ? w.j : w.k;
      EXPECT_TRUE(prev.i > w.i || (prev.i == w.i && (pa < wa || (pa == wa && pb < wb))))
          << "unit " << u << (r.column_order ? " (column order)" : " (row order)");
    }
    EXPECT_EQ(r.units.front().i, p - 1);
    for (std::size_t u = 2; u < r.units.size(); ++u)
      EXPECT_EQ(r.units[u].reuse_a,
                r.units[u].i == r.units[u - 2].i && r.units[u].j == r.units[u - 2].j);
  }
  Plan one = plan_graph(*src, opts(Scheme::Vertex, 1));
  EXPECT_EQ(one.partition.p, 1u);
  EXPECT_EQ(one.units.size(), 1u);
}

TEST(Planner, EmptyGraph) {
  for (std::uint64_t n : {0u, 7u}) {
    OrientedGraph g;
    g.csr.offsets.assign(n + 1, 0);
    g.csr.col_space = n;
    auto src = memory_source(g, 16);
    for (Scheme s : {Scheme::Auto, Scheme::Range, Scheme::Hash, Scheme::Vertex}) {
      Plan p = plan_graph(*src, opts(s, 0, 1));
      EXPECT_TRUE(p.units.empty());
      EXPECT_EQ(p.bytes_moved, 0u);
      EXPECT_NE(p.reason.find("empty"), std::string::npos);
      Plan q = plan_graph(*src, opts(s, 4));
      EXPECT_TRUE(q.units.empty());
    }
  }
}

OrientedGraph big_row_graph() {
  // Row 0 has 1000 out-neighbours 1..1000, which form a path: 999 triangles (0, v, v + 1).
  OrientedGraph g;
  const std::uint64_t n = 1001;
  g.csr.offsets.assign(n + 1, 0);
  for (vid_t v = 1; v <= 1000; ++v) g.csr.cols.push_back(v);
  g.csr.offsets[1] = 1000;
  for (vid_t v = 1; v <= 1000; ++v) {
    if (v < 1000) g.csr.cols.push_back(v + 1);
    g.csr.offsets[v + 1] = g.csr.cols.size();
  }
  g.csr.col_space = n;
  return g;
}

TEST(Planner, RowLargerThanTheBudgetIsAClearError) {
  OrientedGraph g = big_row_graph();
  auto src = memory_source(g, 128);
  try {
    plan_graph(*src, opts(Scheme::Auto, 0, 1024));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("row, 0,"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1000 out-neighbours"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1.0 KiB"), std::string::npos) << msg;
  }
}

TEST(Planner, RangeSplitsARowLargerThanASlot) {
  // The in-core graph needs 16 KiB; 8 KiB for two units splits row 0 over column parts.
  OrientedGraph g = big_row_graph();
  auto src = memory_source(g, 128);
  ASSERT_EQ(in_core_bytes(g.n(), g.m(), false), 16384u);
  Plan p = plan_graph(*src, opts(Scheme::Range, 0, 8192));
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.device_bytes, 8192u);
  EXPECT_LT(p.slot_bytes, block_bytes(1, 1000));
}

TEST(Planner, HostBudgetLimitsTheSlots) {
  auto g = oriented(test::random_graph(4000, 40000, 21));
  auto src = memory_source(g, 2048);
  const std::uint64_t host = (g.n() + 1) * 8 + g.m() * 4 / 2;
  PlanOptions o = opts(Scheme::Auto, 0, 0, host);
  o.device_is_host = true;
  Plan p = plan_graph(*src, o);
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.host_bytes, host);
}

TEST(Planner, JsonHasTheContractFields) {
  auto g = oriented(test::random_graph(500, 4000, 2));
  auto src = memory_source(g, 100);
  Plan p = plan_graph(*src, opts(Scheme::Range, 3));
  const std::string j = p.to_json();
  for (const char* key :
       {"\"scheme\":\"range\"", "\"parts\":3", "\"units\":[", "\"device_bytes\":", "\"work\":",
        "\"bytes_moved\":", "\"total_estimated_bytes\":", "\"reason\":"})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_NE(j.find(p.column_order ? "\"unit_order\":\"column\"" : "\"unit_order\":\"row\""),
            std::string::npos);
}

// The vertex statistics' exact second pass is skipped when no vertex candidate could fit the
// device budget even with empty proxy blocks: one pass over the columns instead of two, and
// the same plan as with the exact counts (their upper bounds rule the vertex plans out as well).
TEST(Census, ExactProxyPassSkippedWhenNoVertexPlanCanFit) {
  OrientedGraph g = oriented(test::skewed_graph(20000, 200000, 5));
  auto src = memory_source(g, 4096);
  const std::uint64_t in_core = in_core_bytes(g.n(), g.m(), false);
  int skipped_runs = 0;
  for (std::uint64_t div : {2u, 4u, 8u, 16u}) {
    SCOPED_TRACE("budget in-core / " + std::to_string(div));
    const PlanOptions o = opts(Scheme::Auto, 0, in_core / div);
    CensusOptions co;
    ASSERT_TRUE(census_needed(g.n(), g.m(), o, &co));
    EXPECT_EQ(co.device_budget, in_core / div);
    const Census fast = take_census(*src, co);
    co.device_budget = 0;  // unknown budget: always exact
    const Census exact = take_census(*src, co);
    EXPECT_TRUE(exact.vertex_exact);
    EXPECT_GT(exact.decompressed_bytes, g.m() * sizeof(vid_t));  // a second pass
    if (!fast.vertex_exact) {
      ++skipped_runs;
      EXPECT_EQ(fast.decompressed_bytes, g.m() * sizeof(vid_t));
    }
    const Plan a = make_plan(g.n(), g.m(), g.csr.offsets.data(), src->chunks(), fast, o);
    const Plan b = make_plan(g.n(), g.m(), g.csr.offsets.data(), src->chunks(), exact, o);
    EXPECT_EQ(a.to_json(), b.to_json());
  }
  EXPECT_GT(skipped_runs, 0);  // the budgets above include ones no vertex plan fits
}

// ---- streamed staging: the in-core unit built and uploaded in pieces --------------------------
// A graph of 60,000 edges in chunks of 1024 edges: the in-core slot (~265 KiB) is several times
// the smallest streamed ring (2 x 64 KiB).
struct StagingGraph {
  OrientedGraph g = oriented(test::random_graph(5000, 60000, 41));
  std::unique_ptr<GraphSource> src = memory_source(g, 1024);
  std::uint64_t offsets() const { return (g.n() + 1) * sizeof(eid_t); }
  std::uint64_t window() const { return 2 * 1024 * sizeof(vid_t); }  // two chunks
  std::uint64_t slot() const { return in_core_bytes(g.n(), g.m(), false); }
  // the in-core plan's host need with a full host slot and the smallest window
  std::uint64_t full_host() const { return offsets() + slot() + window(); }
  std::uint64_t ring_min() const { return kStagingBuffers * kMinStagingPiece; }
};

TEST(Planner, StreamedStagingWhenTheHostSlotDoesNotFit) {
  StagingGraph t;
  ASSERT_GT(t.slot(), t.ring_min());
  for (std::uint64_t host : {t.full_host() - 1, t.offsets() + t.window() + t.ring_min()}) {
    SCOPED_TRACE("host budget " + std::to_string(host));
    Plan p = plan_graph(*t.src, opts(Scheme::Auto, 0, 0, host));  // a device: no device_is_host
    EXPECT_EQ(p.partition.p, 1u);
    ASSERT_EQ(p.units.size(), 1u);
    EXPECT_TRUE(p.streamed_staging());
    EXPECT_EQ(p.staging_buffers, kStagingBuffers);
    EXPECT_GE(p.piece_bytes, kMinStagingPiece);
    EXPECT_LE(p.piece_bytes, t.slot());
    EXPECT_EQ(p.host_staging_bytes(), p.staging_buffers * p.piece_bytes);
    EXPECT_LE(p.host_bytes, host);
    EXPECT_EQ(p.host_bytes, t.offsets() + t.window() + p.host_staging_bytes());
    EXPECT_EQ(p.device_bytes, t.slot());  // the device still holds the whole graph
    EXPECT_NE(p.reason.find("streamed staging"), std::string::npos) << p.reason;
    const std::string j = p.to_json();
    for (const char* key : {"\"staging\":\"streamed\"", "\"piece_bytes\":", "\"staging_buffers\":2",
                            "\"host_staging_bytes\":"})
      EXPECT_NE(j.find(key), std::string::npos) << key;
    EXPECT_NE(p.summary().find("host staging: streamed"), std::string::npos);
    // also with the device budget exactly the in-core slot, and with --parts 1
    Plan q = plan_graph(*t.src, opts(Scheme::Auto, 0, t.slot(), host));
    EXPECT_EQ(q.partition.p, 1u);
    EXPECT_TRUE(q.streamed_staging());
    Plan r = plan_graph(*t.src, opts(Scheme::Range, 1, 0, host));
    EXPECT_TRUE(r.streamed_staging());
  }
}

// Pieces that would hold fewer chunks than there are threads to decompress them: one staging
// buffer of twice the size instead of two.
TEST(Planner, StreamedStagingUsesOneBufferWhenPiecesWouldBeNarrow) {
  OrientedGraph g = oriented(test::random_graph(5000, 60000, 41));
  auto src = memory_source(g, 16384);  // 64 KiB chunks: four of them
  const std::uint64_t chunk = 16384 * sizeof(vid_t);
  const std::uint64_t fixed = (g.n() + 1) * sizeof(eid_t) + 2 * chunk;
  const std::uint64_t slot = in_core_bytes(g.n(), g.m(), false);
  // two threads: a piece should hold two chunks; room for three (1.5 per buffer with two)
  Plan p = plan_graph(*src, opts(Scheme::Auto, 0, 0, fixed + 3 * chunk));
  ASSERT_TRUE(p.streamed_staging());
  EXPECT_EQ(p.staging_buffers, 1u);
  EXPECT_EQ(p.piece_bytes, 3 * chunk);  // a multiple of the alignment
  EXPECT_LE(p.host_bytes, fixed + 3 * chunk);
  EXPECT_LT(p.piece_bytes, slot);
  // room for two pieces of two chunks each: two buffers
  Plan q = plan_graph(*src, opts(Scheme::Auto, 0, 0, fixed + 4 * chunk + chunk / 4));
  ASSERT_TRUE(q.streamed_staging());
  EXPECT_EQ(q.staging_buffers, kStagingBuffers);
  EXPECT_GE(q.piece_bytes, 2 * chunk);
}

TEST(Planner, EnoughHostMemoryKeepsFullSlots) {
  StagingGraph t;
  for (std::uint64_t host : {std::uint64_t{0}, t.full_host(), t.full_host() * 4}) {
    SCOPED_TRACE("host budget " + std::to_string(host));
    Plan p = plan_graph(*t.src, opts(Scheme::Auto, 0, 0, host));
    EXPECT_EQ(p.partition.p, 1u);
    EXPECT_FALSE(p.streamed_staging());
    EXPECT_EQ(p.piece_bytes, 0u);
    EXPECT_EQ(p.host_staging_bytes(), t.slot());
    EXPECT_EQ(p.reason.find("streamed"), std::string::npos) << p.reason;
    EXPECT_NE(p.to_json().find("\"staging\":\"full\""), std::string::npos);
  }
}

TEST(Planner, CpuBackendNeverStreamsItsStaging) {
  // The CPU backend's slots are host memory: streaming the staging would add the ring to them.
  StagingGraph t;
  PlanOptions o = opts(Scheme::Auto, 0, 0, t.full_host() - 1);
  o.device_is_host = true;
  Plan p = plan_graph(*t.src, o);
  EXPECT_FALSE(p.streamed_staging());
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.host_bytes, t.full_host() - 1);
}

TEST(Planner, HostBelowTheRingFallsBackToSmallUnitsOrFails) {
  // Below the smallest ring the streamed plan does not fit. The planner then takes the cheapest
  // out-of-core plan whose full slots fit (small units), and fails with the usual usage error
  // when none does.
  StagingGraph t;
  const std::uint64_t host = t.offsets() + t.window() + t.ring_min() - 1;
  Plan p = plan_graph(*t.src, opts(Scheme::Auto, 0, 0, host));
  EXPECT_FALSE(p.streamed_staging());
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.host_bytes, host);
  EXPECT_LE(2 * p.slot_bytes, t.ring_min());
  try {
    plan_graph(*t.src, opts(Scheme::Auto, 0, 0, t.offsets() + t.window()));
    ADD_FAILURE() << "expected no plan to fit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no partition fits"), std::string::npos) << e.what();
  }
}

TEST(Planner, CensusSkippedWhenTheStreamedPlanFits) {
  StagingGraph t;
  PlanOptions o = opts(Scheme::Auto, 0, 0, (t.offsets() + (16ull << 20)) * 2);
  EXPECT_FALSE(census_needed(t.g.n(), t.g.m(), o, nullptr));
  o.device_is_host = true;  // CPU: the full slot must fit (it does not: the estimate's slack)
  o.host_budget = t.full_host();
  EXPECT_TRUE(census_needed(t.g.n(), t.g.m(), o, nullptr));
}

// ---- the device block cache (device_cache.hpp) -------------------------------------------------

TEST(DeviceBlockCache, EvictsTheFurthestNextUseNeverAPinnedBlock) {
  DeviceBlockCache c(100);
  c.insert(1, 40, 5, 0);
  c.insert(2, 40, 2, 0);
  EXPECT_TRUE(c.make_room(20).empty());  // 80 + 20 fits
  EXPECT_THROW(c.make_room(21), Error);  // both pinned by owner 0
  c.release(0);
  EXPECT_EQ(c.make_room(30), (std::vector<std::uint64_t>{1}));  // next use 5 before 2
  EXPECT_FALSE(c.contains(1));
  EXPECT_EQ(c.used(), 40u);
  // a block held by two owners stays pinned until both release it
  EXPECT_TRUE(c.lookup(2, 7, 0));
  EXPECT_TRUE(c.lookup(2, 7, 1));
  c.release(0);
  EXPECT_THROW(c.make_room(61), Error);
  c.release(1);
  EXPECT_EQ(c.make_room(61), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(c.used(), 0u);
  EXPECT_FALSE(c.lookup(2, 9, 0));
  EXPECT_THROW(c.insert(0, 1, 1, 0), Error);  // key 0 means "not cached"
}

// A naive replay of the same rule (linear scans; victim = the unpinned block with the largest
// (next use, key)), for comparison with the class and with the planner's estimate.
struct NaiveCache {
  struct E {
    std::uint64_t bytes, next;
    std::uint32_t pins;
  };
  std::uint64_t cap = 0, used = 0;
  std::map<std::uint64_t, E> m;
  // Runs one unit's distinct blocks (key, bytes, next use) for `owner`; returns the misses.
  std::vector<bool> unit(const std::vector<std::array<std::uint64_t, 3>>& blocks, int owner) {
    for (auto& kv : m) kv.second.pins &= ~(1u << owner);
    std::vector<bool> miss(blocks.size(), true);
    for (std::size_t x = 0; x < blocks.size(); ++x) {
      auto it = m.find(blocks[x][0]);
      if (it == m.end()) continue;
      miss[x] = false;
      it->second.next = blocks[x][2];
      it->second.pins |= 1u << owner;
    }
    for (std::size_t x = 0; x < blocks.size(); ++x) {
      if (!miss[x]) continue;
      while (used + blocks[x][1] > cap) {
        auto victim = m.end();
        for (auto it = m.begin(); it != m.end(); ++it)
          if (!it->second.pins && (victim == m.end() || it->second.next >= victim->second.next))
            victim = it;
        if (victim == m.end()) throw std::runtime_error("no room");
        used -= victim->second.bytes;
        m.erase(victim);
      }
      m[blocks[x][0]] = E{blocks[x][1], blocks[x][2], 1u << owner};
      used += blocks[x][1];
    }
    return miss;
  }
  void release(int owner) {
    for (auto& kv : m) kv.second.pins &= ~(1u << owner);
  }
  // Whether a unit's blocks find room beside the pinned ones (DeviceBlockCache::fits).
  bool fits(const std::vector<std::array<std::uint64_t, 3>>& blocks) const {
    std::uint64_t need = pinned();
    for (const auto& b : blocks) {
      const auto it = m.find(b[0]);
      need += it == m.end() ? b[1] : (it->second.pins ? 0 : it->second.bytes);
    }
    return need <= cap;
  }
  std::uint64_t pinned() const {
    std::uint64_t n = 0;
    for (const auto& kv : m) n += kv.second.pins ? kv.second.bytes : 0;
    return n;
  }
};

// Seeded units for the cache tests: key sizes 1..50 (size[key], keys 1..keys), units of 1 to 3
// distinct keys, and the bytes of the largest unit.
struct RandomUnits {
  std::vector<std::uint64_t> size;
  std::vector<std::vector<std::uint64_t>> units;
  std::uint64_t largest = 0;
  RandomUnits(std::mt19937_64& rng, std::size_t keys, std::size_t count)
      : size(keys + 1), units(count) {
    for (auto& b : size) b = 1 + rng() % 50;
    for (auto& u : units) {
      const std::size_t k = 1 + rng() % 3;
      while (u.size() < std::min(k, keys)) {
        const std::uint64_t key = 1 + rng() % keys;
        if (std::find(u.begin(), u.end(), key) == u.end()) u.push_back(key);
      }
      std::uint64_t b = 0;
      for (auto key : u) b += size[key];
      largest = std::max(largest, b);
    }
  }
};

// With more units in flight than two, a unit may not fit beside the pinned blocks: fits() says
// so exactly when a naive count does, the pipeline's early collection (release the oldest unit
// in flight until it fits) always makes room, and admit then never throws.
TEST(DeviceBlockCache, FitsWithManyUnitsInFlight) {
  for (std::uint64_t seed : {11u, 12u, 13u})
    for (int lanes : {2, 3, 8, 31}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " lanes " + std::to_string(lanes));
      std::mt19937_64 rng(seed);
      const RandomUnits r(rng, 40, 300);
      const auto& size = r.size;
      const auto& units = r.units;
      const std::uint64_t largest = r.largest;
      DeviceBlockCache c(2 * largest);
      NaiveCache ref;
      ref.cap = 2 * largest;
      std::deque<std::size_t> flying;
      std::uint64_t early = 0, wrong = 0;
      for (std::size_t u = 0; u < units.size(); ++u) {
        const int owner = static_cast<int>(u % static_cast<std::size_t>(lanes));
        if (!flying.empty() && flying.front() + static_cast<std::size_t>(lanes) == u) {
          c.release(owner);
          ref.release(owner);
          flying.pop_front();
        }
        std::vector<std::array<std::uint64_t, 3>> blocks;
        DeviceBlockCache::Request req[3];
        int n = 0;
        for (auto key : units[u]) {
          blocks.push_back({key, size[key], rng() % 1000});
          req[n++] = {key, size[key], blocks.back()[2]};
        }
        for (;;) {
          const bool fits = c.fits(req, n);
          wrong += fits != ref.fits(blocks);
          if (fits || flying.empty()) break;
          const int old = static_cast<int>(flying.front() % static_cast<std::size_t>(lanes));
          c.release(old);
          ref.release(old);
          flying.pop_front();
          ++early;
        }
        bool hit[3];
        EXPECT_NO_THROW(c.admit(req, n, owner, hit));
        ref.unit(blocks, owner);
        flying.push_back(u);
        wrong += c.pinned() != ref.pinned();
        EXPECT_LE(c.used(), c.capacity());
      }
      EXPECT_EQ(wrong, 0u);
      if (lanes == 2) {
        EXPECT_EQ(early, 0u);  // two units of at most half the capacity always fit
      } else if (lanes == 31) {
        EXPECT_GT(early, 0u);  // the cache, not the lanes, limits how far uploads run ahead
      }
    }
}

TEST(DeviceBlockCache, SeededSequencesMatchANaiveReplay) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u})
    for (std::size_t keys : {3u, 8u, 30u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " keys " + std::to_string(keys));
      std::mt19937_64 rng(seed);
      // units of 1 to 3 distinct keys; the cache holds two of the largest
      const RandomUnits r(rng, keys, 200);
      const auto& size = r.size;
      const auto& units = r.units;
      const std::uint64_t largest = r.largest;
      // next uses, by brute force
      auto next_use = [&](std::size_t u, std::uint64_t key) {
        for (std::size_t v = u + 1; v < units.size(); ++v)
          if (std::find(units[v].begin(), units[v].end(), key) != units[v].end()) return v;
        return static_cast<std::size_t>(kNeverUsed);
      };
      DeviceBlockCache c(2 * largest);
      NaiveCache ref;
      ref.cap = 2 * largest;
      std::uint64_t misses = 0, wrong = 0;
      for (std::size_t u = 0; u < units.size(); ++u) {
        const int owner = static_cast<int>(u % 2);
        c.release(owner);
        std::vector<std::array<std::uint64_t, 3>> blocks;
        for (auto key : units[u]) blocks.push_back({key, size[key], next_use(u, key)});
        const std::vector<bool> expect = ref.unit(blocks, owner);
        std::vector<bool> hit(blocks.size());
        for (std::size_t x = 0; x < blocks.size(); ++x)
          hit[x] = c.lookup(blocks[x][0], blocks[x][2], owner);
        for (std::size_t x = 0; x < blocks.size(); ++x) {
          wrong += hit[x] == expect[x];
          if (hit[x]) continue;
          ++misses;
          c.make_room(blocks[x][1]);
          c.insert(blocks[x][0], blocks[x][1], blocks[x][2], owner);
        }
        EXPECT_LE(c.used(), c.capacity());
        for (auto key : units[u]) wrong += !c.contains(key);
      }
      EXPECT_EQ(wrong, 0u);
      EXPECT_GE(misses, 1u);
      if (keys <= 3) {
        EXPECT_LE(misses, keys);  // everything fits: each block is uploaded once
      }
    }
}

// The planner's estimate is the cache run over its units: every range and hash plan with p > 1
// has a cache of its two slots, its units' upload_bytes are what a naive replay uploads (with the
// next uses recomputed by brute force, and the pipeline's units in flight: the lane's previous
// unit collected, the oldest early while there is no room) and sum to bytes_moved, never more
// than without the cache.
TEST(Planner, DeviceCacheEstimateIsAReplayOfTheUnits) {
  auto g = oriented(test::skewed_graph(3000, 40000, 29));
  auto src = memory_source(g, 97);
  for (Scheme s : {Scheme::Range, Scheme::Hash})
    for (std::uint32_t p : {2u, 3u, 5u, 9u}) {
      SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p));
      Plan plan = plan_graph(*src, opts(s, p));
      ASSERT_EQ(plan.partition.p, p);
      ASSERT_EQ(plan.slots, 2);
      EXPECT_EQ(plan.device_cache_bytes, 2 * plan.slot_bytes);
      EXPECT_TRUE(plan.in_flight == 2 || plan.in_flight == 4 || plan.in_flight == 8 ||
                  plan.in_flight == kDeviceCacheInFlight)
          << plan.in_flight;
      const std::size_t lanes = static_cast<std::size_t>(plan.in_flight);
      std::deque<std::size_t> flying;  // the pipeline's units in flight
      const auto next = device_cache_next_uses(plan);
      ASSERT_EQ(next.size(), 3 * plan.units.size());
      NaiveCache ref;
      ref.cap = plan.device_cache_bytes;
      std::uint64_t moved = 0, without = 0, wrong_next = 0;
      std::set<std::uint64_t> keys;
      for (std::size_t u = 0; u < plan.units.size(); ++u) {
        const WorkUnit& w = plan.units[u];
        const BlockInfo* roles[3] = {&w.a, w.b_is_a ? nullptr : &w.b,
                                     w.c_is_a || w.c_is_b ? nullptr : &w.c};
        std::vector<std::array<std::uint64_t, 3>> blocks;
        std::vector<std::uint64_t> up;
        for (int r = 0; r < 3; ++r) {
          if (!roles[r]) continue;
          const std::uint64_t key = device_cache_key(plan, *roles[r]);
          keys.insert(key);
          std::uint64_t nu = kNeverUsed;  // brute force over the later units
          for (std::size_t v = u + 1; v < plan.units.size() && nu == kNeverUsed; ++v) {
            const WorkUnit& x = plan.units[v];
            for (const BlockInfo* b : {&x.a, &x.b, &x.c})
              if (b->row_part == roles[r]->row_part && b->col_part == roles[r]->col_part) nu = v;
          }
          wrong_next += next[3 * u + static_cast<std::size_t>(r)] != nu;
          blocks.push_back({key, roles[r]->bytes, nu});
          up.push_back(roles[r]->upload_bytes);
          without += roles[r]->upload_bytes;
        }
        // the lane's previous unit is collected, and the oldest early while there is no room
        if (!flying.empty() && flying.front() + lanes == u) {
          ref.release(static_cast<int>(u % lanes));
          flying.pop_front();
        }
        while (!ref.fits(blocks) && !flying.empty()) {
          ref.release(static_cast<int>(flying.front() % lanes));
          flying.pop_front();
        }
        const std::vector<bool> miss = ref.unit(blocks, static_cast<int>(u % lanes));
        flying.push_back(u);
        std::uint64_t unit_up = 0;
        for (std::size_t x = 0; x < miss.size(); ++x) unit_up += miss[x] ? up[x] : 0;
        EXPECT_EQ(w.upload_bytes, unit_up) << "unit " << u;
        moved += unit_up;
      }
      EXPECT_EQ(wrong_next, 0u);
      EXPECT_EQ(plan.bytes_moved, moved);
      EXPECT_LE(plan.bytes_moved, without);
      EXPECT_EQ(keys.count(0), 0u);
      if (s == Scheme::Range) {
        EXPECT_EQ(keys.size(), p * (p + 1) / 2);  // the blocks on and above the diagonal
      }
    }
  // no cache in core or for the vertex scheme (its blocks are used once)
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Range, 1)).device_cache_bytes, 0u);
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Vertex, 4)).device_cache_bytes, 0u);
  EXPECT_EQ(plan_graph(*src, opts(Scheme::Vertex, 4)).in_flight, 2);
}

// A range plan built by hand in the planner's row order (i descending, then j, then k): p parts
// of 100 rows, block G_ab (b >= a) of bytes(a, b) bytes, uploaded whole, 8 bytes an edge; unit
// (i, j, k) of work(i, j, k) wedges. The callbacks run in that order (blocks by a, then b;
// then the units), so seeded ones draw the same values every time. Not finished.
template <class Bytes, class Work>
Plan hand_range_plan(std::uint32_t p, Bytes bytes, Work work) {
  Plan plan;
  plan.partition.scheme = Scheme::Range;
  plan.partition.p = p;
  plan.partition.n = 100 * p;
  for (std::uint32_t a = 0; a <= p; ++a) plan.partition.bounds.push_back(100 * a);
  std::vector<std::vector<BlockInfo>> G(p, std::vector<BlockInfo>(p));
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = a; b < p; ++b) {
      BlockInfo& bi = G[a][b];
      bi.row_part = a;
      bi.col_part = b;
      bi.rows = 100;
      bi.col_space = 100;
      bi.bytes = bi.upload_bytes = bytes(a, b);
      bi.edges = bi.bytes / 8;
    }
  for (std::uint32_t i = p; i-- > 0;)
    for (std::uint32_t j = i; j < p; ++j)
      for (std::uint32_t k = j; k < p; ++k) {
        WorkUnit w;
        w.i = i;
        w.j = j;
        w.k = k;
        w.a = G[i][j];
        w.b = G[i][k];
        w.c = G[j][k];
        w.b_is_a = j == k;
        w.c_is_a = i == j && j == k;
        w.c_is_b = i == j;
        w.work = work(i, j, k);
        plan.units.push_back(w);
      }
  return plan;
}

// The tail cover on a plan built by hand (range, p = 10, the planner's order: i descending):
// part 0's blocks are large and nearly without work, so the order's tail is upload-bound, while
// the high parts' units are much work in few bytes. The cover moves some of those into the tail:
// the same tasks, every unit finished again (the cache replayed for the new order), fewer
// estimated exposed upload seconds, and the moved units after the head. Seeded block sizes.
TEST(Planner, TailCoverMovesHeavyUnitsIntoAnUploadBoundTail) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::uint32_t p = 10;
    std::uniform_real_distribution<double> jitter(0.8, 1.25);
    Plan plan = hand_range_plan(
        p,
        [&](std::uint32_t a, std::uint32_t) {  // part 0: 4 MB blocks; the others 64 KB
          return static_cast<std::uint64_t>((a == 0 ? 4e6 : 64e3) * jitter(rng));
        },
        [&](std::uint32_t i, std::uint32_t j, std::uint32_t k) {  // ~1 ms a wedge-heavy unit
          return i == 0 ? 1e3 : 1e9 * jitter(rng) * (i + j + k);
        });
    plan.rates.upload_bytes_per_s = 1e9;  // a slow link: part 0's units take milliseconds
    plan_internal::finish_units(plan, false, 16);
    ASSERT_EQ(plan.in_flight, 16);
    ASSERT_GT(plan.device_cache_bytes, 0u);
    const Plan before = plan;
    double end0 = 0, end1 = 0;
    const double exposed0 = plan_internal::estimated_exposed_upload(before, &end0);
    const std::size_t moved = plan_internal::cover_upload_tail(plan, false);
    ASSERT_GT(moved, 0u) << "exposed " << exposed0;
    EXPECT_EQ(plan.tail_cover_units, 0u);  // (the caller records it)
    const double exposed1 = plan_internal::estimated_exposed_upload(plan, &end1);
    EXPECT_LT(exposed1, exposed0);
    // the same tasks, in a new order: a moved unit as slices 0 .. slices - 1 (in that order),
    // whose work adds up to the unit's
    auto tasks = [](const Plan& x) {
      std::vector<std::array<std::uint32_t, 3>> t;
      for (const auto& w : x.units)
        if (w.slice == 0) t.push_back({w.i, w.j, w.k});
      return t;
    };
    auto t0 = tasks(before), t1 = tasks(plan);
    EXPECT_NE(t0, t1);
    std::sort(t0.begin(), t0.end());
    std::sort(t1.begin(), t1.end());
    EXPECT_EQ(t0, t1);
    std::map<std::array<std::uint32_t, 3>, std::pair<std::uint32_t, double>> seen;  // next, work
    std::size_t sliced_units = 0;
    for (const auto& w : plan.units) {
      ASSERT_LT(w.slice, w.slices);
      auto& st = seen[{w.i, w.j, w.k}];
      EXPECT_EQ(w.slice, st.first) << "slices out of order";
      st.first = w.slice + 1;
      st.second += w.work;
      sliced_units += w.slices > 1;
    }
    for (const auto& w : before.units)
      EXPECT_NEAR(seen.at({w.i, w.j, w.k}).second, w.work, 1e-6 * w.work);
    EXPECT_GT(sliced_units, moved);  // the moved units were cut
    // the moved units are wedge-heavy units of the head, now among part 0's units, except the
    // first slice of each sliced unit (it uploads the unit's blocks), which comes just before
    // them, at the end of the head
    const std::size_t tail0 =
        static_cast<std::size_t>(std::find_if(plan.units.begin(), plan.units.end(),
                                              [](const WorkUnit& w) { return w.i == 0; }) -
                                 plan.units.begin());
    std::size_t heavy_in_tail = 0, first_slices = 0;
    for (std::size_t u = tail0; u < plan.units.size(); ++u) heavy_in_tail += plan.units[u].i != 0;
    for (std::size_t u = tail0; u-- > 0 && plan.units[u].slices > 1 && plan.units[u].slice == 0;)
      ++first_slices;
    std::size_t sliced_donors = 0;
    for (const auto& w : plan.units) sliced_donors += w.slices > 1 && w.slice == 0;
    EXPECT_EQ(first_slices, sliced_donors);
    EXPECT_EQ(heavy_in_tail + first_slices, plan.tail_cover_slices);
    // finished again: the replay's uploads are the new order's, and the totals add up
    std::uint64_t sum = 0;
    for (const auto& w : plan.units) sum += w.upload_bytes;
    EXPECT_EQ(plan.bytes_moved, sum);
  }
}

// The order inside a task on plans built by hand (range, p = 6, i descending, row order), with
// seeded block sizes and work: the column order (plan_internal::column_order) keeps the tasks and
// sorts each task's units by k, then j; choose_in_flight keeps the order and the count of units
// in flight whose estimated line (with its tail cover) ends first, as the test recomputes them
// here, and the row order when both end alike (a link so fast that uploads cost nothing). Each
// order must win some of the seeded plans.
TEST(Planner, ColumnOrderWhenItsLineEndsFirst) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int column_wins = 0, row_wins = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const bool fast_link = trial % 10 == 9;
    Plan plan = hand_range_plan(
        6,
        [&](std::uint32_t, std::uint32_t) {
          return static_cast<std::uint64_t>(2e5 + 2e6 * unit(rng));
        },
        [&](std::uint32_t, std::uint32_t, std::uint32_t) {  // up to 3.7 ms of kernel
          return unit(rng) < 0.5 ? 1e3 : 3e9 * unit(rng);
        });
    plan.rates.upload_bytes_per_s = fast_link ? 1e15 : 1e9;  // 0.2-2.2 ms a block, or nothing
    plan_internal::finish_units(plan, false, 16);
    ASSERT_GT(plan.device_cache_bytes, 0u);
    ASSERT_FALSE(plan.column_order);
    const Plan row = plan;
    Plan column = plan;
    plan_internal::column_order(column);
    ASSERT_TRUE(column.column_order);
    // the column order: the same tasks, each task's units by k, then j
    ASSERT_EQ(column.units.size(), row.units.size());
    for (std::size_t u = 1; u < column.units.size(); ++u) {
      const WorkUnit &a = column.units[u - 1], &b = column.units[u];
      EXPECT_TRUE(a.i > b.i || (a.i == b.i && (a.k < b.k || (a.k == b.k && a.j < b.j))))
          << "unit " << u;
    }
    // the estimates of both orders at each count of units in flight, with the tail cover
    double best_row = 0, best_column = 0;
    for (int f = 2; f <= 16; f *= 2) {
      double end_row = 0, end_column = 0;
      Plan r = row, c = column;
      plan_internal::finish_units(r, false, f);
      plan_internal::finish_units(c, false, f);
      plan_internal::cover_upload_tail(r, false);
      plan_internal::cover_upload_tail(c, false);
      plan_internal::estimated_exposed_upload(r, &end_row);
      plan_internal::estimated_exposed_upload(c, &end_column);
      best_row = f == 2 ? end_row : std::min(best_row, end_row);
      best_column = f == 2 ? end_column : std::min(best_column, end_column);
    }
    plan_internal::choose_in_flight(plan, false);
    double end = 0;
    plan_internal::estimated_exposed_upload(plan, &end);
    EXPECT_LE(end, std::min(best_row, best_column) * 1.001);
    if (best_column < best_row * 0.999) {
      EXPECT_TRUE(plan.column_order);
      column_wins += !fast_link;
    } else if (best_row < best_column * 0.999) {
      EXPECT_FALSE(plan.column_order);
      row_wins += !fast_link;
    }
    if (fast_link) {
      EXPECT_NEAR(best_row, best_column, 1e-9 * best_row);
      EXPECT_FALSE(plan.column_order);  // a tie keeps the row order
    }
  }
  EXPECT_GT(column_wins, 0);
  EXPECT_GT(row_wins, 0);
  std::printf("column order won %d plans, the row order %d\n", column_wins, row_wins);
}

TEST(Planner, UnknownSchemeIsAUsageError) {
  EXPECT_THROW(parse_scheme("diagonal"), Error);
  EXPECT_EQ(parse_scheme("vertex"), Scheme::Vertex);
}

}  // namespace
}  // namespace tristream
