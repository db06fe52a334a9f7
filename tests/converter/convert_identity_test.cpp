// convert_identity_test.cpp — the converter writes the same bytes whatever the route: a file
// parsed in place from its mapping or the same bytes on standard input (piped or redirected),
// any thread count, any memory limit (in memory or out of core, small parse jobs or large);
// blocks whose ids cross 2^32 (packed keys turned into records mid-block); out-of-core spills
// that change route mid-input (packed keys, then sparse ids, then wide ids); one sort bucket too
// large for one hash table; jobs cut at CRLF and lone CR line ends; plain lines that leave the
// parser's fast path; and the in-memory peak memory per edge.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

using test::q;
using test::read_text;
using test::run_cli;
using test::TempDir;
using test::write_text;

using test::child_peak_rss;
using test::clean;
using test::edge_set;
using test::OrigEdge;

// Runs `feed | tristream ARGS` (sh); the exit status, stderr in `err`.
int run_piped(const std::string& feed, const std::string& args, const TempDir& d,
              std::string& err) {
  const std::string cmd =
      feed + " | '" + TRISTREAM_BINARY + "' " + args + " 2>" + q(d.file("pipe.err"));
  const int raw = std::system(cmd.c_str());
  err = read_text(d.file("pipe.err"));
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
}

ConvertOptions quiet(unsigned threads = 2) {
  ConvertOptions o;
  o.quiet = true;
  o.threads = threads;
  return o;
}

// A skewed graph with repeats, reversed repeats and self-loops, as text: LF lines, some CRLF,
// comments and a weight column here and there.
std::string messy_text(std::uint64_t seed) {
  const test::EdgeList e = test::skewed_graph(30000, 300000, seed);
  std::string s = "# a comment first\n";
  std::uint64_t i = 0;
  for (auto [a, b] : e) {
    ++i;
    s += std::to_string(a) + (i % 7 == 0 ? "\t" : " ") + std::to_string(b);
    if (i % 11 == 0) s += " 1.5";
    s += (i % 13 == 0) ? "\r\n" : "\n";
    if (i % 5000 == 0)
      s += "% another comment\n" + std::to_string(b) + " " + std::to_string(a) + "\n" +
           std::to_string(a) + " " + std::to_string(a) + "\n";
  }
  return s;
}

// base's edges, edge i with both ids shifted by off(i).
template <typename Off>
std::vector<OrigEdge> shifted(const test::EdgeList& base, Off off) {
  std::vector<OrigEdge> e;
  for (std::size_t i = 0; i < base.size(); ++i)
    e.emplace_back(base[i].first + off(i), base[i].second + off(i));
  return e;
}

// The edges as a plain edge list, one "a b" line each.
std::string plain_text(const std::vector<OrigEdge>& e) {
  std::string text;
  for (auto [a, b] : e) text += std::to_string(a) + " " + std::to_string(b) + "\n";
  return text;
}

TEST(ConvertIdentity, StandardInputIsByteIdenticalToTheMappedFile) {
  TempDir d;
  write_text(d.file("g.el"), messy_text(5));
  convert(d.file("g.el"), d.file("file.tcsr"), quiet());
  tristream::reindex(d.file("file.tcsr"));  // the command also stores the planner's census
  const std::string want = read_text(d.file("file.tcsr"));
  // Through a pipe, with small parse jobs (a 4M limit) and out of core (256K).
  for (const char* flags :
       {"--threads 1", "--threads 3 --memory-limit 4M", "--threads 2 --memory-limit 256K"}) {
    std::string err;
    ASSERT_EQ(run_piped("cat " + q(d.file("g.el")),
                        "convert - -q " + std::string(flags) + " --tmp-dir " + q(d.path()) +
                            " -o " + q(d.file("piped.tcsr")),
                        d, err),
              0)
        << err;
    EXPECT_EQ(read_text(d.file("piped.tcsr")), want) << flags;
  }
}

TEST(ConvertIdentity, BinaryOnStandardInputThroughAPipe) {
  TempDir d;
  GenerateOptions g;
  g.scale = 14;
  generate(g, d.file("k.bin"));
  convert(d.file("k.bin"), d.file("file.tcsr"), quiet());
  tristream::reindex(d.file("file.tcsr"));  // the command also stores the planner's census
  const std::string want = read_text(d.file("file.tcsr"));
  for (const char* flags :
       {"--threads 1", "--threads 4 --memory-limit 4M", "--threads 2 --memory-limit 256K"}) {
    std::string err;
    ASSERT_EQ(run_piped("cat " + q(d.file("k.bin")),
                        "convert - -q --format bin64 " + std::string(flags) + " --tmp-dir " +
                            q(d.path()) + " -o " + q(d.file("s.tcsr")),
                        d, err),
              0)
        << err;
    EXPECT_EQ(read_text(d.file("s.tcsr")), want) << flags;
  }
}

