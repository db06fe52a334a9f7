// temp_file_test.cpp — TempFile (converter/util.hpp): a spill file written in pieces by several
// threads reads back byte for byte, on one thread or cut into pieces on several, at any offset
// and length; a read that runs past the end returns the bytes up to it, whatever the threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "converter/util.hpp"
#include "test_util.hpp"

namespace tristream::conv {
namespace {

constexpr std::size_t kBytes = std::size_t{40} << 20;  // five pieces of the parallel read

std::vector<std::uint8_t> pattern(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST(TempFile, ReadsBackWhatSeveralWritersWroteOnAnyThreadCount) {
  test::TempDir dir;
  TempFile f(dir.path());
  const auto data = pattern(kBytes, 7);
  const std::size_t quarter = kBytes / 4;
  std::vector<std::thread> writers;
  for (std::size_t w = 0; w < 4; ++w)
    writers.emplace_back([&, w] { f.write_at(w * quarter, data.data() + w * quarter, quarter); });
  for (auto& t : writers) t.join();
  std::mt19937_64 rng(11);
  for (unsigned threads : {1u, 2u, 3u, 8u, 16u}) {
    // The whole file, an unaligned middle, and short reads (one piece, or none to split).
    const std::size_t offs[] = {0, 12345, kBytes - (std::size_t{17} << 20), kBytes - 100};
    for (std::size_t off : offs) {
      const std::size_t len = std::min<std::size_t>(kBytes - off, (rng() % kBytes) + 1);
      std::vector<std::uint8_t> got(len);
      ASSERT_EQ(f.read_at(off, got.data(), len, threads), len) << threads << " " << off;
      EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + static_cast<long>(off)))
          << "threads " << threads << " offset " << off << " length " << len;
    }
  }
}

TEST(TempFile, AReadPastTheEndReturnsTheBytesUpToIt) {
  test::TempDir dir;
  TempFile f(dir.path());
  const auto data = pattern(kBytes, 3);
  f.write_at(0, data.data(), kBytes);
  for (unsigned threads : {1u, 4u, 16u}) {
    const std::size_t off = std::size_t{5} << 20, want = kBytes;  // asks 5 MiB past the end
    std::vector<std::uint8_t> got(want, 0xAB);
    ASSERT_EQ(f.read_at(off, got.data(), want, threads), kBytes - off) << threads;
    EXPECT_TRUE(std::equal(data.begin() + static_cast<long>(off), data.end(), got.begin()))
        << threads;
  }
}

}  // namespace
}  // namespace tristream::conv
