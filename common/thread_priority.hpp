// common/thread_priority.hpp — Linux nice values (and the idle scheduling class) per thread,
// best effort.
//
// thread_nice() reads the calling thread's nice value and set_thread_nice() sets it (false where
// it is not allowed or not supported: raising a thread above its value needs CAP_SYS_NICE or
// RLIMIT_NICE). PriorityBoost raises the calling thread for its lifetime and restores it after.
// A thread inherits its creator's value, and without the privilege a lowered thread cannot come
// back up: threads meant to run above a base are created before their creator lowers itself.
#pragma once

#include <optional>

namespace tristream {

// What a thread sets for itself as it starts (best effort): the idle scheduling class, then a
// nice value (none: its creator's). Set by the thread itself, so that its creator keeps its own
// class (an idle-class creator would wait for a free core to start each thread).
struct ThreadStart {
  std::optional<int> nice;
  bool idle_class = false;
  // Applies it to the calling thread.
  void apply() const;
  // `step` nice levels below the calling thread (0: its creator's value), idle class or not.
  static ThreadStart below_caller(int step, bool idle_class);
};

// The calling thread's nice value (0 where unsupported).
int thread_nice();
// Sets the calling thread's nice value; false when not allowed or unsupported.
bool set_thread_nice(int value);
// Puts the calling thread in Linux's idle scheduling class (SCHED_IDLE: it runs only on a core
// no other thread wants); threads it starts afterwards inherit the class. False where
// unsupported.
bool set_thread_idle_class();

// Raises the calling thread's priority by `by` (a lower nice value) for its lifetime.
class PriorityBoost {
 public:
  explicit PriorityBoost(int by);
  ~PriorityBoost();
  PriorityBoost(const PriorityBoost&) = delete;
  PriorityBoost& operator=(const PriorityBoost&) = delete;
  // The nice value the thread had before (the base the other threads are set relative to).
  int base() const { return base_; }

 private:
  int base_;
  bool raised_ = false;
};

}  // namespace tristream