TEST(ConvertIdentity, ThreadCountsAndMemoryLimitsGiveTheSameBytes) {
  TempDir d;
  write_text(d.file("g.el"), messy_text(6));
  convert(d.file("g.el"), d.file("ref.tcsr"), quiet(1));
  const std::string want = read_text(d.file("ref.tcsr"));
  for (unsigned threads : {2u, 5u})
    for (std::uint64_t limit :
         {std::uint64_t{0}, std::uint64_t{64} << 20, std::uint64_t{256} << 10}) {
      ConvertOptions o = quiet(threads);
      o.memory_limit = limit;
      o.tmp_dir = d.path();
      const ConvertSummary s = convert(d.file("g.el"), d.file("t.tcsr"), o);
      EXPECT_EQ(s.out_of_core, limit == (std::uint64_t{256} << 10)) << threads << " " << limit;
      EXPECT_EQ(read_text(d.file("t.tcsr")), want) << threads << " " << limit;
    }
}

TEST(ConvertIdentity, IdsCrossing2To32InsideABlock) {
  // Packed keys up to 2^32 - 1, then records: the first block turns wide mid-way, later blocks
  // (small jobs under a 4M limit) are packed or wide on their own.
  TempDir d;
  const test::EdgeList base = test::random_graph(4000, 60000, 11);
  const std::vector<OrigEdge> e = shifted(base, [](std::size_t i) {
    return (i / 1000) % 3 == 2 ? (std::uint64_t{1} << 32) - 2000 : 0;
  });
  write_text(d.file("x.el"), plain_text(e));
  convert(d.file("x.el"), d.file("one.tcsr"), quiet(1));
  EXPECT_EQ(edge_set(d.file("one.tcsr")), clean(e));
  for (std::uint64_t limit : {std::uint64_t{4} << 20, std::uint64_t{128} << 10}) {
    ConvertOptions o = quiet(3);
    o.memory_limit = limit;
    o.tmp_dir = d.path();
    convert(d.file("x.el"), d.file("many.tcsr"), o);
    EXPECT_EQ(read_text(d.file("many.tcsr")), read_text(d.file("one.tcsr"))) << limit;
  }
}

TEST(ConvertIdentity, PackedSpillsThenSparseIdsThenWideIds) {
  // Out of core, the spills change route mid-input: the first part (small dense ids) spills packed
  // keys with the ids in a bitmap; then ids near 2^31 make the bitmap too large beside the limit
  // (the ids go into the sorted array, the blocks are sorted and merged); then ids above 2^32
  // make the blocks wide. Repeats of the first part's edges, reversed, come last, so the final
  // merge removes them across packed and record runs. Every route gives the in-memory
  // conversion's bytes.
  TempDir d;
  const test::EdgeList base = test::random_graph(6000, 90000, 13);
  std::vector<OrigEdge> e = shifted(base, [&](std::size_t i) {
    const std::size_t part = 3 * i / base.size();  // 0, 1, 2
    return part == 0 ? 0 : (part == 1 ? std::uint64_t{1} << 31 : std::uint64_t{1} << 33);
  });
  // Repeats of the first part's edges, reversed, at the end (in the wide part's spills).
  for (std::size_t i = 0; i < base.size() / 3; i += 7)
    e.emplace_back(base[i].second, base[i].first);
  write_text(d.file("x.el"), plain_text(e));
  convert(d.file("x.el"), d.file("one.tcsr"), quiet(1));
  EXPECT_EQ(edge_set(d.file("one.tcsr")), clean(e));
  for (unsigned threads : {1u, 3u}) {
    ConvertOptions o = quiet(threads);
    o.memory_limit = 256 << 10;
    o.tmp_dir = d.path();
    const ConvertSummary s = convert(d.file("x.el"), d.file("spilled.tcsr"), o);
    EXPECT_TRUE(s.out_of_core);
    EXPECT_EQ(read_text(d.file("spilled.tcsr")), read_text(d.file("one.tcsr"))) << threads;
  }
}

