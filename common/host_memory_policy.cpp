// common/host_memory_policy.cpp — MemAvailable and cgroup room (common/host_memory_policy.hpp).
#include "common/host_memory_policy.hpp"

#include <algorithm>
#include <fstream>

#include <sstream>
#include "common/host_peak.hpp"

namespace tristream {

namespace {

// A non-negative decimal (the whole first word of a cgroup file); none for "max" or junk.
std::optional<std::uint64_t> parse_u64(const std::string& text) {
  std::istringstream in(text);
  std::string v;
  if (!(in >> v) || v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != v.npos)
    return std::nullopt;
  return std::stoull(v);
}

// A group's limit from its file's text: none for "max", junk, or v1's value near 2^63.
std::optional<std::uint64_t> limit_in(const std::optional<std::string>& text) {
  const auto limit = text ? parse_u64(*text) : std::nullopt;
  if (!limit || *limit >= (std::uint64_t{1} << 62)) return std::nullopt;
  return limit;
}

// A memory group's limit and usage files.
struct GroupFiles {
  std::string limit, usage;
};

// The files of the process's memory groups, from its own group up to the root: cgroup v2
// (memory.max, memory.current), then v1 (memory.limit_in_bytes, memory.usage_in_bytes).
std::vector<GroupFiles> memory_group_files(const ReadText& read) {
  std::vector<GroupFiles> out;
  const CgroupPaths groups = parse_self_cgroup(read("/proc/self/cgroup").value_or(""));
  if (groups.v2)
    for (const std::string& dir : cgroup_levels("/sys/fs/cgroup", *groups.v2))
      out.push_back({dir + "/memory.max", dir + "/memory.current"});
  if (groups.v1)
    for (const std::string& dir : cgroup_levels("/sys/fs/cgroup/memory", *groups.v1))
      out.push_back({dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes"});
  return out;
}

// The least room under the groups' limits; none when no group has one.
std::optional<std::uint64_t> least_room(const ReadText& read,
                                        const std::vector<GroupFiles>& groups) {
  std::optional<std::uint64_t> least;
  for (const GroupFiles& g : groups) {
    const auto limit = limit_in(read(g.limit));
    if (!limit) continue;
    std::uint64_t usage = 0;
    if (const auto usage_text = read(g.usage)) usage = parse_u64(*usage_text).value_or(0);
    const std::uint64_t room = *limit > usage ? *limit - usage : 0;
    if (!least || room < *least) least = room;
  }
  return least;
}

}  // namespace

std::uint64_t parse_mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    std::uint64_t kb = 0;
    if (ls >> key >> kb && key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

CgroupPaths parse_self_cgroup(const std::string& text) {
  CgroupPaths out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) out.v2 = line.substr(3);
    const auto colon = line.find(':');
    const auto colon2 = colon == std::string::npos ? colon : line.find(':', colon + 1);
    if (colon2 == std::string::npos) continue;
    const std::string controllers = "," + line.substr(colon + 1, colon2 - colon - 1) + ",";
    if (controllers.find(",memory,") != std::string::npos) out.v1 = line.substr(colon2 + 1);
  }
  return out;
}

std::vector<std::string> cgroup_levels(const std::string& mount, const std::string& path) {
  std::vector<std::string> out;
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  for (;;) {
    out.push_back(mount + p);
    if (p.empty()) break;
    const auto slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
  return out;
}

std::optional<std::uint64_t> cgroup_memory_room(const ReadText& read) {
  return least_room(read, memory_group_files(read));
}

std::uint64_t available_host_memory(const ReadText& read) {
  // (a room of 0 under a limit is known; MemAvailable's 0 means unknown)
  std::optional<std::uint64_t> avail;
  if (const auto meminfo = read("/proc/meminfo"))
    if (const std::uint64_t m = parse_mem_available(*meminfo)) avail = m;
  const std::optional<std::uint64_t> room = cgroup_memory_room(read);
  if (room && (!avail || *room < *avail)) avail = room;
  return avail.value_or(0);
}

namespace {
std::optional<std::string> read_real(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

std::uint64_t available_host_memory() {
  return available_host_memory(read_real);
}

std::uint64_t cgroup_memory_limit(const ReadText& read) {
  std::uint64_t tightest = 0;
  for (const GroupFiles& g : memory_group_files(read))
    if (const auto limit = limit_in(read(g.limit)); limit && (!tightest || *limit < tightest))
      tightest = std::max<std::uint64_t>(*limit, 1);
  return tightest;
}

std::optional<std::uint64_t> cgroup_memory_room() {
  // (a process's group stays: its files are found once, read at every call)
  static const std::vector<GroupFiles> groups = memory_group_files(read_real);
  return least_room(read_real, groups);
}

std::uint64_t cgroup_memory_limit() {
  static const std::uint64_t limit = cgroup_memory_limit(read_real);  // (a process's group stays)
  return limit;
}

std::uint64_t host_budget_of(std::uint64_t available, std::uint64_t resident) {
  if (!available) return 0;
  return resident + available / 8 * 7;
}

std::uint64_t default_host_budget() {
  const std::uint64_t available = available_host_memory();
  return host_budget_of(available, host_resident_bytes());
}

}  // namespace tristream
