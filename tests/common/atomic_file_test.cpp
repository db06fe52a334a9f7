// atomic_file_test.cpp — common/atomic_file: exclusive temporaries with unpredictable names, the
// output path checks, commit and clean-up.
#include "common/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "test_util.hpp"
#include "tristream/error.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

TEST(AtomicFile, TemporaryNamesAreUnpredictableAndExclusive) {
  test::TempDir tmp;
  const std::string target = tmp.file("out.csv");
  std::set<std::string> names;
  for (int k = 0; k < 20; ++k) {
    const TempFile t = create_temp_beside(target);
    ASSERT_GE(t.fd, 0);
    EXPECT_EQ(t.path.rfind(target + ".tmp.", 0), 0u) << t.path;
    // No process id in the name: nothing another user could plant in advance.
    EXPECT_EQ(t.path.find(std::to_string(::getpid())), std::string::npos) << t.path;
    names.insert(t.path);
    ::close(t.fd);
  }
  EXPECT_EQ(names.size(), 20u);
}

TEST(AtomicFile, PlantedSymlinkAtTheOldPredictableNameIsNotFollowed) {
  test::TempDir tmp;
  const std::string victim = tmp.file("victim.txt"), target = tmp.file("out.csv");
  test::write_text(victim, "precious\n");
  // The name the writer used to take: PATH.tmp.PID.
  fs::create_symlink(victim, target + ".tmp." + std::to_string(::getpid()));
  write_file_atomically(target, [](std::FILE* f) { std::fputs("new\n", f); });
  EXPECT_EQ(test::read_text(victim), "precious\n");
  EXPECT_EQ(test::read_text(target), "new\n");
}

TEST(AtomicFile, UncommittedOutputLeavesNothing) {
  test::TempDir tmp;
  {
    AtomicOutput out("--x", tmp.file("a.csv"));
    EXPECT_EQ(entries(tmp.path()), 1u);  // the temporary exists while the work runs
  }
  EXPECT_EQ(entries(tmp.path()), 0u);
  AtomicOutput out("--x", tmp.file("b.csv"));
  EXPECT_THROW(out.commit([](std::FILE*) { throw Error(ErrorKind::Input, "boom"); }), Error);
}

TEST(AtomicFile, CommitReplacesAndKeepsTheUmaskMode) {
  test::TempDir tmp;
  const std::string target = tmp.file("c.csv");
  test::write_text(target, "old\n");
  AtomicOutput("--x", target).commit([](std::FILE* f) { std::fputs("new\n", f); });
  EXPECT_EQ(test::read_text(target), "new\n");
  EXPECT_EQ(entries(tmp.path()), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST(AtomicFile, OutputThatIsTheInputIsRefused) {
  test::TempDir tmp;
  const std::string in = tmp.file("g.el"), link = tmp.file("link.el");
  test::write_text(in, "1 2\n");
  fs::create_hard_link(in, link);
  for (const std::string& out : {in, link}) {
    try {
      AtomicOutput o("-o", out, {in});
      ADD_FAILURE() << "accepted " << out;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("is the input file"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(test::read_text(in), "1 2\n");
  EXPECT_NO_THROW(check_output_path("-o", tmp.file("new.tcsr"), {in, "-"}));
}

TEST(AtomicFile, DirectoryOutputIsRefused) {
  test::TempDir tmp;
  EXPECT_THROW(check_output_path("-o", tmp.path(), {}), Error);
  EXPECT_THROW(check_output_path("-o", tmp.file("sub/"), {}), Error);
  EXPECT_THROW(check_output_path("-o", "", {}), Error);
  EXPECT_NO_THROW(check_output_path("-o", "-", {}));
}

TEST(AtomicFile, MissingDirectoryIsAnInputError) {
  test::TempDir tmp;
  try {
    create_temp_beside(tmp.file("no/such/dir/out.csv"));
    ADD_FAILURE() << "created a file in a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("out.csv"), std::string::npos) << e.what();
  }
  const std::string file = tmp.file("f");
  test::write_text(file, "x");
  EXPECT_THROW(check_directory("--tmp-dir", file), Error);
  EXPECT_NO_THROW(check_directory("--tmp-dir", tmp.path()));
}

}  // namespace
}  // namespace tristream
