// common/write_behind.cpp — WriteBehind (common/write_behind.hpp).
#include "common/write_behind.hpp"

#include <fcntl.h>

#include "common/host_memory_policy.hpp"

namespace tristream {

namespace {

// Starts the writeback of the file's dirty pages.
void start_writeback(int fd) {
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
}

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

WriteBehind::WriteBehind(int fd, Use use, std::uint64_t cgroup_limit, Room room)
    : fd_(fd),
      start_writeback_(use == Use::Output),
      limit_(cgroup_limit),
      step_(cgroup_limit ? std::clamp(cgroup_limit / 64, kMinStep, kStep) : kStep),
      room_(room ? std::move(room) : Room([] { return cgroup_memory_room(); })) {}

WriteBehind::WriteBehind(int fd, bool drop, std::uint64_t step)
    : fd_(fd), start_writeback_(true), limit_(0), step_(step) {
  tight_ = drop;
}

void WriteBehind::wrote(std::uint64_t bytes) {
  const std::uint64_t before = written_.fetch_add(bytes, std::memory_order_relaxed);
  if ((before + bytes) / step_ == before / step_) return;  // (no step ended)
  // 1. Is the group tight now? (a quarter of its limit, or 16 steps, left)
  if (!tight() && limit_) {
    const std::optional<std::uint64_t> room = room_();
    if (room && *room < std::max(limit_ / 4, 16 * step_))
      tight_.store(true, std::memory_order_relaxed);
  }
  // 2. Tight: the step before leaves the cache (on disk by now or soon), this one's writeback
  //    starts. Else only an output's writeback starts.
  if (tight()) {
    settle_and_drop(fd_, false);
    start_writeback(fd_);
  } else if (start_writeback_) {
    start_writeback(fd_);
  }
}

void WriteBehind::finish() {
  if (tight()) settle_and_drop(fd_, true);
}

}  // namespace tristream
