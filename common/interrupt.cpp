// common/interrupt.cpp — the SIGINT flag (common/interrupt.hpp).
#include "common/interrupt.hpp"

#include <cstring>

namespace tristream {

namespace {
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void tristream_on_sigint(int) {
  g_interrupted = 1;
}
}  // namespace

void install_sigint_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = tristream_on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

bool interrupt_requested() {
  return g_interrupted != 0;
}

void clear_interrupt() {
  g_interrupted = 0;
}

SigintScope::SigintScope(bool on) : active_(on) {
  std::memset(&old_, 0, sizeof old_);
  if (!active_) return;
  clear_interrupt();
  sigaction(SIGINT, nullptr, &old_);
  install_sigint_handler();
}

SigintScope::~SigintScope() {
  if (active_) sigaction(SIGINT, &old_, nullptr);
}

}  // namespace tristream
