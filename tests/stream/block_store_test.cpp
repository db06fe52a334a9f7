// block_store_test.cpp — the host block store with a fake registrar: the preload's blocks equal a
// naive filter, registered in one call (the arena) and all unregistered at the end; the chunk
// cache's peak stays within its cap; a preload failure comes back to the caller; several
// callers at once (workers sharing a store) build each row part once and get the same blocks.
#include "stream/host_block_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "common/thread_pool.hpp"
#include "stream/clock.hpp"
#include "stream_util.hpp"
#include "test_util.hpp"

namespace tristream {
namespace {

using stream::BlockBuilder;
using stream::BlockKey;
using stream::ChunkReader;
using stream::HostBlock;
using stream::HostBlockStore;
using stream::Recorder;

OrientedGraph graph() {
  const auto e = test::random_graph(900, 9000, 5);
  return orient_edge_list(test::vertex_count(e), e);
}

Plan store_plan(const GraphSource& src, Scheme s, std::uint32_t p) {
  PlanOptions po;
  po.scheme = s;
  po.parts = p;
  po.threads = 2;
  Plan plan = plan_graph(src, po);
  plan.block_cache_bytes = std::max(plan.block_cache_bytes, plan.row_parts_bytes);
  return plan;
}

// A store over its own recorder, pool, chunk reader (a cache of `cache_bytes`) and builder.
struct StoreRig {
  StoreRig(const GraphSource& src, const Plan& plan, std::uint64_t cache_bytes)
      : rec(stream::now_s(), stats),
        pool(2),
        reader(src, pool, plan.window_chunks, cache_bytes, rec),
        builder(plan.partition, reader),
        store(plan, builder, rec, nullptr, 0) {}
  PipelineStats stats;
  Recorder rec;
  ThreadPool pool;
  ChunkReader reader;
  BlockBuilder builder;
  HostBlockStore store;
};

void expect_naive(const OrientedGraph& g, const Partition& P, const HostBlock& hb, std::uint32_t a,
                  std::uint32_t b) {
  const test::DenseBlock want = test::naive_block(g.csr, P, a, b);
  ASSERT_EQ(hb.cols.size(), want.cols.size());
  EXPECT_EQ(test::dense_offsets(hb.off.data(), hb.packed, hb.packed_rows, P.rows(a)), want.offsets);
  EXPECT_TRUE(std::equal(want.cols.begin(), want.cols.end(), hb.cols.data()));
}

TEST(HostBlockStore, PreloadRegistersOnceAndUnregistersAll) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 256);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair}) {
    const Plan plan = store_plan(*src, s, 4);
    ASSERT_GT(plan.partition.p, 1u);
    test::FakeRegistrar reg;
    PipelineStats stats;
    Recorder rec(stream::now_s(), stats);
    ThreadPool pool(3);
    ChunkReader reader(*src, pool, plan.window_chunks, plan.chunk_cache_bytes, rec);
    BlockBuilder builder(plan.partition, reader);
    {
      HostBlockStore store(plan, builder, rec, &reg, 0);
      ASSERT_TRUE(store.enabled());
      store.start_preload(0);
      for (const WorkUnit& w : plan.units) {
        for (const BlockInfo* bi : {&w.a, &w.b, &w.c}) {
          if (s == Scheme::Pair && bi == &w.a) continue;  // (cut from B by the backend)
          const stream::BlockKey key{bi->row_part, bi->col_part};
          auto hb = store.cached_block(key, {}, 0);
          ASSERT_NE(hb, nullptr);
          EXPECT_TRUE(store.register_block(*hb));
          expect_naive(g, plan.partition, *hb, key.first, key.second);
        }
      }
      store.finish_preload();
      EXPECT_TRUE(store.direct());
      EXPECT_EQ(reg.registrations(), 1u);  // the arena, which holds every block
      EXPECT_LE(reader.peak_bytes(), plan.chunk_cache_bytes);
    }
    EXPECT_EQ(reg.live(), 0u);
    EXPECT_EQ(reg.unregistrations(), reg.registrations());
  }
}

// A store told which units it will serve (an MPI rank's static share) preloads the row parts of
// those units only, in the order they first need them, each built once and equal to the naive
// filter; the others are left to be built on demand. Told every unit, it preloads them all.
TEST(HostBlockStore, PreloadOfSomeUnitsBuildsTheirRowPartsOnly) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 256);
  for (Scheme s : {Scheme::Range, Scheme::Pair}) {
    SCOPED_TRACE(scheme_name(s));
    const Plan plan = store_plan(*src, s, 6);
    ASSERT_GT(plan.units.size(), 4u);
    // the first quarter of the units (a rank's run: the plan orders them by descending row
    // part): which row parts they need
    std::vector<std::size_t> units;
    std::set<std::uint32_t> parts;
    for (std::size_t u = 0; u < plan.units.size() / 4; ++u) {
      units.push_back(u);
      parts.insert(plan.units[u].i);
      parts.insert(plan.units[u].j);
    }
    ASSERT_LT(parts.size(), plan.partition.p) << "the run needs every row part: no test";
    // the row parts built: one "build" span each (the preload's are unit -1's)
    auto builds = [](const PipelineStats& st, bool preload_only) {
      return static_cast<std::size_t>(
          std::count_if(st.spans.begin(), st.spans.end(), [&](const TraceSpan& sp) {
            return sp.stage == "build" && (!preload_only || sp.unit == -1);
          }));
    };
    for (const bool some : {true, false}) {
      StoreRig rig(*src, plan, plan.chunk_cache_bytes);
      EXPECT_TRUE(HostBlockStore::would_preload(plan, some ? &units : nullptr));
      rig.store.start_preload(0, some ? &units : nullptr);
      rig.store.finish_preload();
      EXPECT_EQ(builds(rig.stats, true), some ? parts.size() : std::size_t{plan.partition.p});
      for (std::size_t u : units) {
        const WorkUnit& w = plan.units[u];
        for (const BlockInfo* bi : {&w.a, &w.b, &w.c}) {
          if (s == Scheme::Pair && bi == &w.a) continue;  // (cut from B by the backend)
          auto hb = rig.store.cached_block({bi->row_part, bi->col_part}, {}, 0);
          ASSERT_NE(hb, nullptr);
          expect_naive(g, plan.partition, *hb, bi->row_part, bi->col_part);
        }
      }
      EXPECT_EQ(builds(rig.stats, false), some ? parts.size() : std::size_t{plan.partition.p})
          << "a row part of the preloaded units was built again";
    }
  }
}

