// input_file.hpp — a read-only file read with pread (no mapping), so that a file truncated or
// rewritten by another process while it is read yields an Error(Input) naming it, never SIGBUS.
// Internal to formats/.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace tristream::tcsr::detail {

class InputFile {
 public:
  // Opens `path` read-only; it must be a regular file. Errors: Error(Input) "PATH: cannot open:
  // ...", "PATH: not a regular file".
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  // The size at open; every read is checked against it.
  std::uint64_t size() const { return size_; }

  // Reads exactly `bytes` bytes at `offset` into dst. Thread-safe (pread). Precondition: the range
  // lies inside size(). A short read means the file shrank: Error(Input) "PATH: changed while
  // being read"; another read failure is Error(Input) "PATH: read error at byte B: ...".
  void read(std::uint64_t offset, std::uint64_t bytes, void* dst) const;

  // Asks the kernel to read [offset, offset + bytes) into the page cache in the background
  // (posix_fadvise WILLNEED); returns at once, ignores failures (only a hint).
  void will_need(std::uint64_t offset, std::uint64_t bytes) const;

  // True when the file's size or modification time differs from what they were at open: the
  // file was rewritten in place, so damage found in it is reported as a change, not as damage.
  bool changed() const;
  // Throws Error(Input) "PATH: changed while being read".
  [[noreturn]] void fail_changed() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::int64_t mtime_s_ = 0, mtime_ns_ = 0;
};

}  // namespace tristream::tcsr::detail
