// common/interrupt.hpp — SIGINT as a flag that long loops poll between steps.
//
// install_sigint_handler() makes SIGINT set the flag (interrupt_requested()) instead of ending
// the process; SigintScope does that for its lifetime (clearing the flag first) and restores the
// previous disposition after.
#pragma once

#include <csignal>

namespace tristream {

void install_sigint_handler();
bool interrupt_requested();
void clear_interrupt();

class SigintScope {
 public:
  // on: false leaves SIGINT alone (the scope does nothing).
  explicit SigintScope(bool on);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  bool active_ = false;
  struct sigaction old_;
};

}  // namespace tristream
