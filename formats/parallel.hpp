// parallel.hpp — a minimal parallel loop on std::threads for formats/ (internal).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tristream::tcsr::detail {

inline unsigned resolve_threads(unsigned threads) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  return std::max(1u, threads);
}

// Calls f(i, worker) for i in [0, count) on min(threads, count) workers (worker < that number).
// The first exception stops the loop (items not yet started are skipped) and is rethrown.
template <class F>
void parallel_for(std::size_t count, unsigned threads, F&& f) {
  const unsigned workers =
      static_cast<unsigned>(std::min<std::size_t>(resolve_threads(threads), count));
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) f(i, 0u);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto body = [&](unsigned worker) {
    try {
      for (std::size_t i; !stop.load(std::memory_order_relaxed) && (i = next++) < count;)
        f(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  try {
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(body, w);
  } catch (...) {
    stop = true;
    for (auto& t : pool) t.join();
    throw;
  }
  body(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace tristream::tcsr::detail
