// host_memory_policy_test.cpp — the host-memory policy over /proc and cgroup files given as text:
// MemAvailable, cgroup v2 and v1 limits, nested groups, no limit, unreadable files.
#include "common/host_memory_policy.hpp"

#include <gtest/gtest.h>

#include <map>

namespace tristream {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

ReadText files(std::map<std::string, std::string> m) {
  return [m](const std::string& path) -> std::optional<std::string> {
    auto it = m.find(path);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

const char* kMeminfo =
    "MemTotal:       32000000 kB\n"
    "MemFree:         1000000 kB\n"
    "MemAvailable:    8388608 kB\n"
    "Buffers:          100000 kB\n";

TEST(HostMemoryPolicy, ParsesMemAvailable) {
  EXPECT_EQ(parse_mem_available(kMeminfo), 8 * kGiB);
  EXPECT_EQ(parse_mem_available("MemTotal: 5 kB\n"), 0u);
  EXPECT_EQ(parse_mem_available(""), 0u);
}

TEST(HostMemoryPolicy, ParsesSelfCgroup) {
  const CgroupPaths v2 = parse_self_cgroup("0::/user.slice/job\n");
  ASSERT_TRUE(v2.v2);
  EXPECT_EQ(*v2.v2, "/user.slice/job");
  EXPECT_FALSE(v2.v1);
  const CgroupPaths v1 = parse_self_cgroup("12:cpu,cpuacct:/a\n4:memory:/docker/abc\n");
  ASSERT_TRUE(v1.v1);
  EXPECT_EQ(*v1.v1, "/docker/abc");
  EXPECT_FALSE(v1.v2);
}

TEST(HostMemoryPolicy, LevelsGoUpToTheMount) {
  const auto l = cgroup_levels("/sys/fs/cgroup", "/a/b/");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], "/sys/fs/cgroup/a/b");
  EXPECT_EQ(l[1], "/sys/fs/cgroup/a");
  EXPECT_EQ(l[2], "/sys/fs/cgroup");
  EXPECT_EQ(cgroup_levels("/m", "/").size(), 1u);
}

TEST(HostMemoryPolicy, MemAvailableAloneWithoutLimits) {
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "0::/job\n"},
                                         {"/sys/fs/cgroup/job/memory.max", "max\n"}})),
            8 * kGiB);
}

TEST(HostMemoryPolicy, CgroupV2RoomIsLimitMinusCurrent) {
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "0::/job\n"},
                                         {"/sys/fs/cgroup/job/memory.max", "4294967296\n"},
                                         {"/sys/fs/cgroup/job/memory.current", "1073741824\n"}})),
            3 * kGiB);
}

TEST(HostMemoryPolicy, NestedGroupsTakeTheTightestParent) {
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "0::/outer/inner\n"},
                                         {"/sys/fs/cgroup/outer/inner/memory.max", "max\n"},
                                         {"/sys/fs/cgroup/outer/memory.max", "2147483648\n"},
                                         {"/sys/fs/cgroup/outer/memory.current", "0\n"}})),
            2 * kGiB);
}

TEST(HostMemoryPolicy, CgroupV1LimitAndNoLimitValue) {
  const std::string v1 = "/sys/fs/cgroup/memory/docker/abc/";
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "5:memory:/docker/abc\n"},
                                         {v1 + "memory.limit_in_bytes", "6442450944\n"},
                                         {v1 + "memory.usage_in_bytes", "2147483648\n"}})),
            4 * kGiB);
  // a value near 2^63 means no limit
  EXPECT_EQ(available_host_memory(
                files({{"/proc/meminfo", kMeminfo},
                       {"/proc/self/cgroup", "5:memory:/\n"},
                       {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"}})),
            8 * kGiB);
}

TEST(HostMemoryPolicy, UsageAboveLimitLeavesNoRoom) {
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "0::/\n"},
                                         {"/sys/fs/cgroup/memory.max", "100\n"},
                                         {"/sys/fs/cgroup/memory.current", "200\n"}})),
            0u);
}

