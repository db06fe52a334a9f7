// cuda/launch.cu — enqueue_count and choose_kernel (launch.hpp): validates the kernel name,
// builds the Task from the three device views and dispatches to a kernel family.
//
// Kernel names: auto | lstc | trust | wedge | gui | bitmap, optionally followed by ":VARIANT",
// a tuning switch of that family used by the benchmark (trust:t32, wedge:nocorner).
#include <algorithm>
#include <cmath>
#include <string>

#include "check.hpp"
#include "kernels.hpp"
#include "launch.hpp"

namespace tristream::cuda {
namespace {

struct KernelName {
  std::string family;
  std::string variant;
};

KernelName parse_kernel(const std::string& name) {
  KernelName k;
  const auto colon = name.find(':');
  k.family = name.substr(0, colon);
  if (colon != std::string::npos) k.variant = name.substr(colon + 1);
  static const char* const kFamilies[] = {"auto", "lstc", "trust", "wedge", "gui", "bitmap"};
  if (std::find_if(std::begin(kFamilies), std::end(kFamilies),
                   [&](const char* f) { return k.family == f; }) == std::end(kFamilies))
    throw Error(ErrorKind::Usage, "unknown CUDA kernel '" + name +
                                      "' (expected auto, lstc, trust, wedge, gui or bitmap)");
  return k;
}

int current_sm_count(int* device) {
  TS_CUDA_CHECK(cudaGetDevice(device));
  int sms = 0;
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, *device));
  return sms;
}

}  // namespace

void validate_kernel_name(const std::string& kernel) {
  parse_kernel(kernel);
}

std::string choose_kernel(const CsrView& A, const CsrView& B, const CsrView& C,
                          const eid_t* host_offsets_A) {
  (void)B;
  (void)C;
  // The rule and the measurements behind it: docs/kernels.md. Both candidates are `trust`
  // (vertex-centric hashing). `trust` walks sum over edges u -> v of |C(v)| items; `trust:in`
  // walks the wedges, sum over u of C(|A(u)|, 2), after a transpose of A. Their ratio grows with
  // the skew of the out-degrees, measured as R = E[d^2] / E[d]^2 over rows of A, sampled at a
  // stride (at most 2^12 rows: 2^16 samples cost 0.5-1 ms of host time on the benchmark graphs,
  // which the GPU waits for): R > 2 -> trust:in.
  if (!host_offsets_A || A.rows == 0) return "trust:in";
  const std::uint64_t step = std::max<std::uint64_t>(1, A.rows >> 12);
  double s1 = 0, s2 = 0, k = 0;
  for (std::uint64_t u = 0; u < A.rows; u += step) {
    const double d = static_cast<double>(host_offsets_A[u + 1] - host_offsets_A[u]);
    s1 += d;
    s2 += d * d;
    k += 1;
  }
  if (s1 == 0) return "trust";
  const double r = s2 * k / (s1 * s1);
  return r > 2.0 ? "trust:in" : "trust";
}

void enqueue_count(const CsrView& A, const CsrView& B, const CsrView& C, const std::string& kernel,
                   unsigned long long* d_total, const PerVertexOut& per_vertex, void* stream,
                   const eid_t* host_offsets_A) {
  KernelName k = parse_kernel(kernel);
  if (k.family == "auto") k = parse_kernel(choose_kernel(A, B, C, host_offsets_A));
  TS_CHECK(A.rows == B.rows, "enqueue_count: A and B must have the same rows");
  if (A.rows == 0 || C.rows == 0) return;
  TS_CHECK(A.rows < (1ull << 32) && C.rows < (1ull << 32), "enqueue_count: rows must fit 32 bits");

  detail::Task t;
  t.A = {A.offsets, A.cols};
  t.B = {B.offsets, B.cols};
  t.C = {C.offsets, C.cols};
  t.rows = A.rows;
  t.c_rows = C.rows;
  t.col_space = std::max(B.col_space, C.col_space);
  t.total = d_total;
  if (per_vertex.wanted()) {
    TS_CHECK(per_vertex.v_counts && per_vertex.w_counts,
             "per-vertex output needs all three arrays");
    t.pu = reinterpret_cast<detail::ull*>(per_vertex.u_counts);
    t.pv = reinterpret_cast<detail::ull*>(per_vertex.v_counts);
    t.pw = reinterpret_cast<detail::ull*>(per_vertex.w_counts);
  }

  detail::LaunchEnv env;
  env.stream = static_cast<cudaStream_t>(stream);
  env.sm_count = current_sm_count(&env.device);
  env.same_views = A.offsets == B.offsets && A.cols == B.cols && A.offsets == C.offsets &&
                   A.cols == C.cols && A.rows == C.rows;
  env.per_vertex = per_vertex.wanted();
  env.variant = k.variant;
  if (host_offsets_A) env.a_edges = host_offsets_A[A.rows] - host_offsets_A[0];

  if (k.family == "lstc")
    detail::launch_lstc(t, env);
  else if (k.family == "trust")
    detail::launch_trust(t, env);
  else if (k.family == "wedge")
    detail::launch_wedge(t, env);
  else if (k.family == "gui")
    detail::launch_gui(t, env);
  else
    detail::launch_bitmap(t, env);
}

}  // namespace tristream::cuda
