#include "atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tristream/error.hpp"

namespace tristream {

void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(ErrorKind::Input, path + ": cannot create output file: " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    const std::string msg = path + ": " + what + ": " + std::strerror(errno);
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw Error(ErrorKind::Internal, msg);
  };
  try {
    write(f);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fflush(f) != 0 || std::ferror(f)) fail("write failed");
  if (::fsync(::fileno(f)) != 0) fail("fsync failed");
  const int rc = std::fclose(f);
  f = nullptr;
  if (rc != 0) fail("close failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
}

}  // namespace tristream
