// convert_census_test.cpp — the census `convert` and `generate` store while writing the rows
// (src/plan/census_rows.cpp) is the one `reindex` takes by a pass over the written file: a file
// converted and then reindexed is the same, byte for byte, for any thread count, any memory limit
// (in memory, out of core in one range and in several ranges, where the edges are marked while
// they are bucketed, and ranges sorted straight into their columns), standard input, vertex
// names, an empty graph, and generated graphs.
#include <gtest/gtest.h>

#include <string>

#include "plan/census_store.hpp"
#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/format.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

using test::q;
using test::read_text;
using test::run_cli;
using test::TempDir;

// Expects `path` to hold a census and to be unchanged by `reindex` (a copy is reindexed).
void expect_reindex_keeps(const TempDir& d, const std::string& path) {
  ASSERT_TRUE(tcsr::Reader(path).has_census()) << path;
  const std::string copy = d.file("reindexed.tcsr");
  test::write_text(copy, read_text(path));
  const auto r = run_cli("reindex " + q(copy));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(read_text(path) == read_text(copy)) << path << " differs from its reindexed copy";
}

// A skewed graph of about `m` edges as an edge list (hubs, so the vertex groups differ).
std::string skewed_list(const TempDir& d, std::uint64_t m) {
  const std::string path = d.file("g.el");
  test::write_edge_list(path, test::skewed_graph(static_cast<vid_t>(m / 8), m, 11));
  return path;
}

TEST(ConvertCensus, ConvertThenReindexIsByteIdentical) {
  TempDir d;
  const std::string el = skewed_list(d, 20000);
  const auto r = run_cli("convert " + q(el) + " -o " + q(d.file("a.tcsr")) + " -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tcsr::Reader(d.file("a.tcsr")).header().version, tcsr::kFormatVersionCensus);
  expect_reindex_keeps(d, d.file("a.tcsr"));
}

TEST(ConvertCensus, SameBytesForAnyThreadsMemoryLimitAndStandardInput) {
  TempDir d;
  // 300k edges: under --memory-limit 1M the rows are written in several ranges (at least 64K
  // edges each) from a bucket file.
  const std::string el = skewed_list(d, 300000);
  const std::string want = d.file("want.tcsr");
  auto r = run_cli("convert " + q(el) + " -o " + q(want) + " -q --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  expect_reindex_keeps(d, want);
  const std::string expected = read_text(want);
  const char* variants[] = {"--threads 1", "--threads 3 --chunk-size 4K",
                            "--threads 2 --memory-limit 1M", "--threads 3 --memory-limit 4M",
                            "--threads 1 --memory-limit 1M --chunk-size 64K"};
  for (const char* v : variants) {
    const std::string out = d.file("v.tcsr");
    r = run_cli("convert " + q(el) + " -o " + q(out) + " -q --json " + v);
    ASSERT_EQ(r.status, 0) << v << ": " << r.err;
    if (std::string(v).find("memory-limit") != std::string::npos) {
      EXPECT_NE(r.out.find("\"out_of_core\":true"), std::string::npos) << v << ": " << r.out;
    }
    if (std::string(v).find("chunk-size") != std::string::npos) {
      expect_reindex_keeps(d, out);  // other chunks, another file: still reindex's census
    } else {
      EXPECT_TRUE(read_text(out) == expected) << v;
    }
  }
  // Standard input, redirected and to standard output.
  const std::string piped = d.file("stdin.tcsr");
  const std::string cmd = "cat " + q(el) + " | '" + TRISTREAM_BINARY + "' convert - -o - -q " +
                          "--memory-limit 1M > " + q(piped) + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(read_text(piped) == expected);
}

// Kronecker 18 (4.2 M edges) under --memory-limit 64M: out of core, rows written in about 40
// ranges from a bucket file; a dozen of them (about 96K edges over 2K-62K rows) go through the
// row sort straight into their columns (sort_rows.hpp), the others (hub rows, too few for the
// row sort's buckets) sort 8-byte keys. Both give the in-memory bytes, census included.
TEST(ConvertCensus, RangesSortedIntoTheirColumnsOutOfCore) {
  TempDir d;
  const std::string el = d.file("k18.el");
  auto r = run_cli("generate kronecker --scale 18 -q -o " + q(el));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string want = d.file("want.tcsr");
  r = run_cli("convert " + q(el) + " -o " + q(want) + " -q --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string out = d.file("ooc.tcsr");
  r = run_cli("convert " + q(el) + " -o " + q(out) + " -q --json --threads 3 --memory-limit 64M" +
              " --tmp-dir " + q(d.path()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"out_of_core\":true"), std::string::npos) << r.out;
  EXPECT_TRUE(read_text(out) == read_text(want));
  expect_reindex_keeps(d, out);
}

TEST(ConvertCensus, VertexNames) {
  TempDir d;
  test::write_text(d.file("n.el"), "alice bob\nbob carol\ncarol alice\ncarol dave\ndave erin\n");
  const auto r =
      run_cli("convert " + q(d.file("n.el")) + " --names -o " + q(d.file("n.tcsr")) + " -q");
  ASSERT_EQ(r.status, 0) << r.err;
  expect_reindex_keeps(d, d.file("n.tcsr"));
}

TEST(ConvertCensus, EmptyGraph) {
  TempDir d;
  test::write_text(d.file("e.el"), "# nothing\n3 3\n");
  const auto r = run_cli("convert " + q(d.file("e.el")) + " -o " + q(d.file("e.tcsr")) + " -q");
  ASSERT_EQ(r.status, 0) << r.err;
  expect_reindex_keeps(d, d.file("e.tcsr"));
}

TEST(ConvertCensus, GeneratedGraph) {
  TempDir d;
  const auto r = run_cli("generate kronecker --scale 12 --seed 5 -o " + q(d.file("k.tcsr")) +
                         " -q --memory-limit 1M --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  expect_reindex_keeps(d, d.file("k.tcsr"));
}

// The library: convert() with the observer gives the payload encode_stored_census takes of the
// file written without it.
TEST(ConvertCensus, ObserverPayloadIsTheStoredCensusOfTheFile) {
  TempDir d;
  const std::string el = skewed_list(d, 5000);
  ConvertOptions o;
  o.quiet = true;
  o.threads = 2;
  convert(el, d.file("plain.tcsr"), o);
  const auto rows = plan_internal::stored_census_rows();
  o.observer = rows.get();
  convert(el, d.file("with.tcsr"), o);
  ASSERT_TRUE(rows->taken());
  const tcsr::Reader plain(d.file("plain.tcsr"));
  EXPECT_FALSE(plain.has_census());
  const tcsr::Reader with(d.file("with.tcsr"));
  EXPECT_EQ(with.census(), encode_stored_census(*reader_source(plain), 1));
}

}  // namespace
}  // namespace tristream
