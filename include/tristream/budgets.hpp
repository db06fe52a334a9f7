// tristream/budgets.hpp — what a command may use (device bytes, host bytes, threads), decided
// once per command from the flags and the machine, and where each figure came from.
//
// resolve_budgets() is the only place that reads the machine for them: the backend's free device
// memory (less a reserve), the host-memory policy (common/host_memory_policy.hpp: MemAvailable and
// cgroup room: default_host_budget) and the hardware's threads. Everything below (the planner's
// options, the driver) takes the Budgets value it is given and never re-derives a figure.
#pragma once

#include <cstdint>
#include <string>

namespace tristream {

class StreamingBackend;

struct Budgets {
  std::uint64_t device_bytes = 0;  // 0 = no device limit (the CPU backend, or unknown)
  std::uint64_t host_bytes = 0;    // 0 = unlimited (unknown)
  unsigned threads = 1;            // host threads (>= 1)
  // Where each figure came from, for messages: "--gpu-memory", "free device memory less a
  // reserve", "--host-memory", ...
  std::string device_from, host_from, threads_from;
};

// The flags a command was given (0 = not given: ask the machine).
struct BudgetFlags {
  std::uint64_t gpu_memory = 0;   // --gpu-memory
  std::uint64_t host_memory = 0;  // --host-memory
  unsigned threads = 0;           // --threads
};

// The device budget of `free` bytes of free device memory: free less a reserve of
// max(512 MiB, free / 16) (half of it when that leaves less than a reserve).
std::uint64_t device_budget_of_free(std::uint64_t free);

// Budgets from the flags and the machine. backend may be null (no device limit); its
// free_device_bytes() is asked once. A CPU backend's "device" is host memory: its figure (a
// test's simulated limit, or 0) is taken as it is.
Budgets resolve_budgets(const BudgetFlags& flags, StreamingBackend* backend);

// The budgets with `bytes` of the host budget set aside for `what` (half the budget at most),
// e.g. the degree stream that runs beside a GPU count; no change when the host budget is
// unlimited.
Budgets set_aside_host(Budgets b, std::uint64_t bytes, const std::string& what);

}  // namespace tristream
