// degrees_test.cpp — the streamed degree pass (stream/degrees.cpp): exact degrees on any thread
// count, hubs included, and its measured peak against the host model (n degrees and a decompressed
// chunk per thread, fewer threads under a cap) within 10%.
#include <gtest/gtest.h>

#include <vector>

#include "common/host_peak.hpp"
#include "stream_util.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::test {
namespace {

TEST(Degrees, ExactOnAnyThreadCountAndUnderACap) {
  const OrientedGraph g = orient_edge_list(5000, random_graph(5000, 40000, 3));
  const auto src = memory_source(g, 1000);
  const std::vector<eid_t> want = reference_degrees(g);
  EXPECT_EQ(streamed_degrees(*src, 1), want);
  EXPECT_EQ(streamed_degrees(*src, 4), want);
  EXPECT_EQ(streamed_degrees(*src, 4, 1), want);  // a cap below one chunk: one thread
}

TEST(Degrees, MeasuredPeakMatchesTheModelWithinTenPercent) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory inflates the RSS";
#endif
  // 2^21 vertices (16 MiB of degrees) and 1 MiB chunks; a cap that leaves room for two chunks,
  // which is one thread once each thread also counts the highest ids (1 MiB).
  const std::uint64_t n = std::uint64_t{1} << 21;
  const OrientedGraph g = orient_edge_list(n, random_graph(static_cast<vid_t>(n), 4 * n, 11));
  const std::uint64_t chunk_edges = std::uint64_t{1} << 18;
  const auto src = memory_source(g, chunk_edges);
  const std::uint64_t model = g.n() * sizeof(eid_t) + 2 * chunk_edges * sizeof(vid_t);
  if (!reset_host_peak() || host_resident_bytes() == 0)
    GTEST_SKIP() << "the kernel keeps no resettable peak here";
  const std::uint64_t before = host_resident_bytes();
  const std::vector<eid_t> d = streamed_degrees(*src, 8, model);
  const std::uint64_t used = host_peak_bytes() - before;
  EXPECT_EQ(d.size(), g.n());
  EXPECT_LE(used, model + model / 10) << "model " << model;
  EXPECT_GE(used + model / 10, model) << "model " << model;
}

// Hubs among the highest ids (counted per thread, stream/in_degrees.hpp) and below them (counted
// with atomics): the same degrees and wedges on one thread and on several.
// Last: the memory it frees would hide the peak test's peak.
TEST(Degrees, HubsAboveAndBelowThePerThreadIdsCountExactly) {
  const vid_t n = 300000;  // above InDegreeCounter::kHot, so vertex 5 is below the hot ids
  EdgeList e = random_graph(n, 4ull * n, 19);
  for (vid_t v = 0; v + 1 < n; v += 2) e.emplace_back(v, n - 1);
  for (vid_t v = 6; v < n; v += 3) e.emplace_back(5, v);
  const OrientedGraph g = orient_edge_list(n, e);
  const auto src = memory_source(g, 50000);
  const std::vector<eid_t> want = reference_degrees(g);
  for (unsigned threads : {1u, 3u, 8u}) {
    SCOPED_TRACE(threads);
    EXPECT_EQ(streamed_degrees(*src, threads), want);
    WedgeSum w;  // d (d - 1) / 2 summed by hand, exact below 2^64
    std::uint64_t plain = 0;
    for (eid_t d : want) plain += d * (d - 1) / 2;
    w.lo = plain;
    EXPECT_EQ(streamed_wedges(*src, threads), w);
  }
}

}  // namespace
}  // namespace tristream::test
