// write_behind_test.cpp — common/write_behind: a file written through WriteBehind while its memory
// group is tight keeps only a few steps in the page cache while it is written (mincore over a
// mapping of the file counts its cached pages) and none after finish(); while the group has room
// nothing is dropped, and a group that turns tight drops from then on; the bytes read back are the
// bytes written either way, also with several writers at once.
#include "common/write_behind.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "test_util.hpp"

namespace tristream {
namespace {

constexpr std::uint64_t kStep = std::uint64_t{1} << 20;
constexpr std::uint64_t kPiece = std::uint64_t{256} << 10;
constexpr std::uint64_t kFile = std::uint64_t{48} << 20;

// Bytes of the file's first `bytes` that are in the page cache.
std::uint64_t cached_bytes(int fd, std::uint64_t bytes) {
  void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return ~std::uint64_t{0};
  const long page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> in((bytes + page - 1) / page);
  std::uint64_t n = 0;
  if (::mincore(m, bytes, in.data()) == 0)
    for (unsigned char c : in) n += (c & 1) ? page : 0;
  ::munmap(m, bytes);
  return n;
}

// The piece at `offset`: a pattern that names its place.
std::vector<std::uint32_t> piece(std::uint64_t offset) {
  std::vector<std::uint32_t> v(kPiece / 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(offset / 4 + i);
  return v;
}

void write_piece(int fd, std::uint64_t offset, WriteBehind& wb) {
  const auto v = piece(offset);
  ASSERT_EQ(::pwrite(fd, v.data(), kPiece, static_cast<off_t>(offset)),
            static_cast<ssize_t>(kPiece));
  wb.wrote(kPiece);
}

void expect_content(int fd) {
  for (std::uint64_t at = 0; at < kFile; at += kPiece) {
    std::vector<std::uint32_t> got(kPiece / 4);
    ASSERT_EQ(::pread(fd, got.data(), kPiece, static_cast<off_t>(at)),
              static_cast<ssize_t>(kPiece));
    ASSERT_EQ(got, piece(at)) << "at " << at;
  }
}

class WriteBehindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = ::open(tmp_.file("f").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd_, 0);
    struct statfs fs {};
    ASSERT_EQ(::fstatfs(fd_, &fs), 0);
    in_memory_fs_ = fs.f_type == 0x01021994 /* tmpfs */ || fs.f_type == 0x858458f6 /* ramfs */;
  }
  void TearDown() override { ::close(fd_); }
  test::TempDir tmp_;
  int fd_ = -1;
  bool in_memory_fs_ = false;
};

TEST_F(WriteBehindTest, DropKeepsAFewStepsCachedWhileWriting) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory: nothing to drop";
  WriteBehind wb(fd_, true, kStep);
  std::uint64_t most = 0;
  for (std::uint64_t at = 0; at < kFile; at += kPiece) {
    write_piece(fd_, at, wb);
    if (at % (4 * kStep) == 0) most = std::max(most, cached_bytes(fd_, at + kPiece));
  }
  EXPECT_LE(most, 4 * kStep);  // the step being written, the step before, and rounding
  wb.finish();
  EXPECT_LE(cached_bytes(fd_, kFile), kStep / 4);
  expect_content(fd_);
}

TEST_F(WriteBehindTest, WithoutDropTheCacheIsLeftAlone) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory";
  WriteBehind wb(fd_, false, kStep);
  for (std::uint64_t at = 0; at < kFile; at += kPiece) write_piece(fd_, at, wb);
  wb.finish();
  EXPECT_GE(cached_bytes(fd_, kFile), kFile / 2);  // (a machine short of memory may evict some)
  expect_content(fd_);
}

