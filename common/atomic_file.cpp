// common/atomic_file.cpp — exclusive, unpredictable temporaries renamed over their targets.
#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "tristream/error.hpp"

namespace tristream {

namespace {

// 12 characters from [0-9a-z] drawn from the system's random source: 62 bits that another user
// cannot guess, so planting a file at the name in advance is hopeless.
std::string random_suffix() {
  static const char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::random_device rd;
  std::string s(12, '0');
  for (auto& c : s) c = kAlphabet[rd() % 36];
  return s;
}

}  // namespace

TempFile create_temp_beside(const std::string& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    TempFile t;
    t.path = path + ".tmp." + random_suffix();
    t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (t.fd >= 0) return t;
    const int e = errno;
    if (e == EEXIST) continue;  // a name taken by chance (or planted): draw another
    const bool user = e == ENOENT || e == EACCES || e == ENOTDIR || e == EROFS || e == EPERM;
    throw Error(user ? ErrorKind::Input : ErrorKind::Internal,
                path + ": cannot create the output file: " + std::strerror(e));
  }
  throw Error(ErrorKind::Internal, path + ": cannot create a temporary file beside it");
}

void probe_output_dir(const std::string& path) {
  const TempFile probe = create_temp_beside(path);
  ::close(probe.fd);
  ::unlink(probe.path.c_str());
}

void check_output_path(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs) {
  if (path.empty()) throw Error(ErrorKind::Usage, option + ": empty output path");
  if (path == "-") return;
  struct stat out {};
  const bool exists = ::stat(path.c_str(), &out) == 0;
  if ((exists && S_ISDIR(out.st_mode)) || path.back() == '/')
    throw Error(ErrorKind::Usage,
                option + ": '" + path + "' is a directory; give a file name for the output");
  if (!exists) return;
  for (const auto& in : inputs) {
    struct stat st {};
    if (in == "-" || ::stat(in.c_str(), &st) != 0) continue;
    if (st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      throw Error(ErrorKind::Usage, option + ": '" + path + "' is the input file '" + in +
                                        "'; writing it would destroy the input");
  }
}

void check_directory(const std::string& option, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw Error(ErrorKind::Usage, option + ": '" + dir + "': " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    throw Error(ErrorKind::Usage, option + ": '" + dir + "' is not a directory");
}

AtomicOutput::AtomicOutput(const std::string& option, const std::string& path,
                           const std::vector<std::string>& inputs)
    : path_(path) {
  check_output_path(option, path, inputs);
  if (to_stdout()) return;
  TempFile t = create_temp_beside(path);
  file_ = ::fdopen(t.fd, "wb");
  if (!file_) {
    const int e = errno;
    ::close(t.fd);
    ::unlink(t.path.c_str());
    throw Error(ErrorKind::Internal, path + ": cannot open the output file: " + std::strerror(e));
  }
  tmp_ = t.path;
}

AtomicOutput::~AtomicOutput() {
  if (file_) std::fclose(file_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicOutput::commit(const std::function<void(std::FILE*)>& write) {
  std::FILE* f = to_stdout() ? stdout : file_;
  TS_CHECK(f != nullptr, "output committed twice");
  auto fail = [&](const std::string& what) {
    const std::string msg = path_ + ": " + what + ": " + std::strerror(errno);
    if (file_) std::fclose(file_);
    file_ = nullptr;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    throw Error(ErrorKind::Internal, msg);
  };
  write(f);
  if (std::fflush(f) != 0 || std::ferror(f)) fail("write failed");
  if (to_stdout()) return;
  if (::fsync(::fileno(f)) != 0) fail("fsync failed");
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail("close failed");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename failed");
  tmp_.clear();
}

void rename_over_and_sync_dir(const std::string& tmp, const std::string& path) {
  auto fail = [](const std::string& what, const std::string& where) {
    const int e = errno;
    throw Error(ErrorKind::Internal, where + ": " + what + ": " + std::strerror(e));
  };
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename " + tmp + " to", path);
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("cannot open directory to fsync it", dir);
  const int rc = ::fsync(dfd);
  const int saved = errno;
  ::close(dfd);
  errno = saved;
  if (rc != 0) fail("fsync of the directory failed", dir);
}

void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  AtomicOutput("output", path).commit(write);
}

}  // namespace tristream
