// cuda/wait.cpp — wait_event and wait_stream (cuda/wait.hpp): polled, interruptible waits.
#include "wait.hpp"

#include <chrono>
#include <thread>

#include "check.hpp"
#include "common/interrupt.hpp"

namespace tristream::cuda {
namespace {

// "Not ready" is a status, not a failure: it must not linger as the runtime's last error, where
// a later TS_CUDA_CHECK_LAUNCH (cudaGetLastError) would report it. Any other last error stays.
void forget_not_ready() {
  if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
}

// Polls query() (cudaEventQuery or cudaStreamQuery of one object) until it is not
// cudaErrorNotReady, checking the interrupt flag between polls.
template <class Query>
void poll(Query query, const char* what) {
  cudaError_t st = query();
  if (st == cudaSuccess) return;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  bool spinning = true;
  while (st == cudaErrorNotReady) {
    if (interrupt_requested()) {
      forget_not_ready();
      throw_interrupted();
    }
    if (spinning) {
      std::this_thread::yield();
      spinning = std::chrono::duration<double>(Clock::now() - start).count() < kSpinSeconds;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(kPollSleepMicroseconds));
    }
    st = query();
  }
  forget_not_ready();
  if (st != cudaSuccess) throw_cuda(st, what, __FILE__, __LINE__);
}

}  // namespace

void wait_event(cudaEvent_t event) {
  poll([event] { return cudaEventQuery(event); }, "cudaEventQuery (wait_event)");
}

void wait_stream(cudaStream_t stream) {
  poll([stream] { return cudaStreamQuery(stream); }, "cudaStreamQuery (wait_stream)");
}

}  // namespace tristream::cuda
