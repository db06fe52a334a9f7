// common/host_memory_policy.hpp — how much host memory this process may use: the one policy that
// `convert` and `count` both apply (default_host_budget).
//
// available_host_memory() is the lower of MemAvailable (/proc/meminfo) and the room under every
// cgroup memory limit on the way from the process's group up to the root: cgroup v2
// (memory.max - memory.current) and v1 (memory.limit_in_bytes - memory.usage_in_bytes, where a
// value at or above 2^62 means no limit), nested groups included (a parent's tighter limit
// counts). 0 means unknown. The parsing takes file texts, so tests give them as strings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tristream {

// MemAvailable in bytes from the text of /proc/meminfo (0 when absent or malformed).
std::uint64_t parse_mem_available(const std::string& meminfo);

// The process's memory groups from the text of /proc/self/cgroup: the v2 path ("0::PATH") and
// the v1 memory controller's path (a line whose controllers include "memory").
struct CgroupPaths {
  std::optional<std::string> v2, v1;
};
CgroupPaths parse_self_cgroup(const std::string& text);

// The directories from `mount + path` up to `mount` itself, innermost first.
std::vector<std::string> cgroup_levels(const std::string& mount, const std::string& path);

// Reads a whole file's text; none when it cannot be read.
using ReadText = std::function<std::optional<std::string>(const std::string& path)>;

// The policy over the files `read` gives (paths as on Linux: /proc/meminfo, /proc/self/cgroup,
// /sys/fs/cgroup/...). 0 when nothing is known.
std::uint64_t available_host_memory(const ReadText& read);
// The same over the real files.
std::uint64_t available_host_memory();

// The least room (limit - usage) under the cgroup memory limits on the process, at its group and
// every group above it (v2 memory.max - memory.current, v1 memory.limit_in_bytes -
// memory.usage_in_bytes); none when no group has a limit. The usage counts the page cache the
// group is charged for, so this falls as the files the process writes are cached.
std::optional<std::uint64_t> cgroup_memory_room(const ReadText& read);
// Over the real files, the groups' files found at the first call.
std::optional<std::uint64_t> cgroup_memory_room();

// The tightest cgroup memory limit (v2 or v1) on the process, at its group or any group above
// (0: none). The page cache of the files it writes is charged against it, so writers of large
// files keep their dirty pages few (common/write_behind.hpp).
std::uint64_t cgroup_memory_limit(const ReadText& read);
std::uint64_t cgroup_memory_limit();

// The default host budget of a process that holds `resident` bytes with `available` more to be
// had (available_host_memory): what it holds plus 7/8 of the rest (the eighth left is for the
// kernel's own charges under a cgroup: page tables, the page cache of files being read). 0 when
// `available` is 0 (unknown).
std::uint64_t host_budget_of(std::uint64_t available, std::uint64_t resident);
// The default host budget of `count` and the default --memory-limit of `convert`:
// host_budget_of(available_host_memory(), host_resident_bytes()) (0 = unknown).
std::uint64_t default_host_budget();

}  // namespace tristream
