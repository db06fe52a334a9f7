// parse_order.cpp — reader thread -> workers -> caller, in input order (parse_order.hpp).
#include "parse_order.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/interrupt.hpp"
#include "progress.hpp"

namespace tristream::conv {
namespace {

using Job = std::function<void(Block&)>;

// The state the three sides share, under one mutex; each side waits on a condition of its own, so
// that a job read wakes one worker, not every thread.
struct Queue {
  std::mutex mu;
  std::condition_variable room;                    // the reader: the window has room (or abort)
  std::condition_variable work;                    // the workers: a job, the reader done (or abort)
  std::condition_variable ready;                   // the caller: a block done, the reader done
  std::deque<std::pair<std::uint64_t, Job>> jobs;  // produced, not yet started
  std::map<std::uint64_t, std::unique_ptr<Block>> done;  // finished, not yet taken
  std::uint64_t produced = 0, consumed = 0;
  bool reader_done = false, abort = false;
  std::exception_ptr reader_error;
};

// The reader: keeps at most `window` jobs between produced and taken.
// With the stage clock on, reports how long the reading took and how much of it the reader
// waited for room (the workers or the caller behind the input).
void read_jobs(Producer& producer, Queue& q, std::size_t window) {
  const double t0 = now_seconds();
  double waited = 0;
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(q.mu);
        if (q.produced - q.consumed >= window) {
          const double w0 = now_seconds();
          q.room.wait(lk, [&] { return q.abort || q.produced - q.consumed < window; });
          waited += now_seconds() - w0;
        }
        if (q.abort) break;
      }
      auto job = producer.next();
      std::lock_guard<std::mutex> lk(q.mu);
      if (!job) {
        const double s = now_seconds() - t0;
        stage_detail("the reader: " + std::to_string(q.produced) + " jobs in " + std::to_string(s) +
                     " s, " + std::to_string(waited) +
                     " s of it waiting for room in the window of " + std::to_string(window));
        break;
      }
      q.jobs.emplace_back(q.produced++, std::move(job));
      q.work.notify_one();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lk(q.mu);
    q.reader_error = std::current_exception();
  }
  std::lock_guard<std::mutex> lk(q.mu);
  q.reader_done = true;
  q.work.notify_all();
  q.ready.notify_all();
}

// A worker: runs jobs until none are left or the parse is aborted.
void run_jobs(Queue& q, const std::atomic<bool>& sort_blocks, const Job& parsed) {
  for (;;) {
    std::pair<std::uint64_t, Job> job;
    {
      std::unique_lock<std::mutex> lk(q.mu);
      q.work.wait(lk, [&] { return q.abort || !q.jobs.empty() || q.reader_done; });
      if (q.abort || q.jobs.empty()) return;
      job = std::move(q.jobs.front());
      q.jobs.pop_front();
    }
    auto b = std::make_unique<Block>();
    try {
      job.second(*b);
      if (parsed && !b->error) parsed(*b);
      // The flag read once: a block marked sorted must have been sorted (the spill trusts it).
      const bool sort = sort_blocks.load(std::memory_order_relaxed) && !b->error;
      if (sort) sort_block(*b);
      b->sorted = sort;
    } catch (...) {
      b->failure = std::current_exception();
    }
    // The job's input (a read buffer) goes back now, while it is warm, not when the next job
    // comes.
    job.second = nullptr;
    std::lock_guard<std::mutex> lk(q.mu);
    q.done.emplace(job.first, std::move(b));
    q.ready.notify_one();
  }
}

}  // namespace

std::exception_ptr parse_in_order(Producer& producer, unsigned threads,
                                  const std::atomic<bool>& sort_blocks,
                                  const std::function<void(Block&)>& parsed,
                                  const std::function<void(Block&)>& take) {
  // 1. Start the reader and the workers.
  Queue q;
  const std::size_t window = parse_window(threads);
  std::thread reader([&] { read_jobs(producer, q, window); });
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w)
    workers.emplace_back([&] { run_jobs(q, sort_blocks, parsed); });
  auto stop = [&] {
    {
      std::lock_guard<std::mutex> lk(q.mu);
      q.abort = true;
      q.room.notify_all();
      q.work.notify_all();
    }
    reader.join();
    for (auto& t : workers) t.join();
  };
  // 2. Take the blocks in input order until the reader is done and all its jobs are taken.
  try {
    for (std::uint64_t s = 0;; ++s) {
      std::unique_ptr<Block> b;
      {
        std::unique_lock<std::mutex> lk(q.mu);
        // Waits in short steps so that SIGINT/SIGTERM stops the parse at once.
        while (!q.ready.wait_for(lk, std::chrono::milliseconds(20), [&] {
          return q.done.count(s) || (q.reader_done && s == q.produced);
        })) {
          if (interrupt_requested()) {
            lk.unlock();
            throw_interrupted();
          }
        }
        if (!q.done.count(s)) break;
        b = std::move(q.done[s]);
        q.done.erase(s);
        q.consumed = s + 1;
        q.room.notify_one();
      }
      take(*b);
    }
  } catch (...) {
    stop();
    throw;
  }
  // 3. Stop the threads; the reader's failure goes to the caller.
  stop();
  return q.reader_error;
}

}  // namespace tristream::conv
