// edge_sorter_test.cpp — the converter with an EdgeSorter (tristream/edge_sorter.hpp), here the
// tests' host sorter (named cases, then seeded random ones): the keys go to it (those parsed before
// it is ready later) and the file is the host's bytes, census included; where the input needs more
// than it takes (a full sorter, ids of 2^32 or more, per-id arrays it has no room for, a memory
// limit below the tail's columns) its keys come back and the conversion goes on as without it, out
// of core when the limit asks; --names never uses it; standard input through a pipe too. The census
// comes from its row tally where it takes one (the tally's reference checked by hand on K4).
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host_edge_sorter.hpp"
#include "plan/census_store.hpp"
#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

using test::HostEdgeSorter;
using test::plain_edge_text;
using test::read_text;
using test::TempDir;
using test::write_text;

ConvertOptions quiet(unsigned threads = 2) {
  ConvertOptions o;
  o.quiet = true;
  o.threads = threads;
  return o;
}

// Converts `input` with the host's sorts and with `sorter`; expects the same bytes (both with the
// stored census when `census`) and returns the sorter's summary.
ConvertSummary expect_same_bytes(const TempDir& d, const std::string& input, EdgeSorter& sorter,
                                 ConvertOptions o = quiet(), bool census = true) {
  std::unique_ptr<plan_internal::CensusRows> c1, c2;
  if (census) c1 = plan_internal::stored_census_rows();
  o.observer = c1.get();
  convert(input, d.file("host.tcsr"), o);
  if (census) c2 = plan_internal::stored_census_rows();
  o.observer = c2.get();
  o.edge_sorter = &sorter;
  const ConvertSummary s = convert(input, d.file("sorter.tcsr"), o);
  EXPECT_EQ(read_text(d.file("sorter.tcsr")), read_text(d.file("host.tcsr"))) << input;
  if (census) {
    EXPECT_TRUE(tcsr::Reader(d.file("sorter.tcsr")).has_census());
  }
  return s;
}

TEST(ConvertWithASorter, SkewedTextGivesTheHostsBytesWithTheCensus) {
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(20000, 200000, 3)));
  for (unsigned threads : {1u, 4u}) {
    HostEdgeSorter sorter;
    const ConvertSummary s = expect_same_bytes(d, d.file("g.el"), sorter, quiet(threads));
    EXPECT_EQ(s.sorter, "host sorter (test)");
    EXPECT_TRUE(sorter.sorted);
    EXPECT_TRUE(sorter.released);
    EXPECT_EQ(sorter.taken_back, 0);
    EXPECT_FALSE(s.out_of_core);
  }
}

TEST(ConvertWithASorter, ItsRowTallyOrTheHostsMarksGiveTheSameCensus) {
  // Taken: the census comes from the sorter's tally; declined: the converter marks and counts the
  // rows itself. Either way the file (its census included) is the host's.
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(30000, 300000, 5)));
  for (bool can : {true, false}) {
    HostEdgeSorter sorter;
    sorter.can_tally = can;
    expect_same_bytes(d, d.file("g.el"), sorter, quiet(3));
    EXPECT_TRUE(sorter.released);
    EXPECT_EQ(sorter.tallies, can ? 1 : 0);
    EXPECT_EQ(sorter.tally_started, can);
  }
  // Without an observer no tally is asked for.
  HostEdgeSorter sorter;
  expect_same_bytes(d, d.file("g.el"), sorter, quiet(3), /*census=*/false);
  EXPECT_FALSE(sorter.tally_started);
}

