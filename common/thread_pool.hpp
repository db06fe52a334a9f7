// common/thread_pool.hpp — the project's one thread pool, the thread-count default and the
// chunk-range helper.
//
// ThreadPool(t) starts t - 1 workers; run(k, fn) calls fn(0) .. fn(k - 1) on the workers and the
// calling thread and returns when all have returned, rethrowing the first exception (the other
// tasks still run). parallel_for(n, grain, fn) cuts [0, n) into pieces of about `grain` items
// (at most a few per thread) and calls fn(lo, hi) for each. for_each_item(count, fn) hands items
// out one at a time and tells fn which task runs it (for per-task scratch). One run at a time per
// pool: run is not reentrant (a task must not call run, parallel_for or for_each_item on its own
// pool; make a pool at the inner call instead) and must be called from one thread at a time.
// for_each_item(threads, count, fn), the free function, makes a pool for one loop.
//
// The constructor fails cleanly: when a worker cannot be created it stops and joins the workers
// already started and throws tristream::Error (ErrorKind::Internal) naming the cause.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/thread_priority.hpp"

namespace tristream {

// The CPUs this process may run on: its affinity mask (taskset, cpusets, an MPI launcher's
// binding), else the hardware's concurrency; at least 1.
unsigned usable_cpus();
// `threads`, or usable_cpus() when 0.
unsigned resolve_threads(unsigned threads);

// Piece x of `pieces` equal pieces of [0, n): [n * x / pieces, n * (x + 1) / pieces).
// Precondition: x < pieces.
struct ChunkRange {
  std::uint64_t lo = 0, hi = 0;
};
inline ChunkRange chunk_range(std::uint64_t n, std::uint64_t pieces, std::uint64_t x) {
  using u128 = unsigned __int128;
  return {static_cast<std::uint64_t>(static_cast<u128>(n) * x / pieces),
          static_cast<std::uint64_t>(static_cast<u128>(n) * (x + 1) / pieces)};
}
// How many pieces of at least `grain` items [0, n) is cut into for `threads` threads: at most
// 4 per thread, at least 1.
inline std::size_t piece_count(std::uint64_t n, std::uint64_t grain, unsigned threads) {
  const std::uint64_t by_grain = n / (grain ? grain : 1) + 1;
  const std::uint64_t cap = 4 * static_cast<std::uint64_t>(threads ? threads : 1);
  return static_cast<std::size_t>(by_grain < cap ? by_grain : cap);
}

class ThreadPool {
 public:
  // Makes a thread running `body` (std::thread by default); tests pass one that fails.
  using Spawn = std::function<std::thread(std::function<void()> body)>;
  // threads: the pool's threads, the caller included (0 = resolve_threads(0)).
  // nice: the workers' nice value (set_thread_nice, common/thread_priority.hpp); none: they keep
  // their creator's. Throws Error when a worker cannot be started (none is left running).
  explicit ThreadPool(unsigned threads, std::optional<int> nice = std::nullopt,
                      const Spawn& spawn = {})
      : ThreadPool(threads, ThreadStart{nice}, spawn) {}
  // start: what each worker sets for itself as it starts (common/thread_priority.hpp).
  ThreadPool(unsigned threads, const ThreadStart& start, const Spawn& spawn = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // fn(0) .. fn(tasks - 1) on the pool; rethrows the first failure after all have finished.
  void run(std::size_t tasks, const std::function<void(std::size_t)>& fn);
  // fn(lo, hi) over pieces of [0, n) of at least `grain` items (piece_count(n, grain, threads)).
  void parallel_for(std::uint64_t n, std::uint64_t grain,
                    const std::function<void(std::uint64_t lo, std::uint64_t hi)>& fn);
  // fn(i, task) for i in [0, count) on min(threads(), count) tasks, each taking the next item not
  // yet taken (task < that number; no two calls with the same task run at once). The first
  // failure stops the handing out of items and is rethrown once all tasks have returned.
  void for_each_item(std::size_t count,
                     const std::function<void(std::size_t item, unsigned task)>& fn);

 private:
  void stop_workers();
  void work();
  void loop();
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t next_ = 0, total_ = 0, done_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

// for_each_item on a pool of min(max(threads, 1), count) threads made for this one loop (the
// caller's thread included). Use it where the loop may itself run inside another pool's task.
void for_each_item(unsigned threads, std::size_t count,
                   const std::function<void(std::size_t item, unsigned task)>& fn);

}  // namespace tristream
