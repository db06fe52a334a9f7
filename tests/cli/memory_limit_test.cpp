// memory_limit_test.cpp — `count` inside a cgroup memory limit: from a third of the file's size
// to twice it, every run either counts exactly within its host budget or stops with the floor
// error before the work (exit 1, no --per-vertex file); never the kernel's OOM killer, and the
// group's peak stays within the limit. A file twice the limit counts exactly, and per-vertex
// output fits in less than the five 8-byte arrays per vertex it once took. Needs root and a
// cgroup v1 or v2 memory controller, and a build without sanitizers; skips with a message
// otherwise.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "memory_group.hpp"
#include "test_util.hpp"

namespace tristream::test {
namespace {

namespace fs = std::filesystem;

std::uint64_t json_u64(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":([0-9]+)"))) return 0;
  return std::stoull(m[1].str());
}

// A uniform graph of 2^17 vertices and 32 edges per vertex in 1 MiB chunks (about 10 MiB), its
// triangles counted without a limit: made once for the suite.
class MemoryLimit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const std::string el = dir_->file("g.el");
    graph_ = dir_->file("g.tcsr");
    RunResult r = run_cli("generate uniform --scale 17 --edge-factor 32 --seed 7 -q -o " + q(el));
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_cli("convert " + q(el) + " -o " + q(graph_) + " --chunk-size 1M -q");
    ASSERT_EQ(r.status, 0) << r.err;
    fs::remove(el);
    r = run_cli("count --backend cpu --threads 2 --json " + q(graph_));
    ASSERT_EQ(r.status, 0) << r.err;
    triangles_ = json_u64(r.out, "triangles");
    file_bytes_ = fs::file_size(graph_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // Counts under a limit of num/den of the file's size: exact within the budget, or the floor
  // error with no per-vertex file; the group's peak within the limit.
  void count_under(std::uint64_t num, std::uint64_t den, bool per_vertex) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "the sanitizers' shadow memory inflates the RSS past any small limit";
#endif
    const std::uint64_t limit = file_bytes_ * num / den;
    MemoryGroup group("tristream-test-" + std::to_string(::getpid()) + "-" + std::to_string(num) +
                          "-" + std::to_string(den),
                      limit);
    if (!group.ok()) GTEST_SKIP() << "cannot make a memory cgroup: " << group.why();
    TempDir out;
    const std::string pv = out.file("pv.csv");
    const RunResult r = group.run("count --backend cpu --threads 2 --json " + q(graph_) +
                                  (per_vertex ? " --per-vertex " + q(pv) : ""));
    ASSERT_NE(r.status, 137) << "killed (OOM) under " << limit << " bytes";
    if (r.status == 0) {
      EXPECT_EQ(json_u64(r.out, "triangles"), triangles_);
      const std::uint64_t budget = json_u64(r.out, "host_budget_bytes");
      const std::uint64_t peak = json_u64(r.out, "host_peak_bytes");
      EXPECT_GT(peak, 0u);
      EXPECT_LE(peak, budget) << r.out;
      EXPECT_EQ(fs::exists(pv), per_vertex);
    } else {
      EXPECT_EQ(r.status, 1) << r.err;
      EXPECT_TRUE(r.err.find(" need ") != std::string::npos ||
                  r.err.find("no partition fits") != std::string::npos)
          << r.err;
      EXPECT_FALSE(fs::exists(pv));
      EXPECT_EQ(fs::directory_iterator(out.path()), fs::directory_iterator());  // no temporary
    }
    if (const auto peak = group.peak()) {
      EXPECT_LE(*peak, limit);
    }
  }

  static TempDir* dir_;
  static std::string graph_;
  static std::uint64_t triangles_, file_bytes_;
};

TempDir* MemoryLimit::dir_ = nullptr;
std::string MemoryLimit::graph_;
std::uint64_t MemoryLimit::triangles_ = 0, MemoryLimit::file_bytes_ = 0;

TEST_F(MemoryLimit, AThirdOfTheFile) {
  count_under(1, 3, false);
}
TEST_F(MemoryLimit, HalfTheFile) {
  count_under(1, 2, false);
}
TEST_F(MemoryLimit, TheFileSize) {
  count_under(1, 1, false);
}
TEST_F(MemoryLimit, OneAndAHalfTimesTheFile) {
  count_under(3, 2, false);
}
TEST_F(MemoryLimit, TwiceTheFile) {
  count_under(2, 1, false);
}
TEST_F(MemoryLimit, TwiceTheFileWithPerVertexOutput) {
  count_under(2, 1, true);
}
TEST_F(MemoryLimit, TheFileSizeWithPerVertexOutput) {
  count_under(1, 1, true);
}

// ---- a file twice the limit, and per-vertex output in less than its former 40 bytes per vertex

// Skips (returns false, with the reason in *why) where no memory cgroup can be made or the
// sanitizers inflate the RSS.
bool groups_usable(std::string* why) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  *why = "the sanitizers' shadow memory inflates the RSS past any small limit";
  return false;
#endif
  MemoryGroup probe("tristream-test-" + std::to_string(::getpid()) + "-probe", 64u << 20);
  if (!probe.ok()) *why = "cannot make a memory cgroup: " + probe.why();
  return probe.ok();
}