TEST(RowTallyReference, CountsEveryEdgeAndVertexByItsClasses) {
  // Rows: 0 -> {1, 2, 3}, 1 -> {2, 3}, 2 -> {3}, 3 -> {} (K4); buckets {0, 2, 4}: bucket(v) = v /
  // 2; groups {0, 1, 4}: group 0 is vertex 0; H = 2; fold: mask -> itself.
  RowTallySpec spec;
  spec.buckets = {0, 2, 4};
  spec.groups = {0, 1, 4};
  spec.hash_mod = 2;
  spec.fold = {0, 1, 2, 3};
  const std::uint64_t offsets[] = {0, 3, 5, 6, 6};
  const std::uint32_t cols[] = {1, 2, 3, 2, 3, 3};
  const RowTallySums s = tally_rows_reference(spec, 4, offsets, cols);
  // masks: 1 <- {0}: 1; 2 <- {0, 1}: 3; 3 <- {0, 1, 2}: 3; 0: none.
  // (bucket u, bucket v): 00 01 01 | 01 01 | 11
  EXPECT_EQ(s.pairs, (std::vector<std::uint64_t>{1, 4, 0, 1}));
  // (u % 2, v % 2): 01 00 01 | 10 11 | 01
  EXPECT_EQ(s.hashed, (std::vector<std::uint64_t>{1, 3, 1, 1}));
  // bits(u) & bits(v): 1->2: 1&3, 1->3: 1&3, 2->3: 3&3 (the rows of 0 have bits 0)
  EXPECT_EQ(s.both[0], 3u);
  EXPECT_EQ(s.both[1], 1u);
  EXPECT_EQ(s.marked[0], 3u);      // vertices 1, 2, 3
  EXPECT_EQ(s.marked[1], 2u);      // vertices 2, 3
  EXPECT_EQ(s.marked_out[0], 3u);  // 2 + 1 + 0
  EXPECT_EQ(s.marked_out[1], 1u);
  spec.hash_mod = 4097;  // (a histogram of 128 MiB at most)
  EXPECT_THROW(tally_rows_reference(spec, 4, offsets, cols), Error);
  spec.hash_mod = 2;
  spec.fold.pop_back();
  EXPECT_THROW(tally_rows_reference(spec, 4, offsets, cols), Error);
}

TEST(ConvertWithASorter, KroneckerBinaryGivesTheHostsBytes) {
  TempDir d;
  GenerateOptions g;
  g.scale = 14;
  generate(g, d.file("k.bin"));
  ConvertOptions o = quiet(3);
  o.memory_limit = std::uint64_t{16} << 20;  // small parse jobs: many blocks
  HostEdgeSorter sorter;
  const ConvertSummary s = expect_same_bytes(d, d.file("k.bin"), sorter, o);
  EXPECT_EQ(s.sorter, "host sorter (test)");
  EXPECT_GT(sorter.appends, 1);
}

// Converts standard input fed with `bytes` through a pipe by a thread of its own; fd 0 is
// restored afterwards (a failed conversion closes the pipe first, so the writer ends on EPIPE).
ConvertSummary convert_piped(const std::string& bytes, const std::string& out,
                             const ConvertOptions& o) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const int saved = ::dup(0);
  ::dup2(fds[0], 0);
  ::close(fds[0]);
  const auto old_sigpipe = std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&bytes, fd = fds[1]] {
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t w = ::write(fd, bytes.data() + at, bytes.size() - at);
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    ::close(fd);
  });
  auto restore = [&] {
    ::dup2(saved, 0);
    ::close(saved);
    writer.join();
    std::signal(SIGPIPE, old_sigpipe);
  };
  try {
    const ConvertSummary s = convert("-", out, o);
    restore();
    return s;
  } catch (...) {
    restore();
    throw;
  }
}

TEST(ConvertWithASorter, BinaryOnStandardInputGivesTheHostsBytes) {
  // Read buffers from the reader's pool, each worker's keys written into the buffer its last
  // block's keys left once they went to the sorter: the same file as the host's.
  TempDir d;
  GenerateOptions g;
  g.scale = 14;
  generate(g, d.file("k.bin"));
  ConvertOptions o = quiet(3);
  o.memory_limit = std::uint64_t{16} << 20;  // small parse jobs: many blocks per worker
  convert(d.file("k.bin"), d.file("host.tcsr"), o);
  o.format = "bin64";
  HostEdgeSorter sorter;
  o.edge_sorter = &sorter;
  const ConvertSummary s = convert_piped(read_text(d.file("k.bin")), d.file("piped.tcsr"), o);
  EXPECT_EQ(s.sorter, "host sorter (test)");
  EXPECT_GT(sorter.appends, 8);
  EXPECT_TRUE(sorter.sorted);
  EXPECT_EQ(read_text(d.file("piped.tcsr")), read_text(d.file("host.tcsr")));
}

