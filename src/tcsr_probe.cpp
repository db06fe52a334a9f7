// tcsr_probe.cpp — tells .tcsr files from edge lists by their first bytes.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "tristream/format.hpp"

namespace tristream::tcsr {

bool has_tcsr_magic(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[sizeof kMagic];
  const std::size_t got = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  return got == sizeof buf && std::memcmp(buf, kMagic, sizeof buf) == 0;
}

}  // namespace tristream::tcsr
