// common/thread_priority.cpp — per-thread nice values (common/thread_priority.hpp).
#include "common/thread_priority.hpp"

#include <cerrno>

#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tristream {

int thread_nice() {
#ifdef __linux__
  errno = 0;
  const int v = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  return errno ? 0 : v;
#else
  return 0;
#endif
}

bool set_thread_nice(int value) {
#ifdef __linux__
  return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), value) == 0;
#else
  (void)value;
  return false;
#endif
}

ThreadStart ThreadStart::below_caller(int step, bool idle_class) {
  return ThreadStart{step ? std::optional<int>(thread_nice() + step) : std::nullopt, idle_class};
}

void ThreadStart::apply() const {
  if (idle_class) (void)set_thread_idle_class();
  if (nice) (void)set_thread_nice(*nice);
}

bool set_thread_idle_class() {
#ifdef __linux__
  sched_param p{};
  p.sched_priority = 0;
  return ::sched_setscheduler(0, SCHED_IDLE, &p) == 0;  // 0: the calling thread
#else
  return false;
#endif
}

PriorityBoost::PriorityBoost(int by) : base_(thread_nice()) {
  raised_ = set_thread_nice(base_ - by);
}

PriorityBoost::~PriorityBoost() {
  if (raised_) (void)set_thread_nice(base_);
}

}  // namespace tristream
