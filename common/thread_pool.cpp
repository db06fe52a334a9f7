// common/thread_pool.cpp — the thread pool (common/thread_pool.hpp).
#include "common/thread_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <system_error>
#include <thread>

#include "common/thread_priority.hpp"
#include "tristream/error.hpp"

namespace tristream {

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}

unsigned resolve_threads(unsigned threads) {
  return threads ? threads : usable_cpus();
}

ThreadPool::ThreadPool(unsigned threads, const ThreadStart& start, const Spawn& spawn) {
  threads = resolve_threads(threads);
  workers_.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) {
    std::function<void()> body = [this, start] {
      start.apply();
      loop();
    };
    try {
      workers_.push_back(spawn ? spawn(std::move(body)) : std::thread(std::move(body)));
    } catch (const std::exception& e) {
      stop_workers();
      throw Error(ErrorKind::Internal, "cannot start a worker thread (" + std::to_string(t) +
                                           " of " + std::to_string(threads - 1) + "): " + e.what());
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  workers_.clear();
}

void ThreadPool::run(std::size_t tasks, const std::function<void(std::size_t)>& fn) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1) {
    for (std::size_t t = 0; t < tasks; ++t) fn(t);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    next_ = 0;
    total_ = tasks;
    done_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  cv_.notify_all();
  work();
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return done_ == total_; });
  fn_ = nullptr;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::parallel_for(std::uint64_t n, std::uint64_t grain,
                              const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
  if (n == 0) return;
  const std::size_t pieces = piece_count(n, grain, threads());
  run(pieces, [&](std::size_t x) {
    const ChunkRange r = chunk_range(n, pieces, x);
    if (r.lo < r.hi) fn(r.lo, r.hi);
  });
}

void ThreadPool::for_each_item(std::size_t count,
                               const std::function<void(std::size_t, unsigned)>& fn) {
  if (count == 0) return;
  const std::size_t tasks = std::min<std::size_t>(threads(), count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  run(tasks, [&](std::size_t task) {
    try {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;
        const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= count) return;
        fn(i, static_cast<unsigned>(task));
      }
    } catch (...) {
      failed = true;
      throw;
    }
  });
}

void for_each_item(unsigned threads, std::size_t count,
                   const std::function<void(std::size_t, unsigned)>& fn) {
  if (count == 0) return;
  const std::size_t t = std::min<std::size_t>(std::max(threads, 1u), count);
  if (t == 1) {
    for (std::size_t i = 0; i < count; ++i) fn(i, 0u);
    return;
  }
  ThreadPool pool(static_cast<unsigned>(t));
  pool.for_each_item(count, fn);
}

void ThreadPool::work() {
  for (;;) {
    std::size_t t;
    const std::function<void(std::size_t)>* fn;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!fn_ || next_ >= total_) return;
      t = next_++;
      fn = fn_;
    }
    try {
      (*fn)(t);
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (++done_ == total_) done_cv_.notify_all();
  }
}

void ThreadPool::loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || (generation_ != seen && fn_ && next_ < total_); });
      if (stop_) return;
      seen = generation_;
    }
    work();
  }
}

}  // namespace tristream
