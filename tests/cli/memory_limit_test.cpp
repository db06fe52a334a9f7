// memory_limit_test.cpp — `count` inside a cgroup memory limit: from a third of the file's size
// to twice it, every run either counts exactly within its host budget or stops with the floor
// error before the work (exit 1, no --per-vertex file); never the kernel's OOM killer, and the
// group's peak stays within the limit. Needs root and a cgroup v1 or v2 memory controller, and a
// build without sanitizers; skips with a message otherwise.
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

}  // namespace
}  // namespace tristream::test
