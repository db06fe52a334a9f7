// input_file.cpp — InputFile: pread-based reads that report a file changed under the reader.
#include "input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tristream/error.hpp"

namespace tristream::tcsr::detail {

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    throw Error(ErrorKind::Input, path + ": cannot open: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw Error(ErrorKind::Input, path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(ErrorKind::Input, path + ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  mtime_s_ = st.st_mtim.tv_sec;
  mtime_ns_ = st.st_mtim.tv_nsec;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::will_need(std::uint64_t offset, std::uint64_t bytes) const {
  (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                        POSIX_FADV_WILLNEED);
}

void InputFile::read(std::uint64_t offset, std::uint64_t bytes, void* dst) const {
  auto* p = static_cast<unsigned char*>(dst);
  while (bytes > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, 1u << 30));
    const ssize_t got = ::pread(fd_, p, want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int e = errno;
      if (changed()) fail_changed();
      throw Error(ErrorKind::Input, path_ + ": read error at byte " + std::to_string(offset) +
                                        ": " + std::strerror(e));
    }
    if (got == 0) fail_changed();  // the file ends before the size it had at open
    p += got;
    offset += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::uint64_t>(got);
  }
}

bool InputFile::changed() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  return static_cast<std::uint64_t>(st.st_size) != size_ || st.st_mtim.tv_sec != mtime_s_ ||
         st.st_mtim.tv_nsec != mtime_ns_;
}

void InputFile::fail_changed() const {
  throw Error(ErrorKind::Input, path_ + ": changed while being read");
}

}  // namespace tristream::tcsr::detail
