// fuzz_support.cpp — memfd-backed input files and a scratch directory for the fuzz targets.
#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace tristream::fuzz {

namespace {
int fds[4] = {-1, -1, -1, -1};
}  // namespace

std::string memory_file(int slot, const std::uint8_t* data, std::size_t size) {
  int& fd = fds[slot & 3];
  if (fd < 0) fd = ::memfd_create("tristream-fuzz", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t w = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (w <= 0) std::abort();
    done += static_cast<std::size_t>(w);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

void truncate_memory_file(int slot, std::size_t size) {
  if (::ftruncate(fds[slot & 3], static_cast<off_t>(size)) != 0) std::abort();
}

bool verbose() {
  static const bool on = std::getenv("FUZZ_VERBOSE") != nullptr;
  return on;
}

const std::string& scratch_dir() {
  // Never destroyed: the exit handler below runs after static destructors would.
  static const std::string& dir = *new std::string([] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tristream-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return pattern;
  }());
  return dir;
}

}  // namespace tristream::fuzz
