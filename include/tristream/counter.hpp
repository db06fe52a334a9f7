// tristream/counter.hpp — the Counter seam between the drivers and the backends. No CUDA types.
//
// A Counter computes count(A, B, C) (see csr.hpp) for host-resident views. Backends: the CPU
// counter (exact, multithreaded; the reference in tests) and the CUDA counter (cuda/).
#pragma once

#include <memory>
#include <string>

#include "tristream/csr.hpp"

namespace tristream {

// Optional per-vertex output of one task: each triangle (u, v, w) found at u -> v with
// w in B(u) ∩ C(v) adds 1 to u_counts[u], v_counts[v] and w_counts[w] (local ids of parts i,
// j and k). At p = 1 all three point to the same n-entry array. Null pointers: not wanted.
struct PerVertexOut {
  count_t* u_counts = nullptr;
  count_t* v_counts = nullptr;
  count_t* w_counts = nullptr;
  bool wanted() const { return u_counts != nullptr; }
};

struct CounterOptions {
  unsigned threads = 0;         // CPU threads; 0 = hardware concurrency
  std::string kernel = "auto";  // CUDA kernel: auto|lstc|trust|wedge|gui|bitmap
  int device = 0;               // CUDA device ordinal
  // CPU: added to the nice value of the counting threads (the CPU beside GPUs counts below the
  // threads that feed them); 0 = as the creating thread.
  int nice = 0;
  // CPU: the counting threads put themselves in Linux's idle scheduling class (SCHED_IDLE) as
  // they start, so they run only on cores no other thread wants; the thread that makes the
  // counter keeps its class (it is not slowed by the cores being busy).
  bool idle_class = false;
};

class Counter {
 public:
  virtual ~Counter() = default;
  // "cpu" or "cuda".
  virtual std::string backend() const = 0;
  // Human-readable description (threads, device name, kernel).
  virtual std::string describe() const = 0;
  // Exact count(A, B, C). Preconditions: rows sorted ascending without duplicates;
  // A.rows == B.rows; every column of A < C.rows; B and C columns share one id space.
  virtual count_t count(const CsrView& A, const CsrView& B, const CsrView& C,
                        const PerVertexOut& per_vertex = {}) = 0;
  // In-core convenience: count(G, G, G).
  count_t count(const CsrView& g, const PerVertexOut& per_vertex = {}) {
    return count(g, g, g, per_vertex);
  }
};

std::unique_ptr<Counter> make_cpu_counter(const CounterOptions& options = {});

// CUDA backend (cuda/). cuda_device_count() is 0 when built without CUDA or when no GPU is
// usable; make_cuda_counter throws Error(Usage, "built without CUDA ...") in a CUDA-less build.
bool built_with_cuda();
int cuda_device_count();
// The memory of CUDA device `ordinal` in bytes (its total, not what is free: no context is
// made); 0 without CUDA or without that device. Never throws.
std::uint64_t cuda_device_total_memory(int ordinal);
std::unique_ptr<Counter> make_cuda_counter(const CounterOptions& options = {});

}  // namespace tristream
