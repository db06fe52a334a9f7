// interrupt_test.cpp — SIGINT and SIGTERM sent to the tristream binary while it works: `count`
// of a .tcsr file (one unit, in core, on the CPU) and of an edge list (in its convert step), and
// `convert` and `generate`. Each must exit 130 (SIGINT) or 143 (SIGTERM) soon after the signal,
// print no count and leave no output, temporary output (OUT.tmp.*), spill file or temporary
// directory.
//
// Each delay counts from the moment the child has installed its signal handler (a slow start,
// e.g. under a sanitizer on a loaded machine, never meets the signal's default action). The
// graphs are generated large enough that the work takes well over the delay; the conversion's
// delays are fractions of a conversion timed first. Where a run still finishes first (a much
// faster machine), the test skips with a message. The only time bound asserted is a generous one
// (kExitBound after the signal).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;

constexpr double kExitBound = 3.0;  // seconds from the signal to the exit (about 0.1 expected)

using Outcome = test::SignalledRun;

// Runs the binary with `args`, sends `sig` after `delay` seconds and waits for its end.
Outcome interrupt_run(const std::vector<std::string>& args, double delay, int sig,
                      const std::string& dir, const std::string& tmpdir) {
  return test::run_cli_signalled(args, delay, sig, dir, tmpdir);
}

// Names in `dir` that start with `prefix`.
std::vector<std::string> entries(const std::string& dir, const std::string& prefix = "") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.compare(0, prefix.size(), prefix) == 0) names.push_back(n);
  }
  return names;
}

// The graphs, generated once: a Kronecker graph as .tcsr and as a text edge list.
class CliInterrupt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    for (const char* name : {"g.tcsr", "g.el"}) {
      const auto r =
          test::run_cli("generate kronecker --scale 18 --seed 7 -q -o '" + dir_->file(name) + "'");
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string graph(const char* name) { return dir_->file(name); }

  void SetUp() override {
    work_ = std::make_unique<test::TempDir>();
    fs::create_directory(tmpdir());
  }
  std::string tmpdir() const { return work_->file("tmp"); }
  std::string file(const std::string& name) const { return work_->file(name); }

  // Checks the common outcome of an interrupted run; false (skipped) when it ended first.
  bool check_stopped(const Outcome& o, int sig) {
    if (o.finished_first) return false;
    EXPECT_EQ(o.status, 128 + sig) << o.err;
    EXPECT_LT(o.seconds_after_signal, kExitBound);
    EXPECT_NE(o.err.find(sig == SIGTERM ? "terminated" : "interrupted"), std::string::npos)
        << o.err;
    return true;
  }

  static test::TempDir* dir_;
  std::unique_ptr<test::TempDir> work_;
};

test::TempDir* CliInterrupt::dir_ = nullptr;

#define SKIP_IF_FINISHED_FIRST(o) \
  if ((o).finished_first) GTEST_SKIP() << "the run ended before the signal (a faster machine)"

TEST_F(CliInterrupt, CountInCoreOnTheCpuStopsInsideTheUnit) {
  for (const double delay : {0.05, 0.3}) {
    const auto o = interrupt_run({"count", graph("g.tcsr"), "--backend", "cpu", "--per-vertex",
                                  file("pv.csv"), "--parts", "1"},
                                 delay, SIGINT, work_->path(), tmpdir());
    SKIP_IF_FINISHED_FIRST(o);
    check_stopped(o, SIGINT);
    EXPECT_EQ(o.out, "");  // no count printed
    EXPECT_TRUE(entries(work_->path(), "pv.csv").empty());
  }
}

TEST_F(CliInterrupt, CountSigtermExits143) {
  const auto o = interrupt_run({"count", graph("g.tcsr"), "--backend", "cpu", "--json"}, 0.3,
                               SIGTERM, work_->path(), tmpdir());
  SKIP_IF_FINISHED_FIRST(o);
  check_stopped(o, SIGTERM);
  EXPECT_EQ(o.out, "");
}

