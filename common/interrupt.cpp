// common/interrupt.cpp — the SIGINT/SIGTERM flag (common/interrupt.hpp).
#include "common/interrupt.hpp"

#include <atomic>
#include <cstring>

#include "tristream/error.hpp"

namespace tristream {

namespace {
// 0, or the first signal received. A lock-free atomic is async-signal-safe; sig_atomic_t alone
// would not order the store for the counting threads that poll it.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the flag must be async-signal-safe");

extern "C" void tristream_on_interrupt(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig, std::memory_order_relaxed);
}

bool handler_installed(int sig) {
  struct sigaction cur;
  std::memset(&cur, 0, sizeof cur);
  sigaction(sig, nullptr, &cur);
  return !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == tristream_on_interrupt;
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = tristream_on_interrupt;
  sa.sa_flags = SA_RESTART;  // reads and writes carry on; the loops around them poll the flag
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() {
  return g_signal.load(std::memory_order_relaxed) != 0;
}

int interrupt_signal() {
  return g_signal.load(std::memory_order_relaxed);
}

void clear_interrupt() {
  g_signal.store(0, std::memory_order_relaxed);
}

int interrupt_exit_status() {
  const int sig = interrupt_signal();
  return 128 + (sig ? sig : SIGINT);
}

void throw_interrupted() {
  throw Error(ErrorKind::Interrupted,
              interrupt_signal() == SIGTERM ? "terminated (SIGTERM)" : "interrupted");
}

void throw_if_interrupted() {
  if (interrupt_requested()) throw_interrupted();
}

SigintScope::SigintScope(bool on) : active_(on) {
  std::memset(&old_int_, 0, sizeof old_int_);
  std::memset(&old_term_, 0, sizeof old_term_);
  if (!active_) return;
  if (!handler_installed(SIGINT)) clear_interrupt();
  sigaction(SIGINT, nullptr, &old_int_);
  sigaction(SIGTERM, nullptr, &old_term_);
  install_interrupt_handlers();
}

SigintScope::~SigintScope() {
  if (!active_) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

}  // namespace tristream