TEST(ConvertWithASorter, BlocksParsedBeforeItIsReadyFollowLater) {
  // Ready for the workers after a while, then (third case) full while the converting thread still
  // keeps the early blocks (it never sees the sorter ready): they are held with its keys taken
  // back.
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(20000, 200000, 8)));
  const std::uint64_t all = ~std::uint64_t{0};
  struct Case {
    std::uint64_t capacity;
    bool driver_sees_ready;
    int ready_after;  // (the workers ask once a block, the driver once a kept block)
  };
  for (const Case c : {Case{all, true, 20}, Case{60000, true, 20}, Case{60000, false, 8}}) {
    const std::uint64_t capacity = c.capacity;
    ConvertOptions o = quiet(3);
    o.memory_limit = std::uint64_t{4} << 20;  // small parse jobs: many blocks
    HostEdgeSorter sorter(capacity);
    sorter.ready_after = c.ready_after;
    sorter.driver_sees_ready = c.driver_sees_ready;
    const ConvertSummary s = expect_same_bytes(d, d.file("g.el"), sorter, o);
    EXPECT_EQ(s.sorter, capacity == all ? "host sorter (test)" : "host") << capacity;
    EXPECT_EQ(sorter.taken_back > 0, capacity != all) << capacity;
    EXPECT_LE(sorter.ready_after.load(), 0);
  }
}

TEST(ConvertWithASorter, IdsWithGapsAndOneEdge) {
  TempDir d;
  write_text(d.file("gaps.el"), plain_edge_text(test::random_graph(3000, 20000, 5), 1000000));
  HostEdgeSorter s1;
  EXPECT_EQ(expect_same_bytes(d, d.file("gaps.el"), s1).sorter, "host sorter (test)");
  write_text(d.file("one.el"), "7 3\n3 7\n3 3\n");
  HostEdgeSorter s2;
  const ConvertSummary s = expect_same_bytes(d, d.file("one.el"), s2);
  EXPECT_EQ(s.edges, 1u);
  EXPECT_EQ(s.duplicates, 1u);
}

TEST(ConvertWithASorter, AFullSorterGivesItsKeysBack) {
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(20000, 200000, 4)));
  for (std::uint64_t capacity : {std::uint64_t{0}, std::uint64_t{50000}}) {
    ConvertOptions o = quiet(3);
    o.memory_limit = std::uint64_t{4} << 20;  // small parse jobs: many blocks
    HostEdgeSorter sorter(capacity);
    const ConvertSummary s = expect_same_bytes(d, d.file("g.el"), sorter, o);
    EXPECT_EQ(s.sorter, "host") << capacity;
    EXPECT_EQ(sorter.taken_back > 0, capacity > 0) << capacity;
    EXPECT_FALSE(sorter.sorted);
  }
}

TEST(ConvertWithASorter, IdsOf2To32TakeTheKeysBack) {
  TempDir d;
  const test::EdgeList base = test::random_graph(4000, 60000, 11);
  write_text(d.file("wide.el"), test::plain_edge_text_crossing_2_to_32(base, 5000));
  ConvertOptions o = quiet(3);
  o.memory_limit = std::uint64_t{4} << 20;
  HostEdgeSorter sorter;
  const ConvertSummary s = expect_same_bytes(d, d.file("wide.el"), sorter, o);
  EXPECT_EQ(s.sorter, "host");
  EXPECT_GT(sorter.taken_back, 0);
}

