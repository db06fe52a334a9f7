// common/interrupt.hpp — SIGINT and SIGTERM as a flag that long loops poll between steps.
//
// install_interrupt_handlers() makes SIGINT and SIGTERM set the flag (interrupt_requested(),
// interrupt_signal() names the first signal) instead of ending the process; the handler does
// nothing else. Long loops poll the flag every few milliseconds of work and stop: either by
// returning "interrupted" to their caller or through throw_if_interrupted(), an Error of kind
// Interrupted that the CLI maps to 128 + the signal (130 for SIGINT, 143 for SIGTERM). Whoever
// owns temporary files removes them while the error unwinds.
//
// SigintScope installs the handlers for its lifetime (clearing the flag first unless they were
// installed already, so a signal that arrived earlier in the same command is kept) and restores
// the previous dispositions after.
#pragma once

#include <csignal>

namespace tristream {

void install_interrupt_handlers();
// The old name: installs the handlers for SIGINT and SIGTERM alike.
inline void install_sigint_handler() {
  install_interrupt_handlers();
}
bool interrupt_requested();
// The signal that set the flag (SIGINT or SIGTERM), 0 when none.
int interrupt_signal();
void clear_interrupt();
// The exit status of a command stopped by interrupt_signal(): 128 + the signal (130 when none).
int interrupt_exit_status();
// Throws Error(ErrorKind::Interrupted) when the flag is set.
void throw_if_interrupted();
[[noreturn]] void throw_interrupted();

class SigintScope {
 public:
  // on: false leaves the signals alone (the scope does nothing).
  explicit SigintScope(bool on);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  bool active_ = false;
  struct sigaction old_int_;
  struct sigaction old_term_;
};

}  // namespace tristream
