// cuda/wait.hpp — waits on the device that SIGINT and SIGTERM can stop (cuda/ internal; needs the
// CUDA runtime headers).
//
// Contract: wait_event(e) returns once everything before e's record has run, wait_stream(s) once
// everything enqueued on s has run, as cudaEventSynchronize and cudaStreamSynchronize do; both
// throw Error(Interrupted) (common/interrupt.hpp) when the interrupt flag is set before the work
// has finished, and throw through check.hpp when the work failed. An interrupted wait leaves the
// work running: the caller releases its memory through stream-ordered or synchronising frees,
// which wait for it (the device cannot drop work already queued).
//
// Cost: the first query answers work that has finished already; then the wait polls with
// std::this_thread::yield, as the runtime's default (spinning) synchronisation does, for up to
// kSpinSeconds, and after that sleeps kPollSleep between polls (a long wait then ends at most
// about one sleep late and no longer holds a core).
#pragma once

#include <cuda_runtime_api.h>

namespace tristream::cuda {

constexpr double kSpinSeconds = 0.02;
constexpr int kPollSleepMicroseconds = 100;

void wait_event(cudaEvent_t event);
void wait_stream(cudaStream_t stream);

}  // namespace tristream::cuda