TEST(ConvertWithASorter, PerIdArraysItHasNoRoomForStayOnTheHost) {
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::random_graph(3000, 20000, 6), 1 << 20));
  HostEdgeSorter sorter;
  sorter.max_space = 1 << 20;  // below the largest id
  EXPECT_EQ(expect_same_bytes(d, d.file("g.el"), sorter).sorter, "host");
  EXPECT_GT(sorter.taken_back, 0);
}

TEST(ConvertWithASorter, ALimitBelowTheColumnsGoesOutOfCore) {
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(30000, 300000, 7)));
  ConvertOptions o = quiet(2);
  o.memory_limit = 256 << 10;
  o.tmp_dir = d.path();
  HostEdgeSorter sorter;
  const ConvertSummary s = expect_same_bytes(d, d.file("g.el"), sorter, o);
  EXPECT_EQ(s.sorter, "host");
  EXPECT_TRUE(s.out_of_core);
}

TEST(ConvertWithASorter, NamesNeverUseIt) {
  TempDir d;
  write_text(d.file("n.el"), "alice bob\nbob carol\ncarol alice\ncarol dave\n");
  ConvertOptions o = quiet();
  o.names = true;
  HostEdgeSorter sorter;
  const ConvertSummary s = expect_same_bytes(d, d.file("n.el"), sorter, o);
  EXPECT_EQ(s.sorter, "host");
  EXPECT_EQ(sorter.appends, 0);
  EXPECT_EQ(s.edges, 4u);
}

TEST(ConvertWithASorter, OnlySelfLoopsLeaveItEmpty) {
  TempDir d;
  write_text(d.file("loops.el"), "1 1\n2 2\n");
  HostEdgeSorter sorter;
  const ConvertSummary s = expect_same_bytes(d, d.file("loops.el"), sorter);
  EXPECT_EQ(s.edges, 0u);
  EXPECT_EQ(s.sorter, "host");
}

// Seeded: random sorter capacities, start delays (for the workers, and for the converting thread
// or not), thread counts, memory limits (in memory, small jobs, out of core), ids crossing 2^32
// now and then, and a row tally taken or declined. Every route gives the host's bytes; the sorter
// converts only where nothing made the host take over, and then frees its memory.
class ConvertWithARandomSorter : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(ConvertWithARandomSorter, GivesTheHostsBytes) {
  std::mt19937_64 rng(GetParam());
  TempDir d;
  const test::EdgeList base =
      test::skewed_graph(static_cast<vid_t>(8000 + rng() % 8000), 60000 + rng() % 60000, rng());
  const bool wide = rng() % 3 == 0;
  write_text(d.file("g.el"),
             wide ? test::plain_edge_text_crossing_2_to_32(base, 2000) : plain_edge_text(base));
  ConvertOptions o = quiet(1 + static_cast<unsigned>(rng() % 5));
  const std::uint64_t limits[] = {0, std::uint64_t{16} << 20, std::uint64_t{4} << 20, 256 << 10};
  o.memory_limit = limits[rng() % 4];
  o.tmp_dir = d.path();
  const std::uint64_t capacity = rng() % 2 ? ~std::uint64_t{0} : rng() % 150000;
  HostEdgeSorter sorter(capacity);
  sorter.ready_after = static_cast<int>(rng() % 30);
  sorter.driver_sees_ready = rng() % 4 != 0;
  sorter.can_tally = rng() % 2 == 0;
  const ConvertSummary s = expect_same_bytes(d, d.file("g.el"), sorter, o);
  if (s.sorter == "host") {
    EXPECT_FALSE(sorter.sorted);
  } else {
    EXPECT_EQ(s.sorter, "host sorter (test)");
    EXPECT_FALSE(wide);
    EXPECT_EQ(sorter.taken_back, 0);
    EXPECT_TRUE(sorter.released);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ConvertWithARandomSorter, ::testing::Range<std::uint64_t>(1, 17));

}  // namespace
}  // namespace tristream
