// reindex_test.cpp — the stored census through the command line: `convert` writes it (format
// version 3), an older file's out-of-core count notes that `tristream reindex` would help, the
// command adds it in place and the count then reads it (same triangles and transitivity, no
// note); `count --json` reports the whole command's seconds with the timing breakdown; bad input
// is exit status 1.
#include <gtest/gtest.h>

#include <string>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using test::json_field;
using test::q;
using test::run_cli;

// A count small enough for the CPU with a device budget that forces the census.
std::string ooc_count(const std::string& path) {
  return "count " + q(path) + " --backend cpu --gpu-memory 12K --threads 2 --json";
}

TEST(CliReindex, ConvertStoresTheCensus) {
  test::TempDir d;
  test::write_edge_list(d.file("g.el"), test::skewed_graph(500, 4000, 3));
  const auto r = run_cli("convert " + q(d.file("g.el")) + " -o " + q(d.file("g.tcsr")) + " -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const tcsr::Reader reader(d.file("g.tcsr"));
  EXPECT_TRUE(reader.has_census());
  EXPECT_EQ(reader.header().version, tcsr::kFormatVersionCensus);
}

TEST(CliReindex, AnOlderFileGetsANoteThenReindexMakesTheCountReadTheCensus) {
  test::TempDir d;
  const std::string path = d.file("old.tcsr");
  const test::EdgeList e = test::skewed_graph(600, 5000, 4);
  tcsr::write_file(path, orient_edge_list(test::vertex_count(e), e));  // version 1
  const auto before = run_cli(ooc_count(path));
  ASSERT_EQ(before.status, 0) << before.err;
  EXPECT_NE(before.err.find("note: "), std::string::npos) << before.err;
  EXPECT_NE(before.err.find("tristream reindex"), std::string::npos) << before.err;
  EXPECT_NE(before.out.find("\"census_source\":\"pass\""), std::string::npos) << before.out;

  const auto re = run_cli("reindex " + q(path));
  ASSERT_EQ(re.status, 0) << re.err;
  EXPECT_NE(re.out.find("census stored"), std::string::npos) << re.out;
  EXPECT_TRUE(tcsr::Reader(path).has_census());

  const auto after = run_cli(ooc_count(path));
  ASSERT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.err.find("note: "), std::string::npos) << after.err;
  EXPECT_NE(after.out.find("\"census_source\":\"stored\""), std::string::npos) << after.out;
  const std::string want =
      "\"triangles\":" + std::to_string(test::brute_force_triangles(test::vertex_count(e), e));
  EXPECT_NE(before.out.find(want), std::string::npos) << before.out;
  EXPECT_NE(after.out.find(want), std::string::npos) << after.out;
  // The transitivity from the stored wedges is the one the degree pass gave, to the last bit.
  EXPECT_EQ(json_field(after.out, "transitivity"), json_field(before.out, "transitivity"));
  EXPECT_FALSE(json_field(after.out, "transitivity").empty());
}

TEST(CliReindex, CountJsonBreaksTheWholeCommandDown) {
  test::TempDir d;
  const std::string path = d.file("g.tcsr");
  const test::EdgeList e = test::random_graph(300, 2000, 5);
  tcsr::write_file(path, orient_edge_list(test::vertex_count(e), e));
  const auto r = run_cli("count " + q(path) + " --backend cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* key :
       {"\"seconds\":", "\"timing\":{",
        "\"before_call\":", "\"startup\":", "\"startup_wait\":", "\"open\":", "\"census\":",
        "\"plan\":", "\"pipeline\":", "\"finish\":", "\"teardown\":", "\"census_source\":\"none\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
}

TEST(CliReindex, NotATcsrFileIsAnInputError) {
  test::TempDir d;
  test::write_text(d.file("x.tcsr"), "1 2\n");
  const auto r = run_cli("reindex " + q(d.file("x.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad magic"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_text(d.file("x.tcsr")), "1 2\n");
}

TEST(CliReindex, ADamagedCensusIsAnInputError) {
  test::TempDir d;
  const std::string path = d.file("g.tcsr");
  const test::EdgeList e = test::random_graph(300, 2000, 6);
  tcsr::write_file(path, orient_edge_list(test::vertex_count(e), e));
  ASSERT_EQ(run_cli("reindex " + q(path)).status, 0);
  test::Bytes b = test::read_bytes(path);
  b[b.size() - 5] ^= 0x10;  // inside the census extension
  test::write_bytes(path, b);
  const auto r = run_cli("count " + q(path) + " --backend cpu --gpu-memory 4K --threads 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("section census"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
