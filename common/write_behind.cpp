// common/write_behind.cpp — WriteBehind (common/write_behind.hpp).
#include "common/write_behind.hpp"

#include <fcntl.h>

namespace tristream {

namespace {

// Waits for the writeback of the whole file (what was started before; with `start`, all dirty
// pages written back first) and drops its clean pages.
void settle_and_drop(int fd, bool start) {
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(
      fd, 0, 0,
      start ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER
            : SYNC_FILE_RANGE_WAIT_BEFORE);
#else
  (void)start;
#endif
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace

void WriteBehind::wrote(std::uint64_t bytes) {
  const std::uint64_t before = written_.fetch_add(bytes, std::memory_order_relaxed);
  if ((before + bytes) / step_ == before / step_) return;  // (no step ended)
  if (drop_) settle_and_drop(fd_, false);  // (the step before, on disk by now or soon)
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);  // this step's
#endif
}

void WriteBehind::finish() {
  if (drop_) settle_and_drop(fd_, true);
}

}  // namespace tristream
