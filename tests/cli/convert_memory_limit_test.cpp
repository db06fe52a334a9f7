// convert_memory_limit_test.cpp — `convert` inside a cgroup memory limit with the default
// --memory-limit (which follows the group): an edge list three times the limit converts (exit 0)
// to the same bytes as an unconstrained conversion, with the group's peak within the limit; a
// limit below the conversion's floor stops with a clear error before any work (exit 1, no output,
// no temporary), never the kernel's OOM killer. Needs root and a cgroup v1 or v2 memory
// controller; skips with a message otherwise, and in sanitizer builds (their shadow memory is
// not the program's).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "memory_group.hpp"
#include "test_util.hpp"

namespace tristream::test {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The group's limit. The floor of `convert` (the writer's 8 MiB chunks, the rest of the
// conversion, and the census the command stores in the file after it) is about 48 MiB.
constexpr std::uint64_t kLimit = std::uint64_t{56} << 20;

// A dense uniform graph (2^15 vertices, many repeats) as text of at least 3 * kLimit bytes, and
// its unconstrained conversion: made once for the suite.
class ConvertMemoryLimit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (kSanitized || ::geteuid() != 0) return;
    dir_ = new TempDir;
    input_ = dir_->file("g.el");
    reference_ = dir_->file("ref.tcsr");
    RunResult r =
        run_cli("generate uniform --scale 15 --edge-factor 520 --seed 11 -q -o " + q(input_));
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_cli("convert " + q(input_) + " -o " + q(reference_) + " -q --memory-limit 4G");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "sanitizer build";
    if (::geteuid() != 0) GTEST_SKIP() << "cannot make a memory cgroup: not root";
  }

  static TempDir* dir_;
  static std::string input_, reference_;
};

TempDir* ConvertMemoryLimit::dir_ = nullptr;
std::string ConvertMemoryLimit::input_, ConvertMemoryLimit::reference_;

TEST_F(ConvertMemoryLimit, InputThreeTimesTheLimitConvertsToTheSameBytes) {
  ASSERT_GE(fs::file_size(input_), 3 * kLimit);
  MemoryGroup group("tristream-convert-test-" + std::to_string(::getpid()), kLimit);
  if (!group.ok()) GTEST_SKIP() << "cannot make a memory cgroup: " << group.why();
  TempDir out;
  const std::string output = out.file("g.tcsr");
  const RunResult r =
      group.run("convert " + q(input_) + " -o " + q(output) + " -q --threads 2 --json");
  ASSERT_NE(r.status, 137) << "killed (OOM) under " << kLimit << " bytes";
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"out_of_core\":true"), std::string::npos) << r.out;
  EXPECT_EQ(read_text(output), read_text(reference_));
  if (const auto peak = group.peak()) {
    EXPECT_LE(*peak, kLimit);
  }
}

TEST_F(ConvertMemoryLimit, LimitBelowTheFloorIsAClearError) {
  const std::uint64_t limit = std::uint64_t{24} << 20;
  MemoryGroup group("tristream-convert-floor-test-" + std::to_string(::getpid()), limit);
  if (!group.ok()) GTEST_SKIP() << "cannot make a memory cgroup: " << group.why();
  TempDir out;
  const std::string output = out.file("g.tcsr");
  const RunResult r = group.run("convert " + q(input_) + " -o " + q(output) + " -q --threads 2");
  ASSERT_NE(r.status, 137) << "killed (OOM) under " << limit << " bytes";
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("is too small"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--chunk-size"), std::string::npos) << r.err;
  EXPECT_EQ(fs::directory_iterator(out.path()), fs::directory_iterator());  // nothing written
}

}  // namespace
}  // namespace tristream::test
