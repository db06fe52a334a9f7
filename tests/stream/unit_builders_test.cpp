// unit_builders_test.cpp — the unit builders through the unit preparer: every unit's blocks have
// the census's sizes (rows and columns; vertex C within its bound) and, for range, hash and pair
// (its suffix blocks included), equal a naive filter of the graph; pair's A is left to the
// backend to cut from B, and cut_rows gives the naive block; vertex units' proxies are the
// neighbourhood of their rows.
#include "stream/unit_preparer.hpp"

#include <gtest/gtest.h>

#include <set>

#include "common/thread_pool.hpp"
#include "stream/clock.hpp"
#include "stream_util.hpp"
#include "test_util.hpp"

namespace tristream {
namespace {

using stream::Recorder;
using stream::SlotState;
using stream::UnitPreparer;

OrientedGraph graph() {
  const auto e = test::skewed_graph(800, 7000, 9);
  return orient_edge_list(test::vertex_count(e), e);
}

void expect_block(const OrientedGraph& g, const Partition& P, const UnitLayout& L, int bi,
                  std::uint32_t a, std::uint32_t b) {
  const SlotBlock& sb = L.blocks[bi];
  const test::DenseBlock want = test::naive_block(g.csr, P, a, b);
  ASSERT_EQ(sb.edges, want.cols.size());
  const void* off = L.host_packed[bi].valid() ? static_cast<const void*>(L.host_packed[bi].ids)
                                              : static_cast<const void*>(L.host_offsets[bi]);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(test::dense_offsets(off, sb.packed, sb.packed_rows, sb.rows), want.offsets);
  EXPECT_TRUE(std::equal(want.cols.begin(), want.cols.end(), L.host_cols[bi]));
}

void check_units(Scheme s, std::uint32_t p, std::uint64_t block_cache) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 300);
  PlanOptions po;
  po.scheme = s;
  po.parts = p;
  po.threads = 2;
  Plan plan = plan_graph(*src, po);
  ASSERT_EQ(plan.partition.p, p);
  plan.block_cache_bytes = block_cache;
  PipelineStats stats;
  Recorder rec(stream::now_s(), stats);
  ThreadPool pool(2), copy_pool(2);
  UnitPreparer prep(*src, plan, pool, copy_pool, rec, true, 0, nullptr);
  prep.set_slots(1);  // no A reused from a previous unit
  std::vector<std::uint64_t> slot_mem(plan.slot_bytes / 8 + 64);
  auto* slot = reinterpret_cast<unsigned char*>(slot_mem.data());
  SlotState st;
  prep.start_preload(0);
  const Partition& P = plan.partition;
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    SCOPED_TRACE(u);
    const WorkUnit& w = plan.units[u];
    ASSERT_TRUE(prep.prepare(u, slot, st));
    const UnitLayout& L = st.layout;
    EXPECT_EQ(L.unit, static_cast<std::int64_t>(u));
    EXPECT_LE(L.bytes, plan.slot_bytes);
    EXPECT_EQ(L.blocks[L.a].rows, w.a.rows);
    EXPECT_EQ(L.blocks[L.a].edges, w.a.edges);
    EXPECT_EQ(L.blocks[L.c].rows, w.c.rows);
    if (s == Scheme::Vertex) {
      EXPECT_LE(L.blocks[L.c].edges, w.c.edges);  // the plan has a bound
      // X = the columns of V_i's rows, in ascending order
      std::set<vid_t> x;
      for (std::uint64_t r = P.bounds[w.i]; r < P.bounds[w.i + 1]; ++r)
        for (eid_t e = g.csr.offsets[r]; e < g.csr.offsets[r + 1]; ++e) x.insert(g.csr.cols[e]);
      EXPECT_EQ(st.proxies, std::vector<vid_t>(x.begin(), x.end()));
      EXPECT_EQ(L.num_spaces, 2);
    } else {
      EXPECT_EQ(L.blocks[L.b].edges, w.b.edges);
      EXPECT_EQ(L.blocks[L.c].edges, w.c.edges);
      for (const auto& [bi, info] : {std::pair<int, BlockInfo>{L.a, w.a}, {L.b, w.b}, {L.c, w.c}})
        if (!L.blocks[bi].cut) expect_block(g, P, L, bi, info.row_part, info.col_part);
      // pair: A is cut from B by the backend (never built nor uploaded); cut here as the CPU
      // backend cuts it, it is the naive G_ij
      const SlotBlock& A = L.blocks[L.a];
      EXPECT_EQ(A.cut, s == Scheme::Pair);
      if (A.cut) {
        EXPECT_FALSE(L.uploads(L.a));
        EXPECT_EQ(A.cut_lo, P.col_lo(w.a.col_part));
        EXPECT_EQ(A.cut_hi, P.col_hi(w.a.col_part));
        EXPECT_GE(L.upload_from, A.cols_at);  // (A's bytes never travel)
        std::vector<eid_t> off(A.rows + 1);
        std::vector<vid_t> cols(A.edges);
        EXPECT_EQ(cut_rows(L.host_rows(L.b), A.cut_lo, A.cut_hi, off.data(), cols.data(), A.edges),
                  A.edges);
        const test::DenseBlock want = test::naive_block(g.csr, P, w.a.row_part, w.a.col_part);
        EXPECT_EQ(off, want.offsets);
        EXPECT_EQ(cols, want.cols);
      }
      EXPECT_GE(L.num_spaces, 1);
    }
  }
  prep.finish_preload();
}

TEST(UnitBuilders, RangeUnitsFromTheRowsMatchTheCensus) {
  check_units(Scheme::Range, 3, 0);
}
TEST(UnitBuilders, RangeUnitsFromTheBlockStoreMatchTheCensus) {
  check_units(Scheme::Range, 4, std::uint64_t{1} << 30);
}
TEST(UnitBuilders, HashUnitsMatchTheCensus) {
  check_units(Scheme::Hash, 3, 0);
  check_units(Scheme::Hash, 3, std::uint64_t{1} << 30);
}
TEST(UnitBuilders, PairUnitsMatchTheCensus) {
  for (std::uint32_t p : {2u, 3u, 5u}) {
    check_units(Scheme::Pair, p, 0);                       // built from the rows
    check_units(Scheme::Pair, p, std::uint64_t{1} << 30);  // from the block store
  }
}
TEST(UnitBuilders, VertexUnitsMatchTheCensus) {
  check_units(Scheme::Vertex, 3, 0);
}

TEST(UnitBuilders, InCoreUnitIsTheWholeGraph) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 300);
  PlanOptions po;
  po.scheme = Scheme::Range;
  po.parts = 1;
  Plan plan = plan_graph(*src, po);
  ASSERT_EQ(plan.units.size(), 1u);
  PipelineStats stats;
  Recorder rec(stream::now_s(), stats);
  ThreadPool pool(2), copy_pool(2);
  UnitPreparer prep(*src, plan, pool, copy_pool, rec, false, 0, nullptr);
  std::vector<std::uint64_t> slot_mem(plan.slot_bytes / 8 + 64);
  SlotState st;
  ASSERT_TRUE(prep.prepare(0, reinterpret_cast<unsigned char*>(slot_mem.data()), st));
  const UnitLayout& L = st.layout;
  EXPECT_EQ(std::vector<eid_t>(L.host_offsets[L.a], L.host_offsets[L.a] + g.n() + 1),
            g.csr.offsets);
  EXPECT_TRUE(std::equal(g.csr.cols.begin(), g.csr.cols.end(), L.host_cols[L.a]));
}

}  // namespace
}  // namespace tristream