// Inside a cgroup limit the step is a 64th of it, between 1 and 8 MiB (a tight 56 MiB group caches
// about 2 MiB of the file).
TEST_F(WriteBehindTest, ATightGroupDropsInStepsOfA64thOfItsLimit) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory: nothing to drop";
  const std::uint64_t limit = std::uint64_t{56} << 20;  // a 1 MiB step
  WriteBehind small(fd_, WriteBehind::Use::Scratch, limit,
                    [] { return std::optional<std::uint64_t>(std::uint64_t{2} << 20); });
  for (std::uint64_t at = 0; at < kFile; at += kPiece) write_piece(fd_, at, small);
  EXPECT_TRUE(small.tight());
  EXPECT_LE(cached_bytes(fd_, kFile), 3 * kStep);
  small.finish();
  EXPECT_LE(cached_bytes(fd_, kFile), kStep / 4);
  expect_content(fd_);
}

// A group with room (here 3/4 of its limit free) drops nothing: the file is read back from memory.
TEST_F(WriteBehindTest, AGroupWithRoomKeepsAScratchFileCached) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory";
  const std::uint64_t limit = std::uint64_t{1} << 30;
  int reads = 0;
  WriteBehind wb(fd_, WriteBehind::Use::Scratch, limit, [&] {
    ++reads;
    return std::optional<std::uint64_t>(limit / 4 * 3);
  });
  for (std::uint64_t at = 0; at < kFile; at += kPiece) write_piece(fd_, at, wb);
  wb.finish();
  EXPECT_FALSE(wb.tight());
  EXPECT_GE(reads, 5);                             // (the room read at every step's end)
  EXPECT_GE(cached_bytes(fd_, kFile), kFile / 2);  // (a machine short of memory may evict some)
  expect_content(fd_);
}

// The room falling below a quarter of the limit halfway through: from then on the file is
// dropped as it goes, the pages written while there was room included, and none stay after
// finish().
TEST_F(WriteBehindTest, AGroupTurningTightDropsFromThenOn) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory: nothing to drop";
  const std::uint64_t limit = std::uint64_t{256} << 20;  // a 4 MiB step
  std::uint64_t room = limit / 2;
  WriteBehind wb(fd_, WriteBehind::Use::Scratch, limit,
                 [&] { return std::optional<std::uint64_t>(room); });
  std::uint64_t at = 0;
  for (; at < kFile / 2; at += kPiece) write_piece(fd_, at, wb);
  EXPECT_FALSE(wb.tight());
  EXPECT_GE(cached_bytes(fd_, kFile / 2), kFile / 4);
  room = limit / 4 - 1;
  for (; at < kFile; at += kPiece) write_piece(fd_, at, wb);
  EXPECT_TRUE(wb.tight());
  EXPECT_LE(cached_bytes(fd_, kFile), 3 * (limit / 64));
  wb.finish();
  EXPECT_LE(cached_bytes(fd_, kFile), kStep / 4);
  expect_content(fd_);
}

// Without a limit the group is never tight, whatever the room function says.
TEST_F(WriteBehindTest, WithoutALimitNothingIsDropped) {
  if (in_memory_fs_) GTEST_SKIP() << "the temporary directory is in memory";
  WriteBehind wb(fd_, WriteBehind::Use::Output, 0, [] { return std::optional<std::uint64_t>(0); });
  for (std::uint64_t at = 0; at < kFile; at += kPiece) write_piece(fd_, at, wb);
  wb.finish();
  EXPECT_FALSE(wb.tight());
  EXPECT_GE(cached_bytes(fd_, kFile), kFile / 2);
  expect_content(fd_);
}

TEST_F(WriteBehindTest, SeveralWritersAtOnceWriteEveryByte) {
  WriteBehind wb(fd_, true, kStep);
  const std::uint64_t pieces = kFile / kPiece;
  std::vector<std::thread> writers;
  for (unsigned t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (std::uint64_t k = t; k < pieces; k += 4) write_piece(fd_, k * kPiece, wb);
    });
  for (auto& w : writers) w.join();
  wb.finish();
  expect_content(fd_);
}

}  // namespace
}  // namespace tristream
