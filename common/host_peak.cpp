// common/host_peak.cpp — VmRSS and VmHWM of /proc/self/status (common/host_peak.hpp).
#include "common/host_peak.hpp"

#include <fcntl.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fstream>
#include <sstream>

namespace tristream {

namespace {

std::string self_status() {
  std::ifstream f("/proc/self/status");
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::uint64_t parse_status_bytes(const std::string& status, const std::string& key) {
  std::istringstream in(status);
  std::string line;
  const std::string want = key + ":";
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string k, unit;
    std::uint64_t value = 0;
    if (!(ls >> k) || k != want) continue;
    if (!(ls >> value >> unit) || unit != "kB") return 0;
    return value * 1024;
  }
  return 0;
}

std::uint64_t host_resident_bytes() {
  return parse_status_bytes(self_status(), "VmRSS");
}

std::uint64_t host_peak_bytes() {
  return parse_status_bytes(self_status(), "VmHWM");
}

bool reset_host_peak() {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

void release_freed_memory_promptly() {
#if defined(__GLIBC__)
  (void)::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  (void)::mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

}  // namespace tristream
