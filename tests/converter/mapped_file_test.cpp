// mapped_file_test.cpp — the converter's mapped input (converter/mapped_file.hpp): a file that
// shrinks under the mapping reads as zeros and marks the mapping changed instead of ending the
// process with SIGBUS; other mappings stay unmarked; a SIGBUS outside any guarded mapping still
// ends the process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "converter/mapped_file.hpp"
#include "test_util.hpp"

namespace tristream::conv {
namespace {

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

int file_of(const std::string& path, std::size_t bytes, char fill) {
  test::write_text(path, std::string(bytes, fill));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  return fd;
}

TEST(MappedFile, ShrunkFileReadsAsZerosAndIsMarkedChanged) {
  test::TempDir d;
  const int fd = file_of(d.file("a"), 3 * kPage, 'a');
  const int other_fd = file_of(d.file("b"), 2 * kPage, 'b');
  MappedFile m(fd, 3 * kPage);
  MappedFile other(other_fd, 2 * kPage);
  EXPECT_EQ(m.data()[2 * kPage + 5], 'a');
  m.drop(kPage, 2 * kPage);  // the pages leave the process: the next read goes to the file
  ASSERT_EQ(::truncate(d.file("a").c_str(), static_cast<off_t>(kPage)), 0);
  EXPECT_FALSE(m.changed());
  EXPECT_EQ(m.data()[10], 'a');              // still inside the file
  EXPECT_EQ(m.data()[2 * kPage + 5], '\0');  // past its new end: zeros, not SIGBUS
  EXPECT_EQ(m.data()[kPage + 1], '\0');
  EXPECT_TRUE(m.changed());
  EXPECT_FALSE(other.changed());
  EXPECT_EQ(other.data()[kPage + 3], 'b');
  ::close(fd);
  ::close(other_fd);
}

TEST(MappedFile, AFreshMappingIsUnchanged) {
  test::TempDir d;
  const int fd = file_of(d.file("a"), 2 * kPage, 'x');
  for (int round = 0; round < 20; ++round) {  // slots are reused
    MappedFile m(fd, 2 * kPage);
    EXPECT_EQ(m.data()[kPage], 'x');
    EXPECT_FALSE(m.changed());
  }
  ::close(fd);
}

TEST(MappedFile, SigbusOutsideAGuardedMappingStillEndsTheProcess) {
  test::TempDir d;
  const int guarded_fd = file_of(d.file("g"), kPage, 'g');
  MappedFile guarded(guarded_fd, kPage);  // the guard is installed
  const int fd = file_of(d.file("u"), 2 * kPage, 'u');
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    void* p = ::mmap(nullptr, 2 * kPage, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) ::_exit(3);
    if (::ftruncate(::open(d.file("u").c_str(), O_WRONLY), 0) != 0) ::_exit(4);
    volatile char c = static_cast<const char*>(p)[kPage + 1];  // an unguarded mapping
    (void)c;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Killed by SIGBUS (or, under a sanitizer, ended by its report): never a normal exit.
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGBUS);
  }
  ::close(fd);
  ::close(guarded_fd);
}

}  // namespace
}  // namespace tristream::conv
