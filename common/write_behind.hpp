// common/write_behind.hpp — keeps the page cache of a file being written within what the
// process's memory group can hold.
//
// Under a cgroup memory limit the page cache of the files a process writes is charged to its
// group, and dirty pages cannot be reclaimed until they are on disk: a conversion whose own
// memory stayed within its budget was killed by the OOM killer while its spill runs were being
// written back. So while the group is *tight* (its room, limit - usage, below a quarter of the
// limit or 16 steps), after every `step` bytes written (anywhere in the file) a writer waits for
// the writeback started a step before, drops the file's clean pages from the page cache
// (posix_fadvise DONTNEED) and starts the writeback of the rest (sync_file_range): about two steps
// of the file stay cached. Once tight, a file stays so. While the group has room (and outside any
// limit) nothing is dropped, so a file read back soon is read from memory, not from the disk: an
// output (Use::Output, fsynced at its end) has its writeback started every step, so that the
// fsync finds little left to write; a scratch file (Use::Scratch, read back and deleted) is left
// to the kernel's writeback, which a file deleted soon may never need. The group's room is read
// at every step's end while it is not tight. Advisory: the calls' failures are ignored (a write
// error shows at the file's fsync or read). Thread-safe: the writers of one file may report their
// writes together.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>

namespace tristream {

class WriteBehind {
 public:
  static constexpr std::uint64_t kStep = std::uint64_t{8} << 20, kMinStep = std::uint64_t{1} << 20;
  enum class Use { Output, Scratch };
  // The room under the group's limit now (none: no limit known).
  using Room = std::function<std::optional<std::uint64_t>()>;

  // fd: the file written, as `use`, inside the cgroup memory limit `cgroup_limit`
  // (cgroup_memory_limit(), common/host_memory_policy.hpp; 0: none); room: the group's room
  // (cgroup_memory_room() when empty). The step is a 64th of the limit between kMinStep and kStep
  // (a 56 MiB group keeps about 2 MiB of a file cached once tight); kStep without a limit.
  WriteBehind(int fd, Use use, std::uint64_t cgroup_limit, Room room = {});
  // Fixed behaviour: `drop` tight from the start (every step dropped), else never tight; the
  // writeback started every step either way.
  WriteBehind(int fd, bool drop, std::uint64_t step);

  // After a write of `bytes`.
  void wrote(std::uint64_t bytes);
  // Once tight: waits for the file's writeback and drops its clean pages (the file's last step,
  // which nothing else would drop).
  void finish();
  // Whether the file is being dropped as it is written.
  bool tight() const { return tight_.load(std::memory_order_relaxed); }

 private:
  int fd_;
  bool start_writeback_;  // every step, while not tight
  std::uint64_t limit_;   // the group's limit (0: none: never tight)
  std::uint64_t step_;
  Room room_;
  std::atomic<bool> tight_{false};
  std::atomic<std::uint64_t> written_{0};  // bytes reported so far
};

}  // namespace tristream