TEST_F(CliInterrupt, CountOfAnEdgeListRemovesItsTemporaryDirectory) {
  for (const double delay : {0.1, 0.5}) {
    const auto o = interrupt_run({"count", graph("g.el"), "--backend", "cpu"}, delay, SIGINT,
                                 work_->path(), tmpdir());
    SKIP_IF_FINISHED_FIRST(o);
    check_stopped(o, SIGINT);
    EXPECT_EQ(o.out, "");
    EXPECT_TRUE(entries(tmpdir(), "tristream-").empty());
  }
}

TEST_F(CliInterrupt, ConvertLeavesNoOutputNorTemporaries) {
  // Early (parsing) and late (sorting, writing) in the conversion, in memory and out of core
  // (spill files in --tmp-dir), for both signals. The delays are fractions of an uninterrupted
  // conversion measured here, so that every case lands inside the work on any machine.
  struct Case {
    double fraction;
    int sig;
    const char* memory_limit;
  };
  const auto args_for = [&](const char* memory_limit, const std::string& spill) {
    std::vector<std::string> args = {"convert",        graph("g.el"), "-o",
                                     file("out.tcsr"), "--tmp-dir",   spill};
    if (memory_limit) args.insert(args.end(), {"--memory-limit", memory_limit});
    return args;
  };
  const auto duration = [&](const char* memory_limit) {
    std::string cmd;
    for (const auto& a : args_for(memory_limit, tmpdir())) cmd += "'" + a + "' ";
    const auto start = std::chrono::steady_clock::now();
    const auto r = test::run_cli(cmd + "-q");
    EXPECT_EQ(r.status, 0) << r.err;
    fs::remove(file("out.tcsr"));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double in_memory = duration(nullptr), out_of_core = duration("64M");
  int stopped = 0;
  for (const Case c :
       {Case{0.1, SIGINT, nullptr}, Case{0.6, SIGINT, nullptr}, Case{0.3, SIGTERM, nullptr},
        Case{0.8, SIGTERM, nullptr}, Case{0.2, SIGINT, "64M"}, Case{0.7, SIGTERM, "64M"}}) {
    const double delay = c.fraction * (c.memory_limit ? out_of_core : in_memory);
    SCOPED_TRACE(std::to_string(delay) + " s, signal " + std::to_string(c.sig));
    const std::string spill = file("spill");
    fs::create_directories(spill);
    const auto o =
        interrupt_run(args_for(c.memory_limit, spill), delay, c.sig, work_->path(), tmpdir());
    // A run that ended first (the machine sped up) or a signal that lands as the finished
    // conversion exits changes nothing: exit 0 with the whole output. One that is ignored shows
    // as exit 0 long after the signal.
    if (o.finished_first || (o.status == 0 && o.seconds_after_signal < 0.1)) {
      EXPECT_EQ(o.status, 0);
      EXPECT_NO_THROW(tcsr::Reader(file("out.tcsr")).check());
      fs::remove(file("out.tcsr"));
      continue;
    }
    ++stopped;
    check_stopped(o, c.sig);
    // Never OUT.tmp.* nor a partial OUT. A signal that lands after the finished file was
    // renamed into place (the process is exiting) leaves that whole file: it must read back.
    const auto left = entries(work_->path(), "out.tcsr");
    for (const auto& e : left) {
      ASSERT_EQ(e, "out.tcsr") << "a temporary was left";
      EXPECT_NO_THROW(tcsr::Reader(file("out.tcsr")).check()) << "a partial output";
    }
    EXPECT_TRUE(entries(spill).empty());
  }
  if (stopped == 0) GTEST_SKIP() << "every conversion ended before its signal";
}

TEST_F(CliInterrupt, GenerateLeavesNoOutputNorTemporaries) {
  for (const char* name : {"out.el", "out.tcsr"}) {
    SCOPED_TRACE(name);
    const auto o = interrupt_run({"generate", "kronecker", "--scale", "20", "-o", file(name)}, 0.3,
                                 SIGTERM, work_->path(), tmpdir());
    SKIP_IF_FINISHED_FIRST(o);
    check_stopped(o, SIGTERM);
    EXPECT_TRUE(entries(work_->path(), "out.").empty());
  }
}

}  // namespace
}  // namespace tristream
