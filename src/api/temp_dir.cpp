// temp_dir.cpp — TempDir: mkdtemp on creation, recursive removal on destruction.
#include "api/temp_dir.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/atomic_file.hpp"
#include "tristream/error.hpp"

namespace tristream::api {

TempDir::TempDir(const std::string& base) {
  // 1. The base directory must exist: a clear message naming where it came from.
  std::string dir = base;
  if (dir.empty()) {
    const char* env = std::getenv("TMPDIR");
    dir = env && *env ? env : "/tmp";
    check_directory(env && *env ? "$TMPDIR" : "/tmp", dir);
  } else {
    check_directory("--tmp-dir", dir);
  }
  // 2. A private directory in it.
  const std::string templ = dir + "/tristream-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw Error(ErrorKind::Input,
                dir + ": cannot create a temporary directory: " + std::strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace tristream::api
