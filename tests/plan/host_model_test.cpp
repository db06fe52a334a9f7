// host_model_test.cpp — the host model (src/plan/host_model.cpp): streamed staging when the host
// slot does not fit, its ring, full slots when they fit, never on the CPU backend, a window of one
// chunk as the last resort, and the census skipped when the streamed plan fits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "plan_helpers.hpp"
#include "plan_internal.hpp"
#include "test_util.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

using test::opts;
using test::oriented;

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
  // (Below the in-core slot beside even a window of one chunk.)
  StagingGraph t;
  const std::uint64_t host = t.full_host() - t.window() / 2 - 1;
  PlanOptions o = opts(Scheme::Auto, 0, 0, host);
  o.device_is_host = true;
  Plan p = plan_graph(*t.src, o);
  EXPECT_FALSE(p.streamed_staging());
  EXPECT_GT(p.partition.p, 1u);
  EXPECT_LE(p.host_bytes, host);
}

TEST(Planner, AWindowOfOneChunkIsTheLastResort) {
  // The in-core slot fits beside one decompressed chunk but not two: the CPU backend's in-core
  // plan decompresses one chunk at a time. With room for two, the window keeps two.
  StagingGraph t;
  PlanOptions o = opts(Scheme::Auto, 0, 0, t.full_host() - 1);
  o.device_is_host = true;
  Plan p = plan_graph(*t.src, o);
  EXPECT_EQ(p.partition.p, 1u);
  EXPECT_EQ(p.window_chunks, 1u);
  EXPECT_EQ(p.host_bytes, t.offsets() + t.slot() + t.window() / 2);
  o.host_budget = t.full_host();
  Plan q = plan_graph(*t.src, o);
  EXPECT_EQ(q.partition.p, 1u);
  EXPECT_EQ(q.window_chunks, 2u);
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
  EXPECT_LE(2 * p.slot_bytes, t.ring_min() + t.window() / 2);  // a window of one chunk at least
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

}  // namespace
}  // namespace tristream
