// host_peak_test.cpp — the process's resident set and its high-water mark (common/host_peak.hpp):
// the /proc/self/status parser, and a touched allocation raising the mark.
#include "common/host_peak.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace tristream {
namespace {

TEST(HostPeak, ParsesStatusLines) {
  const std::string status =
      "Name:\ttristream\nVmPeak:\t  200000 kB\nVmHWM:\t    5120 kB\nVmRSS:\t    4096 kB\n";
  EXPECT_EQ(parse_status_bytes(status, "VmHWM"), 5120u * 1024);
  EXPECT_EQ(parse_status_bytes(status, "VmRSS"), 4096u * 1024);
  EXPECT_EQ(parse_status_bytes(status, "VmSwap"), 0u);
}

TEST(HostPeak, MalformedLineIsZero) {
  EXPECT_EQ(parse_status_bytes("VmHWM:\tlots\n", "VmHWM"), 0u);
  EXPECT_EQ(parse_status_bytes("VmHWM:\t12 pages\n", "VmHWM"), 0u);
  EXPECT_EQ(parse_status_bytes("", "VmHWM"), 0u);
}

TEST(HostPeak, TouchedAllocationRaisesThePeak) {
  const std::uint64_t rss = host_resident_bytes();
  if (rss == 0) GTEST_SKIP() << "no /proc/self/status here";
  EXPECT_GE(host_peak_bytes(), rss);
  reset_host_peak();
  const std::uint64_t before = host_peak_bytes();
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  {
    std::vector<unsigned char> big(kBytes);
    std::memset(big.data(), 1, big.size());
    EXPECT_GE(host_resident_bytes(), rss + kBytes / 2);
  }
  EXPECT_GE(host_peak_bytes(), before + kBytes / 2);
}

}  // namespace
}  // namespace tristream