TEST(HostBlockStore, WithoutARegistrarBlocksStayUnpinned) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 256);
  const Plan plan = store_plan(*src, Scheme::Range, 3);
  PipelineStats stats;
  Recorder rec(stream::now_s(), stats);
  ThreadPool pool(2);
  ChunkReader reader(*src, pool, plan.window_chunks, plan.chunk_cache_bytes, rec);
  BlockBuilder builder(plan.partition, reader);
  HostBlockStore store(plan, builder, rec, nullptr, 0);
  store.start_preload(0);
  auto hb = store.cached_block({0, 1}, {}, 0);
  ASSERT_NE(hb, nullptr);
  expect_naive(g, plan.partition, *hb, 0, 1);
  store.finish_preload();
  EXPECT_FALSE(store.direct());
}

TEST(HostBlockStore, SmallCacheEvictsWithinItsCap) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 256);
  Plan plan = store_plan(*src, Scheme::Range, 4);
  // room for the largest row part only: no preload, blocks built on demand and evicted
  std::uint64_t largest = 0;
  for (auto b : plan.row_part_bytes) largest = std::max(largest, b);
  plan.block_cache_bytes = largest;
  StoreRig rig(*src, plan, g.m() * sizeof(vid_t));
  HostBlockStore& store = rig.store;
  store.start_preload(0);  // (nothing: the blocks do not all fit)
  for (std::uint32_t a = 0; a < plan.partition.p; ++a) {
    auto hb = store.cached_block({a, a}, {}, 0);
    ASSERT_NE(hb, nullptr);
    expect_naive(g, plan.partition, *hb, a, a);
  }
}

// Four threads ask for every block at once, in different orders, without a preload: each row
// part is built once (the others wait for it and find it), every caller gets the one cached
// block, and every block equals the naive filter.
TEST(HostBlockStore, CallersThatMissTogetherBuildEachRowPartOnce) {
  const OrientedGraph g = graph();
  const auto src = memory_source(g, 256);
  for (Scheme s : {Scheme::Range, Scheme::Hash}) {
    SCOPED_TRACE(scheme_name(s));
    const Plan plan = store_plan(*src, s, 5);
    const std::uint32_t p = plan.partition.p;
    StoreRig rig(*src, plan, g.m() * sizeof(vid_t));
    HostBlockStore& store = rig.store;
    std::vector<BlockKey> keys;
    for (std::uint32_t a = 0; a < p; ++a)
      for (std::uint32_t b = plan.partition.first_block(a); b < p; ++b) keys.push_back({a, b});
    constexpr int kCallers = 4;
    std::vector<std::vector<std::shared_ptr<HostBlock>>> got(kCallers);
    std::vector<PipelineStats> own(kCallers);
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c)
      callers.emplace_back([&, c] {
        Recorder crec(stream::now_s(), own[c]);
        HostBlockStore::Caller caller{crec};
        for (std::size_t x = 0; x < keys.size(); ++x) {
          // (callers 1 and 3 walk the keys backwards)
          const BlockKey k = keys[c % 2 ? keys.size() - 1 - x : x];
          got[c].push_back(store.cached_block(k, {}, c, &caller));
        }
      });
    for (auto& t : callers) t.join();
    std::size_t builds = 0;
    for (const PipelineStats& o : own)
      for (const TraceSpan& sp : o.spans) builds += sp.stage == "build";
    EXPECT_EQ(builds, p);
    for (int c = 0; c < kCallers; ++c)
      for (std::size_t x = 0; x < keys.size(); ++x) {
        const std::size_t k = c % 2 ? keys.size() - 1 - x : x;
        ASSERT_NE(got[c][x], nullptr);
        EXPECT_EQ(got[c][x], got[0][k]);  // the one cached block
        if (c == 0) expect_naive(g, plan.partition, *got[0][k], keys[k].first, keys[k].second);
      }
  }
}

TEST(HostBlockStore, PreloadFailureSurfacesAndUnregistersAll) {
  const OrientedGraph g = graph();
  const auto good = memory_source(g, 256);
  const test::FailingSource src(*good, good->chunks().size() - 1);  // the last chunk fails
  const Plan plan = store_plan(*good, Scheme::Range, 4);
  test::FakeRegistrar reg;
  {
    PipelineStats stats;
    Recorder rec(stream::now_s(), stats);
    ThreadPool pool(2);
    ChunkReader reader(src, pool, plan.window_chunks, plan.chunk_cache_bytes, rec);
    BlockBuilder builder(plan.partition, reader);
    HostBlockStore store(plan, builder, rec, &reg, 0);
    store.start_preload(0);
    EXPECT_THROW(
        {
          for (const WorkUnit& w : plan.units) (void)store.cached_block({w.i, w.j}, {}, 0);
          store.finish_preload();
        },
        Error);
  }
  EXPECT_EQ(reg.live(), 0u);
}

}  // namespace
}  // namespace tristream
