// memory_limit_test.cpp — `count` inside a cgroup memory limit: from a third of the file's size
// to twice it, every run either counts exactly within its host budget or stops with the floor
// error before the work (exit 1, no --per-vertex file); never the kernel's OOM killer, and the
// group's peak stays within the limit. Needs root and a cgroup v1 or v2 memory controller, and a
// build without sanitizers; skips with a message otherwise.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>

#include "test_util.hpp"

namespace tristream::test {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_first_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return std::nullopt;
  char buf[4096];
  const char* got = std::fgets(buf, sizeof buf, f);
  std::fclose(f);
  if (!got) return std::nullopt;
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// A memory cgroup of its own (v1 under the process's memory group, v2 under the root), removed
// on destruction. ok() is false (with why()) where none can be made.
class MemoryGroup {
 public:
  MemoryGroup(const std::string& name, std::uint64_t limit) {
    if (::geteuid() != 0) {
      why_ = "not root";
      return;
    }
    const std::string self = read_text("/proc/self/cgroup");
    std::smatch m;
    if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") &&
        std::regex_search(self, m,
                          std::regex("(^|\n)[0-9]+:([^:\n]*,)?memory(,[^:\n]*)?:([^\n]*)"))) {
      v1_ = true;
      dir_ = "/sys/fs/cgroup/memory" + m[4].str() + "/" + name;
    } else if (fs::exists("/sys/fs/cgroup/cgroup.subtree_control") &&
               read_text("/sys/fs/cgroup/cgroup.subtree_control").find("memory") !=
                   std::string::npos) {
      dir_ = "/sys/fs/cgroup/" + name;
    } else {
      why_ = "no cgroup v1 or v2 memory controller";
      return;
    }
    std::error_code ec;
    fs::create_directory(dir_, ec);
    const std::string limit_file = dir_ + (v1_ ? "/memory.limit_in_bytes" : "/memory.max");
    if (ec || !write_file(limit_file, std::to_string(limit))) {
      why_ = "cannot create " + dir_ + " with a limit";
      fs::remove(dir_, ec);
      dir_.clear();
      return;
    }
    if (v1_) write_file(dir_ + "/memory.memsw.limit_in_bytes", std::to_string(limit));
    if (!v1_) write_file(dir_ + "/memory.swap.max", "0");
  }
  ~MemoryGroup() {
    if (dir_.empty()) return;
    for (int tries = 0; tries < 50; ++tries) {  // the last task may take a moment to leave
      if (::rmdir(dir_.c_str()) == 0) return;
      ::usleep(20000);
    }
  }
  bool ok() const { return !dir_.empty(); }
  const std::string& why() const { return why_; }
  // Runs `tristream ARGS` inside the group.
  RunResult run(const std::string& args) const { return run_cli_in(dir_ + "/cgroup.procs", args); }
  // The group's peak usage in bytes; none where the kernel does not keep it (v2 before 5.19).
  std::optional<std::uint64_t> peak() const {
    const auto s = read_first_line(dir_ + (v1_ ? "/memory.max_usage_in_bytes" : "/memory.peak"));
    if (!s || s->empty()) return std::nullopt;
    return std::stoull(*s);
  }

 private:
  static RunResult run_cli_in(const std::string& procs, const std::string& args) {
    TempDir tmp;
    const std::string out = tmp.file("stdout"), err = tmp.file("stderr");
    const std::string inner = "echo $$ > " + procs + " && exec '" + TRISTREAM_BINARY + "' " + args;
    const std::string cmd = "sh -c " + q(inner) + " >'" + out + "' 2>'" + err + "' </dev/null";
    const int raw = std::system(cmd.c_str());
    RunResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }
  bool v1_ = false;
  std::string dir_, why_;
};

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
