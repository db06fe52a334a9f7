// memory_group.hpp — a memory cgroup of its own for the CLI tests that run `tristream` inside a
// memory limit (cgroup v1 under the process's memory group, or v2 under the root). Needs root
// and a memory controller; ok() says whether the group exists and why() why not, so that tests
// skip with a message.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>

#include "test_util.hpp"

namespace tristream::test {

namespace memory_group_detail {

namespace fs = std::filesystem;

inline std::optional<std::string> read_first_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return std::nullopt;
  char buf[4096];
  const char* got = std::fgets(buf, sizeof buf, f);
  std::fclose(f);
  if (!got) return std::nullopt;
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

inline bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// A memory cgroup of its own (v1 under the process's memory group, v2 under the root), removed
// on destruction. ok() is false (with why()) where none can be made.
class MemoryGroup {
 public:
  MemoryGroup(const std::string& name, std::uint64_t limit) {
    if (::geteuid() != 0) {
      why_ = "not root";
      return;
    }
    const std::string self = read_text("/proc/self/cgroup");
    std::smatch m;
    if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") &&
        std::regex_search(self, m,
                          std::regex("(^|\n)[0-9]+:([^:\n]*,)?memory(,[^:\n]*)?:([^\n]*)"))) {
      v1_ = true;
      dir_ = "/sys/fs/cgroup/memory" + m[4].str() + "/" + name;
    } else if (fs::exists("/sys/fs/cgroup/cgroup.subtree_control") &&
               read_text("/sys/fs/cgroup/cgroup.subtree_control").find("memory") !=
                   std::string::npos) {
      dir_ = "/sys/fs/cgroup/" + name;
    } else {
      why_ = "no cgroup v1 or v2 memory controller";
      return;
    }
    std::error_code ec;
    fs::create_directory(dir_, ec);
    const std::string limit_file = dir_ + (v1_ ? "/memory.limit_in_bytes" : "/memory.max");
    if (ec || !write_file(limit_file, std::to_string(limit))) {
      why_ = "cannot create " + dir_ + " with a limit";
      fs::remove(dir_, ec);
      dir_.clear();
      return;
    }
    if (v1_) write_file(dir_ + "/memory.memsw.limit_in_bytes", std::to_string(limit));
    if (!v1_) write_file(dir_ + "/memory.swap.max", "0");
  }
  ~MemoryGroup() {
    if (dir_.empty()) return;
    for (int tries = 0; tries < 50; ++tries) {  // the last task may take a moment to leave
      if (::rmdir(dir_.c_str()) == 0) return;
      ::usleep(20000);
    }
  }
  bool ok() const { return !dir_.empty(); }
  const std::string& why() const { return why_; }
  // Runs `tristream ARGS` inside the group.
  RunResult run(const std::string& args) const { return run_cli_in(dir_ + "/cgroup.procs", args); }
  // The group's peak usage in bytes; none where the kernel does not keep it (v2 before 5.19).
  std::optional<std::uint64_t> peak() const {
    const auto s = read_first_line(dir_ + (v1_ ? "/memory.max_usage_in_bytes" : "/memory.peak"));
    if (!s || s->empty()) return std::nullopt;
    return std::stoull(*s);
  }

 private:
  static RunResult run_cli_in(const std::string& procs, const std::string& args) {
    const std::string inner = "echo $$ > " + procs + " && exec '" + TRISTREAM_BINARY + "' " + args;
    return run_shell("sh -c " + q(inner));
  }
  bool v1_ = false;
  std::string dir_, why_;
};

}  // namespace memory_group_detail

using memory_group_detail::MemoryGroup;

}  // namespace tristream::test
