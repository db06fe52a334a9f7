// count_host_test.cpp — the host memory of a count beside its plan (plan/host_model.hpp:
// count_host, check_host_floor): the plan's share of a budget, the floor and the part that sets
// it, and the error that names the smallest budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/host_model.hpp"
#include "tristream/error.hpp"

namespace tristream {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// `count` chunks of `edges` edges each, compressed to half.
std::vector<tcsr::ChunkInfo> chunks(std::size_t count, std::uint64_t edges) {
  std::vector<tcsr::ChunkInfo> out(count);
  for (std::size_t k = 0; k < count; ++k) {
    out[k].first_edge = k * edges;
    out[k].edges = edges;
    out[k].raw_size = edges * sizeof(vid_t);
    out[k].compressed_size = out[k].raw_size / 2;
  }
  return out;
}

TEST(CountHost, PlanBudgetIsTheBudgetLessWhatTheProcessHoldsBesideTheOffsets) {
  const CountHost h = count_host(1000, chunks(4, 1000), 1, 6 * kMiB, false, false, false, 0);
  EXPECT_EQ(h.offsets, 1001 * sizeof(eid_t));
  const std::uint64_t outside = h.runtime - h.offsets + h.threads;
  EXPECT_EQ(h.plan_budget(100 * kMiB), 100 * kMiB - outside);
  EXPECT_EQ(h.plan_budget(0), 0u);  // unlimited stays unlimited
  EXPECT_EQ(h.plan_budget(outside / 2), 1u);
}

TEST(CountHost, PerVertexArraysSetTheFloorOfALargeSparseGraph) {
  // 4 M vertices, few edges: three 8-byte arrays per vertex (sorted in place) dominate.
  const std::uint64_t n = 4u << 20;
  const CountHost h = count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, true, false, false, 0);
  std::string part;
  const std::uint64_t need = h.floor(&part);
  EXPECT_EQ(part, "per-vertex arrays");
  EXPECT_EQ(need, h.runtime + h.threads + 3 * n * 8);
  EXPECT_EQ(h.figures_budget(need), 3 * n * 8);
  EXPECT_GT(per_vertex_order_bytes(n), 3 * n * 8);  // the faster order needs more
  // without per-vertex output the floor is far lower
  const CountHost plain = count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, false, false, false, 0);
  EXPECT_LT(plain.floor(nullptr), need / 2);
}

TEST(CountHost, DeclaredIsolatedVerticesGrowThePerVertexArrays) {
  // 1 M vertices with edges, 3 M declared: the arrays grow to 3 M entries beside the isolated ids
  const std::uint64_t n = 1u << 20, declared = 3u << 20;
  const CountHost plain = count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, true, false, false, 0);
  const CountHost h =
      count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, true, false, false, 0, declared);
  EXPECT_EQ(plain.figures, 3 * n * 8);
  EXPECT_EQ(h.figures, 32 * declared);
  // declared below n (a source that declares fewer): never below the graph's own arrays
  EXPECT_EQ(count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, true, false, false, 0, n / 2).figures,
            32 * n);
}

TEST(CountHost, ErrorNamesThePartAndTheSmallestBudget) {
  const std::uint64_t n = 4u << 20;
  const CountHost h = count_host(n, chunks(1, 1u << 16), 1, 40 * kMiB, true, false, false, 0);
  const std::uint64_t need = h.floor(nullptr);
  EXPECT_NO_THROW(check_host_floor(h, need));
  EXPECT_NO_THROW(check_host_floor(h, 0));  // unlimited
  try {
    check_host_floor(h, 24 * kMiB);
    FAIL() << "no error below the floor";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("per-vertex arrays need"), std::string::npos) << msg;
    EXPECT_NE(msg.find("24.0 MiB given"), std::string::npos) << msg;
  }
}

TEST(CountHost, WideChunksSetTheFloorThroughADecompressedChunk) {
  // 64 MiB chunks: the census's decompressed chunk (beside its histograms) is the largest need;
  // the plan's window of one chunk needs as much but no histograms.
  const CountHost h = count_host(1000, chunks(2, 16u << 20), 1, 6 * kMiB, false, false, false, 0);
  std::string part;
  const std::uint64_t need = h.floor(&part);
  EXPECT_EQ(part, "the census's histograms, bitmaps and decompressed chunk");
  EXPECT_GE(need, h.runtime + h.threads + 64 * kMiB);
  EXPECT_EQ(h.window, 64 * kMiB);
}

TEST(CountHost, CensusBucketsShrinkUnderABudget) {
  using plan_internal::census_fine_cap;
  EXPECT_EQ(census_fine_cap(0), UINT32_MAX);         // unlimited
  EXPECT_EQ(census_fine_cap(1u << 20), UINT32_MAX);  // the planner's tiny test budgets
  const std::uint32_t f = census_fine_cap(16 * kMiB);
  EXPECT_LE(2ull * f * f * sizeof(eid_t), 16 * kMiB / 8);
  EXPECT_GE(census_fine_cap(1024 * kMiB), 1024u);
}

}  // namespace
}  // namespace tristream