// The figure of "... need 12.3 MiB of host memory ..." in bytes (0 when absent).
std::uint64_t needed_bytes(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(" need ([0-9.]+) MiB"))) return 0;
  return static_cast<std::uint64_t>(std::stod(m[1].str()) * 1048576.0);
}

// The target: a .tcsr file twice the memory limit counts exactly for a graph of 16 edges
// per vertex. The size is the smallest that shows it: the process itself holds about 13 MiB
// before any graph data (the program, and the allowance of 1 MiB per thread of `--threads 2`)
// and 8 bytes per vertex of row offsets, so half the file leaves the plan room only from about
// 2^20 vertices (a 58 MiB file, a 29 MiB limit). Chunks of 256 KiB keep the two decompressed
// chunks of the floor at 0.5 MiB. The constrained count is out of core (range, p = 13, 455
// units on the CPU backend): about 25 s on 2 loaded cores, the whole test under a minute.
TEST(MemoryLimitFile, TwiceTheLimitCountsExactly) {
  std::string why;
  if (!groups_usable(&why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string bin = dir.file("g.bin"), graph = dir.file("g.tcsr");
  RunResult r = run_cli("generate uniform --scale 20 --edge-factor 16 --seed 7 -q -o " + q(bin));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("convert " + q(bin) + " -o " + q(graph) + " --chunk-size 256K -q");
  ASSERT_EQ(r.status, 0) << r.err;
  fs::remove(bin);
  r = run_cli("count --backend cpu --threads 2 --json " + q(graph));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::uint64_t triangles = json_u64(r.out, "triangles");
  ASSERT_GT(triangles, 0u);
  const std::uint64_t limit = fs::file_size(graph) / 2;
  MemoryGroup group("tristream-test-" + std::to_string(::getpid()) + "-twice", limit);
  ASSERT_TRUE(group.ok()) << group.why();
  r = group.run("count --backend cpu --threads 2 --json " + q(graph));
  ASSERT_EQ(r.status, 0) << "under " << limit << " bytes: " << r.err;
  EXPECT_EQ(json_u64(r.out, "triangles"), triangles);
  EXPECT_LE(json_u64(r.out, "host_peak_bytes"), json_u64(r.out, "host_budget_bytes")) << r.out;
  if (const auto peak = group.peak()) {
    EXPECT_LE(*peak, limit);
  }
}

// Per-vertex output of a graph of many vertices and few edges, where the per-vertex arrays set
// the floor: the ids, counts and degrees are put in id order in place (24 bytes per vertex; a
// 32-bit order beside them only where the budget holds it), so a limit just above that floor,
// below what five 8-byte arrays per vertex took, writes the same table as an unconstrained count;
// the floor the host model names is within 10% of the measured peak.
TEST(MemoryLimitFile, PerVertexOutputBelowFiveArraysPerVertex) {
  std::string why;
  if (!groups_usable(&why)) GTEST_SKIP() << why;
  TempDir dir;
  const std::string bin = dir.file("g.bin"), graph = dir.file("g.tcsr");
  RunResult r = run_cli("generate uniform --scale 21 --edge-factor 1 --seed 3 -q -o " + q(bin));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("convert " + q(bin) + " -o " + q(graph) + " --chunk-size 256K -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string want = dir.file("want.csv"), got = dir.file("got.csv");
  r = run_cli("count --backend cpu --threads 2 --json --per-vertex " + q(want) + " " + q(graph));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::uint64_t n = json_u64(r.out, "vertices");
  // the floor, from its error; the default budget is 7/8 of the room under the limit
  r = run_cli("count --backend cpu --threads 2 --host-memory 1M --per-vertex " + q(got) + " " +
              q(graph));
  ASSERT_EQ(r.status, 1);
  ASSERT_NE(r.err.find("per-vertex arrays need"), std::string::npos) << r.err;
  const std::uint64_t need = needed_bytes(r.err);
  ASSERT_GT(need, 24 * n);
  const std::uint64_t limit = need / 7 * 8 + (std::uint64_t{2} << 20);
  EXPECT_LT(limit, need - 24 * n + 40 * n) << "not below five 8-byte arrays per vertex";
  MemoryGroup group("tristream-test-" + std::to_string(::getpid()) + "-pv", limit);
  ASSERT_TRUE(group.ok()) << group.why();
  r = group.run("count --backend cpu --threads 2 --json --per-vertex " + q(got) + " " + q(graph));
  ASSERT_EQ(r.status, 0) << "under " << limit << " bytes: " << r.err;
  EXPECT_EQ(read_text(got), read_text(want));
  const std::uint64_t peak = json_u64(r.out, "host_peak_bytes");
  EXPECT_LE(peak, json_u64(r.out, "host_budget_bytes")) << r.out;
  EXPECT_GE(peak + need / 10, need) << "the host model's floor is 10% over the measured peak";
  if (const auto group_peak = group.peak()) {
    EXPECT_LE(*group_peak, limit);
  }
}

}  // namespace
}  // namespace tristream::test
