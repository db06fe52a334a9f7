// in_core_staging_test.cpp — how the in-core unit travels (stream/unit_in_core.hpp:
// in_core_staging): the full host slot by default; with TRISTREAM_IN_CORE_STAGING=stream through
// the ring of pinned pieces on a device when the unit is larger than a piece; the plan's own
// streamed staging when it has one; the full host slot on the CPU backend, out of core, and for
// a unit of one piece or less.
#include <gtest/gtest.h>

#include <cstdlib>

#include "stream/unit_in_core.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

using stream::in_core_staging;

// An in-core plan of one unit with a slot of `slot_bytes`.
Plan in_core_plan(std::uint64_t slot_bytes) {
  Plan p;
  p.partition.p = 1;
  p.units.resize(1);
  p.slot_bytes = slot_bytes;
  return p;
}

TEST(InCoreStaging, ALargeInCoreUnitOnADeviceStreamsWhenAsked) {
  const OrientedGraph g = orient_edge_list(200, test::random_graph(200, 1000, 3));
  const auto src = memory_source(g, 100);  // chunks of 400 bytes: pieces of 16 MiB
  EXPECT_EQ(in_core_staging(in_core_plan(std::uint64_t{1} << 30), *src, 4, false).piece_bytes, 0u)
      << "the full slot by default";
  ::setenv("TRISTREAM_IN_CORE_STAGING", "stream", 1);
  const auto s = in_core_staging(in_core_plan(std::uint64_t{1} << 30), *src, 4, false);
  ::unsetenv("TRISTREAM_IN_CORE_STAGING");
  EXPECT_EQ(s.piece_bytes, std::uint64_t{16} << 20);
  EXPECT_EQ(s.buffers, static_cast<int>(kStagingBuffers));
}

TEST(InCoreStaging, TheFullSlotWhereStreamingSavesNothing) {
  const OrientedGraph g = orient_edge_list(200, test::random_graph(200, 1000, 3));
  const auto src = memory_source(g, 100);
  // the CPU backend: its slots are host memory
  EXPECT_EQ(in_core_staging(in_core_plan(std::uint64_t{1} << 30), *src, 4, true).piece_bytes, 0u);
  // a unit of one piece
  EXPECT_EQ(in_core_staging(in_core_plan(std::uint64_t{16} << 20), *src, 4, false).piece_bytes, 0u);
  // out of core
  Plan ooc = in_core_plan(std::uint64_t{1} << 30);
  ooc.partition.p = 4;
  ooc.units.resize(10);
  EXPECT_EQ(in_core_staging(ooc, *src, 4, false).piece_bytes, 0u);
  // streaming asked for, where it saves nothing: still the full slot
  ::setenv("TRISTREAM_IN_CORE_STAGING", "stream", 1);
  EXPECT_EQ(in_core_staging(in_core_plan(std::uint64_t{1} << 30), *src, 4, true).piece_bytes, 0u);
  EXPECT_EQ(in_core_staging(in_core_plan(std::uint64_t{16} << 20), *src, 4, false).piece_bytes, 0u);
  ::unsetenv("TRISTREAM_IN_CORE_STAGING");
}

TEST(InCoreStaging, ThePlansStreamedStagingIsKept) {
  const OrientedGraph g = orient_edge_list(200, test::random_graph(200, 1000, 3));
  const auto src = memory_source(g, 100);
  Plan p = in_core_plan(std::uint64_t{1} << 30);
  p.piece_bytes = 12345 * 256;
  p.staging_buffers = 1;
  const auto s = in_core_staging(p, *src, 4, false);
  EXPECT_EQ(s.piece_bytes, p.piece_bytes);
  EXPECT_EQ(s.buffers, 1);
}

}  // namespace
}  // namespace tristream