TEST(HostMemoryPolicy, FullInnerGroupIsNotWidenedByItsParent) {
  EXPECT_EQ(available_host_memory(files({{"/proc/meminfo", kMeminfo},
                                         {"/proc/self/cgroup", "0::/outer/inner\n"},
                                         {"/sys/fs/cgroup/outer/inner/memory.max", "100\n"},
                                         {"/sys/fs/cgroup/outer/inner/memory.current", "100\n"},
                                         {"/sys/fs/cgroup/outer/memory.max", "2147483648\n"}})),
            0u);
}

// The tightest limit at any level (v2 or v1), even a full group's; "max", the v1 value near 2^63
// and unreadable files are none (0).
TEST(HostMemoryPolicy, CgroupLimitIsTheTightestAtAnyLevel) {
  EXPECT_EQ(cgroup_memory_limit(files({{"/proc/self/cgroup", "0::/outer/inner\n"},
                                       {"/sys/fs/cgroup/outer/inner/memory.max", "max\n"},
                                       {"/sys/fs/cgroup/outer/memory.max", "58720256\n"},
                                       {"/sys/fs/cgroup/memory.max", "4294967296\n"}})),
            58720256u);
  EXPECT_EQ(cgroup_memory_limit(files({{"/proc/self/cgroup", "0::/\n"},
                                       {"/sys/fs/cgroup/memory.max", "100\n"},
                                       {"/sys/fs/cgroup/memory.current", "200\n"}})),
            100u);
  EXPECT_EQ(cgroup_memory_limit(files(
                {{"/proc/self/cgroup", "5:memory:/docker/abc\n"},
                 {"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "6442450944\n"}})),
            6442450944u);
  EXPECT_EQ(cgroup_memory_limit(files({{"/proc/self/cgroup", "0::/job\n"},
                                       {"/sys/fs/cgroup/job/memory.max", "max\n"},
                                       {"/sys/fs/cgroup/memory.max", "max\n"}})),
            0u);
  EXPECT_EQ(cgroup_memory_limit(
                files({{"/proc/self/cgroup", "5:memory:/\n"},
                       {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"}})),
            0u);
  EXPECT_EQ(cgroup_memory_limit(files({})), 0u);
}

// The least room under any limit on the way up (v2 or v1; the page cache counts in the usage);
// none without a limit, whatever MemAvailable says.
TEST(HostMemoryPolicy, CgroupRoomIsTheLeastUnderAnyLimit) {
  EXPECT_EQ(cgroup_memory_room(files({{"/proc/self/cgroup", "0::/outer/inner\n"},
                                      {"/sys/fs/cgroup/outer/inner/memory.max", "1000\n"},
                                      {"/sys/fs/cgroup/outer/inner/memory.current", "400\n"},
                                      {"/sys/fs/cgroup/outer/memory.max", "5000\n"},
                                      {"/sys/fs/cgroup/outer/memory.current", "4800\n"}})),
            std::optional<std::uint64_t>(200));
  EXPECT_EQ(cgroup_memory_room(
                files({{"/proc/self/cgroup", "5:memory:/docker/abc\n"},
                       {"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "6000\n"},
                       {"/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "7000\n"}})),
            std::optional<std::uint64_t>(0));
  EXPECT_EQ(cgroup_memory_room(files({{"/proc/meminfo", kMeminfo},
                                      {"/proc/self/cgroup", "0::/job\n"},
                                      {"/sys/fs/cgroup/job/memory.max", "max\n"}})),
            std::nullopt);
}

TEST(HostMemoryPolicy, NothingReadableIsUnknown) {
  EXPECT_EQ(available_host_memory(files({})), 0u);
  EXPECT_EQ(available_host_memory(
                files({{"/proc/meminfo", "garbage"}, {"/sys/fs/cgroup/memory.max", "12"}})),
            0u);
}

}  // namespace
}  // namespace tristream
