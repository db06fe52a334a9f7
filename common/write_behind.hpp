// common/write_behind.hpp — keeps the page cache of a file being written small.
//
// After every `step` bytes written (anywhere in the file) it starts the writeback of the file's
// dirty pages (sync_file_range), and with `drop` it first waits for the writeback started a
// step before and drops the file's clean pages from the page cache (posix_fadvise DONTNEED), so
// about two steps of the file stay cached. Under a cgroup memory limit the dirty pages of a
// large write are charged to the group, and the kernel cannot always write them back fast
// enough to stay under the limit: the OOM killer then ends a process whose own memory is within
// its budget (a conversion that spills runs to disk). Without a limit `drop` is off and only the
// writeback is started early (the cache helps reading the file back). Advisory: the calls'
// failures are ignored (a write error shows at the file's fsync or read). Thread-safe: the
// writers of one file may report their writes together.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace tristream {

class WriteBehind {
 public:
  static constexpr std::uint64_t kStep = std::uint64_t{8} << 20, kMinStep = std::uint64_t{1} << 20;
  // fd: the file written; drop: take written steps out of the page cache.
  WriteBehind(int fd, bool drop, std::uint64_t step) : fd_(fd), drop_(drop), step_(step) {}
  // Inside the cgroup memory limit `cgroup_limit` (cgroup_memory_limit(),
  // common/host_memory_policy.hpp; 0: none): drop, in steps of a 64th of the limit between
  // kMinStep and kStep (a 56 MiB group keeps about 2 MiB of a file cached); else kStep, no drop.
  WriteBehind(int fd, std::uint64_t cgroup_limit)
      : WriteBehind(fd, cgroup_limit > 0,
                    cgroup_limit ? std::clamp(cgroup_limit / 64, kMinStep, kStep) : kStep) {}
  // After a write of `bytes`.
  void wrote(std::uint64_t bytes);
  // With `drop`: waits for the file's writeback and drops its clean pages (the file's last
  // step, which nothing else would drop).
  void finish();

 private:
  int fd_;
  bool drop_;
  std::uint64_t step_;
  std::atomic<std::uint64_t> written_{0};  // bytes reported so far
};

}  // namespace tristream
