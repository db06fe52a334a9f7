// ranks_test.cpp — `mpirun -np N tristream count` (src/mpi/): with 1 to 4 ranks on the CPU
// backend, every scheme and both ways of sharing the units (a static share preloads its own row
// parts, the dynamic one every row part where the block cache holds them all) give exactly the
// single process's count and per-vertex file; the ranks of one machine share its default host
// budget; a rank that fails ends every rank with its message. Skips when mpirun is missing or
// tristream was built without MPI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "mpi_util.hpp"
#include "test_util.hpp"

namespace tristream::test {
namespace {

class Ranks : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TRISTREAM_TEST_MPI
    GTEST_SKIP() << "tristream was built without MPI (TRISTREAM_ENABLE_MPI), or with a sanitizer";
#endif
    if (!have_mpirun()) GTEST_SKIP() << "mpirun is not installed (scripts/deps.sh installs it)";
  }
  // The graphs: a skewed random graph and karate, as .tcsr files.
  std::string graph(const std::string& name) {
    const std::string path = tmp_.file(name + ".tcsr");
    const std::string el = tmp_.file(name + ".el");
    write_edge_list(el, name == "karate" ? EdgeList{} : skewed_graph(1500, 20000, 11));
    const std::string src = name == "karate" ? data_file("karate.el") : el;
    const RunResult c = run_cli("convert " + q(src) + " -o " + q(path) + " -q");
    EXPECT_EQ(c.status, 0) << c.err;
    return path;
  }
  TempDir tmp_;
};

TEST_F(Ranks, EveryRankCountAndSplitEqualsOneProcess) {
  for (const std::string name : {"karate", "skewed"}) {
    const std::string g = graph(name);
    for (const std::string scheme : {"range", "hash", "vertex", "pair"}) {
      const std::string flags = " --backend cpu --threads 1 --scheme " + scheme + " --parts 3";
      const std::string ref_pv = tmp_.file("ref.csv");
      const RunResult ref = run_cli("count " + q(g) + flags + " --json --per-vertex " + q(ref_pv));
      ASSERT_EQ(ref.status, 0) << ref.err;
      const std::string want = json_field(ref.out, "triangles");
      ASSERT_FALSE(want.empty()) << ref.out;
      for (int np : {1, 2, 3, 4})
        for (const std::string split : {"static", "dynamic"}) {
          SCOPED_TRACE(name + " " + scheme + " -np " + std::to_string(np) + " " + split);
          const std::string pv = tmp_.file("pv.csv");
          const RunResult r = run_mpi("-np " + std::to_string(np) + " {bin} count " + q(g) + flags +
                                      " --rank-split " + split + " --json --per-vertex " + q(pv));
          ASSERT_EQ(r.status, 0) << r.err;
          EXPECT_EQ(json_field(r.out, "triangles"), want) << r.out;
          if (np > 1) {
            EXPECT_EQ(json_field(r.out, "ranks"), std::to_string(np));
            EXPECT_EQ(json_field(r.out, "rank_split"), "\"" + split + "\"");
          }
          EXPECT_EQ(read_text(pv), read_text(ref_pv));
          // rank 0 alone prints: one JSON line
          EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
        }
    }
  }
}

TEST_F(Ranks, SeveralWorkersPerRankCountExactly) {
  const std::string g = graph("skewed");
  const RunResult ref = run_cli("count " + q(g) + " --backend cpu --json");
  ASSERT_EQ(ref.status, 0) << ref.err;
  const RunResult r = run_mpi("-np 2 {bin} count " + q(g) +
                              " --backend cpu --threads 1 --workers 2 --scheme hash --parts 4 "
                              "--json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_field(r.out, "triangles"), json_field(ref.out, "triangles"));
}

// Ranks of one machine share its memory: without --host-memory each plans within its share of
// the default host budget (two ranks: about half of one process's); with it, each takes it whole.
TEST_F(Ranks, RanksOfOneMachineShareTheDefaultHostBudget) {
  const std::string g = graph("karate");
  auto budget = [&](const std::string& cmd) {
    const RunResult r = run_mpi(cmd);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string b = json_field(r.out, "host_budget_bytes");
    EXPECT_FALSE(b.empty()) << r.out;
    return b.empty() ? 0.0 : std::stod(b);
  };
  const std::string count = " {bin} count " + q(g) + " --backend cpu --threads 1 --json";
  const double one = budget("-np 1" + count), two = budget("-np 2" + count);
  ASSERT_GT(one, 0.0);
  // (the available memory moves between the runs: a share within a fifth of half)
  EXPECT_GT(two, 0.4 * one);
  EXPECT_LT(two, 0.6 * one);
  EXPECT_EQ(budget("-np 2" + count + " --host-memory 1G"), 1073741824.0);
}

TEST_F(Ranks, AFailingRankEndsEveryRank) {
  const std::string g = graph("karate");
  const RunResult r = run_mpi("-np 1 {bin} count " + q(g) + " --backend cpu : -np 1 {bin} count " +
                              q(tmp_.file("missing.tcsr")) + " --backend cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.status, 124) << "mpirun hung";
  EXPECT_NE(r.err.find("missing.tcsr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopping every rank"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream::test
