// thread_pool_test.cpp — the one thread pool: every task runs once, failures come back, a pool
// whose thread cannot start fails cleanly; the chunk ranges cover [0, n) exactly.
#include "common/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "tristream/error.hpp"

namespace tristream {
namespace {

TEST(ThreadPool, RunCallsEveryTaskOnce) {
  for (unsigned threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (std::size_t tasks : {0u, 1u, 3u, 100u}) {
      std::vector<std::atomic<int>> hits(tasks);
      pool.run(tasks, [&](std::size_t t) { hits[t]++; });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, ForEachItemCallsEveryItemOnceWithTasksInRange) {
  for (unsigned threads : {1u, 2u, 4u}) {
    for (std::size_t count : {0u, 1u, 3u, 1000u}) {
      std::vector<std::atomic<int>> hits(count);
      const std::size_t tasks = std::min<std::size_t>(threads, count);
      std::vector<std::atomic<int>> busy(tasks ? tasks : 1);
      std::atomic<bool> overlap{false}, out_of_range{false};
      auto fn = [&](std::size_t i, unsigned task) {
        if (task >= tasks) {
          out_of_range = true;
          return;
        }
        if (busy[task]++ != 0) overlap = true;
        hits[i]++;
        busy[task]--;
      };
      ThreadPool pool(threads);
      pool.for_each_item(count, fn);
      for (auto& h : hits) EXPECT_EQ(h.exchange(0), 1);
      for_each_item(threads, count, fn);
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
      EXPECT_FALSE(overlap.load());
      EXPECT_FALSE(out_of_range.load());
    }
  }
}

TEST(ThreadPool, ForEachItemRethrowsAndStopsHandingOut) {
  for (unsigned threads : {1u, 2u, 4u}) {
    std::atomic<int> calls{0};
    EXPECT_THROW(for_each_item(threads, 1000,
                               [&](std::size_t i, unsigned) {
                                 calls++;
                                 if (i == 0) throw std::runtime_error("item 0");
                               }),
                 std::runtime_error);
    if (threads == 1) {
      EXPECT_EQ(calls.load(), 1);  // nothing after the failure on one thread
    }
  }
}

TEST(ThreadPool, ForEachItemInsideAnotherPoolsTask) {
  ThreadPool outer(2);
  std::atomic<int> sum{0};
  outer.run(4, [&](std::size_t) {
    for_each_item(3, 10, [&](std::size_t i, unsigned) { sum += static_cast<int>(i); });
  });
  EXPECT_EQ(sum.load(), 4 * 45);
}

TEST(ThreadPool, ParallelForCoversTheRangeOnce) {
  ThreadPool pool(3);
  for (std::uint64_t n : {0ull, 1ull, 7ull, 100000ull}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, 1000, [&](std::uint64_t lo, std::uint64_t hi) {
      EXPECT_LT(lo, hi);
      for (std::uint64_t i = lo; i < hi; ++i) hits[i]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, FirstFailureIsRethrownAfterAllTasks) {
  ThreadPool pool(4);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run(50,
                        [&](std::size_t t) {
                          ++ran;
                          if (t == 7) throw std::runtime_error("task 7");
                        }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  // the pool still works after a failure
  std::atomic<int> again{0};
  pool.run(10, [&](std::size_t) { ++again; });
  EXPECT_EQ(again.load(), 10);
}

TEST(ThreadPool, ThreadThatCannotStartFailsCleanly) {
  std::atomic<int> started{0}, finished{0};
  auto spawn = [&](std::function<void()> body) {
    if (started == 2)
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    ++started;
    return std::thread([&finished, body] {
      body();
      ++finished;
    });
  };
  EXPECT_THROW(ThreadPool(5, std::nullopt, spawn), Error);
  // the two workers that started were stopped and joined before the throw
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(finished.load(), 2);
}

TEST(ChunkRange, PiecesTileTheRange) {
  for (std::uint64_t n : {0ull, 1ull, 5ull, 1000003ull})
    for (std::uint64_t pieces : {1ull, 2ull, 7ull, 64ull}) {
      std::uint64_t at = 0;
      for (std::uint64_t x = 0; x < pieces; ++x) {
        const ChunkRange r = chunk_range(n, pieces, x);
        EXPECT_EQ(r.lo, at);
        EXPECT_LE(r.lo, r.hi);
        at = r.hi;
      }
      EXPECT_EQ(at, n);
    }
}

TEST(ChunkRange, PieceCountIsAtMostFourPerThread) {
  EXPECT_EQ(piece_count(0, 65536, 4), 1u);
  EXPECT_EQ(piece_count(65536 * 3, 65536, 4), 4u);
  EXPECT_EQ(piece_count(1ull << 40, 65536, 4), 16u);
}

TEST(ResolveThreads, ZeroMeansTheMachine) {
  EXPECT_EQ(resolve_threads(3), 3u);
  EXPECT_GE(resolve_threads(0), 1u);
}

}  // namespace
}  // namespace tristream