TEST(ConvertIdentity, OneLargeBucketWithRepeats) {
  // 300000 edges whose first ids are 0..7 over 30000 ids: the in-memory sort's first digit puts
  // them all in one bucket, too large to lose its repeats by one cached hash table (it is grouped
  // first); a third of the edges are repeats, some reversed.
  TempDir d;
  std::mt19937_64 rng(21);
  std::vector<OrigEdge> e;
  std::string text;
  for (int i = 0; i < 300000; ++i) {
    std::uint64_t a = rng() % 8, b = 8 + rng() % 30000;
    if (i % 3 == 2) {
      a = e[rng() % e.size()].first;
      b = e[rng() % e.size()].second;
    }
    if (i % 5 == 0) std::swap(a, b);
    e.emplace_back(a, b);
    text += std::to_string(a) + " " + std::to_string(b) + "\n";
  }
  write_text(d.file("x.el"), text);
  convert(d.file("x.el"), d.file("one.tcsr"), quiet(1));
  EXPECT_EQ(edge_set(d.file("one.tcsr")), clean(e));
  for (unsigned threads : {2u, 3u}) {
    convert(d.file("x.el"), d.file("many.tcsr"), quiet(threads));
    EXPECT_EQ(read_text(d.file("many.tcsr")), read_text(d.file("one.tcsr"))) << threads;
  }
}

TEST(ConvertIdentity, JobsCutAtCrlfAndLoneCrLineEnds) {
  // Lone CR line ends, CRLF and LF mixed, cut into 64 KiB jobs (a 4M limit) with the last line
  // lacking its line end: the same edges as the LF file.
  TempDir d;
  const test::EdgeList e = test::random_graph(5000, 80000, 12);
  std::string lf, mixed;
  std::uint64_t i = 0;
  for (auto [a, b] : e) {
    const std::string line = std::to_string(a) + " " + std::to_string(b);
    lf += line + "\n";
    mixed += line + (++i % 3 == 0 ? "\r" : (i % 3 == 1 ? "\r\n" : "\n"));
  }
  mixed.pop_back();
  if (mixed.back() == '\r') mixed.pop_back();
  write_text(d.file("lf.el"), lf);
  write_text(d.file("mixed.el"), mixed);
  convert(d.file("lf.el"), d.file("lf.tcsr"), quiet(1));
  ConvertOptions o = quiet(3);
  o.memory_limit = 4 << 20;
  const ConvertSummary s = convert(d.file("mixed.el"), d.file("mixed.tcsr"), o);
  EXPECT_EQ(s.input_edges, e.size());
  EXPECT_EQ(read_text(d.file("mixed.tcsr")), read_text(d.file("lf.tcsr")));
}

TEST(ConvertIdentity, PlainLinesOutsideTheFastPath) {
  // Leading blanks, several blanks between the ids, trailing blanks, a weight, ids with more
  // than 19 digits (leading zeros), the largest id, and a bad token after good lines.
  TempDir d;
  write_text(d.file("p.el"),
             "1 2\n  3 4\n5    6\n7 8  \n9 10 2.5\n0000000000000000000011 12\n"
             "18446744073709551615 1\n13\t14\n");
  const ConvertSummary s = convert(d.file("p.el"), d.file("p.tcsr"), quiet(1));
  EXPECT_EQ(s.input_edges, 8u);
  const std::set<OrigEdge> want = {
      {1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {1, 18446744073709551615ull}, {13, 14}};
  EXPECT_EQ(edge_set(d.file("p.tcsr")), want);
  write_text(d.file("bad.el"), "1 2\n3 4\n5 6x\n");
  auto r = run_cli("convert " + q(d.file("bad.el")) + " -o " + q(d.file("bad.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.file("bad.el") + ":3:"), std::string::npos) << r.err;
  write_text(d.file("big.el"), "1 2\n99999999999999999999 3\n");
  r = run_cli("convert " + q(d.file("big.el")) + " -o " + q(d.file("big.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("exceeds 2^64-1"), std::string::npos) << r.err;
}

TEST(ConvertIdentity, InMemoryPeakIsAboutTenBytesPerEdge) {
  // 8 Mi uniform edges converted in memory in a child process: the peak RSS stays under 10 bytes
  // per edge plus the fixed part (the writer's 64 MiB batch with its frames, the program) and
  // 48 bytes per vertex. (In memory: the default limit is 70% of the available memory.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory inflates the RSS";
#endif
  TempDir d;
  GenerateOptions g;
  g.kind = "uniform";
  g.scale = 19;
  generate(g, d.file("u.bin"));
  int status = -1;
  const std::uint64_t peak = child_peak_rss(
      {"convert", d.file("u.bin"), "-o", d.file("u.tcsr"), "--threads", "2", "-q"}, status);
  ASSERT_EQ(status, 0);
  const std::uint64_t edges = std::uint64_t{16} << 19;
  const std::uint64_t bound = 10 * edges + (96u << 20) + 48u * (1u << 19);
  EXPECT_LT(peak, bound) << "peak RSS " << (peak >> 20) << " MiB";
}

}  // namespace
}  // namespace tristream
