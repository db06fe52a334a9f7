// cuda/launch.cu — enqueue_count and choose_kernel (launch.hpp): validates the kernel name,
// builds the Task from the three device views and dispatches to a kernel family.
//
// Kernel names: auto | lstc | trust | wedge | gui | bitmap, optionally followed by ":VARIANT",
// a tuning switch of that family used by the benchmark (trust:t32, wedge:nocorner).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "check.hpp"
#include "common/interrupt.hpp"
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

// A, B and C are one view: the in-core count.
bool same_views(const CsrView& A, const CsrView& B, const CsrView& C) {
  return A.offsets == B.offsets && A.cols == B.cols && A.offsets == C.offsets && A.cols == C.cols &&
         A.rows == C.rows;
}

int current_sm_count(int* device) {
  TS_CUDA_CHECK(cudaGetDevice(device));
  int sms = 0;
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, *device));
  return sms;
}

// In core: a mesh-like graph, whose rows are short (mean out-degree at most 8) and whose edges
// join nearby ids (at least half of the sampled edges u -> v within max(1024, rows / 64) ids),
// which `gui`'s searches read from cache (docs/kernels.md, "The auto rule"). Samples every
// ceil(rows / 4096)-th row, at most 8 columns each.
bool local_and_sparse(const CsrView& A, const eid_t* off, const vid_t* cols) {
  if (!off || A.rows == 0) return false;
  const double mean = static_cast<double>(off[A.rows] - off[0]) / static_cast<double>(A.rows);
  if (mean > 8.0) return false;
  const std::uint64_t window = std::max<std::uint64_t>(1024, A.rows / 64);
  const std::uint64_t step = std::max<std::uint64_t>(1, A.rows >> 12);
  std::uint64_t near = 0, seen = 0;
  for (std::uint64_t u = 0; u < A.rows; u += step) {
    const eid_t stride = std::max<eid_t>(1, (off[u + 1] - off[u]) / 8);
    for (eid_t e = off[u]; e < off[u + 1]; e += stride) {
      const std::uint64_t v = cols[e];
      near += (v > u ? v - u : u - v) <= window;
      ++seen;
    }
  }
  return seen > 0 && 2 * near >= seen;
}

}  // namespace

void validate_kernel_name(const std::string& kernel) {
  parse_kernel(kernel);
}

std::string choose_kernel(const CsrView& A, const CsrView& B, const CsrView& C,
                          const eid_t* host_offsets_A, const HostViews& host) {
  // The rule and the measurements behind it: docs/kernels.md. All candidates are `trust`
  // (vertex-centric hashing): `trust` walks sum over edges u -> v of |C(v)| items (P), `trust:in`
  // the wedges, about sum over u of |A(u)| |B(u)| / 2 (W), after a transpose of A, and
  // `trust:lite` is `trust` with light rows packed into windows.
  //   In core (A = B = C): the skew of the out-degrees, R = E[d^2] / E[d]^2 over a sample of at
  //   most 2^12 rows, predicts P / W: R > 2 -> trust:in; else, with A's columns on the host, a
  //   mesh-like graph (short rows joining nearby ids: local_and_sparse) -> gui; else trust:lite.
  //   Blocks of a partition: P / W estimated on a sample (at most 2^10 rows, 8 columns each)
  //   when host copies of A's columns and B's and C's offsets are given: P / W > 2.5 -> trust:in,
  //   or, A cut from B, P - W > 16 per edge of A -> trust:in; else trust; without them, R as
  //   above with trust for R <= 2.
  //   A packed block (HostViews' *_packed) is sampled over its rows with columns.
  // A cut from B is sampled through B's rows (HostViews::a_cut).
  const bool cut =
      host.a_cut && !host_offsets_A && host.b_cols && (host.b_offsets || host.b_packed.valid());
  const bool a_packed = cut ? !host.b_offsets : !host_offsets_A && host.a_packed.valid();
  if ((!host_offsets_A && !a_packed && !cut) || A.rows == 0) return "trust:in";
  const PackedRows& packed = cut ? host.b_packed : host.a_packed;
  const eid_t* dense = cut ? host.b_offsets : host_offsets_A;
  const vid_t* a_cols = cut ? host.b_cols : host.a_cols;
  // Row x of the sample space (A's rows, or A's packed rows): its row id and the range of its
  // columns in a_cols, which hold a_cols[e] - bias (a cut A: B's columns in [lo, hi)).
  const std::uint64_t space = a_packed ? packed.count : A.rows;
  const vid_t bias = cut ? static_cast<vid_t>(host.a_cut_lo) : 0;
  auto a_row = [&](std::uint64_t x, std::uint64_t* u, eid_t* a0, eid_t* a1) {
    const eid_t* o = a_packed ? packed.offsets : dense;
    *u = a_packed ? packed.ids[x] : x;
    *a0 = o[x];
    *a1 = o[x + 1];
    if (cut && *a1 > *a0) {
      const vid_t *s, *t;
      cut_range(a_cols + *a0, *a1 - *a0, host.a_cut_lo, host.a_cut_hi, &s, &t);
      *a0 = static_cast<eid_t>(s - a_cols);
      *a1 = static_cast<eid_t>(t - a_cols);
    }
  };
  auto degree = [](const eid_t* dense, const PackedRows& packed, std::uint64_t u) -> eid_t {
    return packed.valid() ? packed.degree(u) : dense[u + 1] - dense[u];
  };
  const bool same = same_views(A, B, C);
  if (space == 0) return same ? "trust:lite" : "trust";
  if (!same && a_cols && (host.b_offsets || host.b_packed.valid()) &&
      (host.c_offsets || host.c_packed.valid())) {
    const std::uint64_t step = std::max<std::uint64_t>(1, space >> 10);
    // trust:in's probes exactly (dense B and C with their columns): for v in A(u), the part of
    // B(u) from C(v)'s first id on; a pair unit's B(u) is u's whole row, of which that part is
    // often far less than half
    const bool probes = host.b_cols && host.c_cols && host.b_offsets && host.c_offsets &&
                        !host.b_packed.valid() && !host.c_packed.valid();
    double p = 0, w = 0, m = 0;  // m: A's sampled edges (rows with B)
    const bool debug = std::getenv("TRISTREAM_DEBUG_AUTO") != nullptr;
    std::unordered_map<vid_t, double> hits;  // debug: A's sampled columns, weighted by rows
    double a_sum = 0;
    for (std::uint64_t x = 0; x < space; x += step) {
      std::uint64_t u = 0;
      eid_t a0 = 0, a1 = 0;
      a_row(x, &u, &a0, &a1);
      const double da = static_cast<double>(a1 - a0);
      const double db = static_cast<double>(degree(host.b_offsets, host.b_packed, u));
      if (debug && da > 0) {
        a_sum += da;
        const eid_t st = std::max<eid_t>(1, (a1 - a0) / 8);
        const double wgt = da / static_cast<double>((a1 - a0 + st - 1) / st);
        for (eid_t e = a0; e < a1; e += st) hits[a_cols[e] - bias] += wgt;
      }
      if (da == 0 || db == 0) continue;
      m += da;
      if (!probes) w += da * db / 2;
      const eid_t stride = std::max<eid_t>(1, (a1 - a0) / 8);
      double sum = 0, seen = 0, tails = 0;
      for (eid_t e = a0; e < a1; e += stride) {
        const vid_t v = a_cols[e] - bias;
        if (v >= C.rows) continue;  // not a row of C (malformed views): ignored here
        sum += static_cast<double>(degree(host.c_offsets, host.c_packed, v));
        seen += 1;
        if (probes && host.c_offsets[v] < host.c_offsets[v + 1]) {
          const vid_t* b0 = host.b_cols + host.b_offsets[u];
          const vid_t* b1 = host.b_cols + host.b_offsets[u + 1];
          tails +=
              static_cast<double>(b1 - std::lower_bound(b0, b1, host.c_cols[host.c_offsets[v]]));
        }
      }
      if (seen > 0) p += sum * da / seen;
      if (probes && seen > 0) w += tails * da / seen;
    }
    const double rho = w > 0 ? p / w : 0;
    // A cut from B (pair): trust:in probes B(u) after v as in core (no search), so it wins
    // wherever the probes it saves, P - W, outweigh its transpose of A (two passes of atomics
    // and an 8-byte record per edge of A): more than kCutSaved probes per edge of A.
    constexpr double kCutSaved = 16;
    const bool saves = cut && p - w > kCutSaved * m;
    const char* choice = rho > 2.5 || saves ? "trust:in" : "trust";
    if (debug) {
      // the most sampled column's share of A's sampled edges, and its estimated in-degree
      double top = 0;
      for (const auto& kv : hits) top = std::max(top, kv.second);
      const double share = a_sum > 0 ? top / a_sum : 0;
      const double a_edges = host.a_edges != ~0ull ? static_cast<double>(host.a_edges) : 0;
      std::fprintf(stderr,
                   "tristream auto: rows %llu, P/W %.2f, (P - W) / m %.1f -> %s (A edges %.0f, "
                   "top column %.4f, in-degree %.0f)\n",
                   static_cast<unsigned long long>(A.rows), rho, m > 0 ? (p - w) / m : 0.0, choice,
                   a_edges, share, share * a_edges);
    }
    return choice;
  }
  // 2^12 rows in 2^7 runs of 32 consecutive rows, spread evenly (every row of a smaller graph):
  // rows pages apart cost a cache and a TLB miss each (4096 of them took 0.25 ms for 4 M rows, on
  // the count's critical path; the runs 0.06 ms).
  constexpr std::uint64_t kRun = 32;
  const std::uint64_t step = std::max<std::uint64_t>(kRun, (space >> 12) * kRun);
  double s1 = 0, s2 = 0, k = 0;
  for (std::uint64_t x0 = 0; x0 < space; x0 += step) {
    for (std::uint64_t x = x0; x < std::min(space, x0 + kRun); ++x) {
      std::uint64_t u = 0;
      eid_t a0 = 0, a1 = 0;
      a_row(x, &u, &a0, &a1);
      const double d = static_cast<double>(a1 - a0);
      s1 += d;
      s2 += d * d;
      k += 1;
    }
  }
  const char* light = same ? "trust:lite" : "trust";
  if (s1 == 0) return light;
  // a packed sample leaves out the empty rows: E[d^2] / E[d]^2 over all rows is rows / count
  // times that over the rows with columns
  const double r = s2 * k / (s1 * s1) * static_cast<double>(A.rows) / static_cast<double>(space);
  if (r > 2.0) return "trust:in";
  if (same && host.a_cols && local_and_sparse(A, host_offsets_A, host.a_cols)) return "gui";
  return light;
}

void enqueue_count(const CsrView& A, const CsrView& B, const CsrView& C, const std::string& kernel,
                   unsigned long long* d_total, const PerVertexOut& per_vertex, void* stream,
                   const eid_t* host_offsets_A, const HostViews& host) {
  KernelName k = parse_kernel(kernel);
  if (k.family == "auto") k = parse_kernel(choose_kernel(A, B, C, host_offsets_A, host));
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
  t.v_lo = host.v_begin;
  t.v_hi = host.v_end;
  if (per_vertex.wanted()) {
    TS_CHECK(per_vertex.v_counts && per_vertex.w_counts,
             "per-vertex output needs all three arrays");
    t.pu = reinterpret_cast<detail::ull*>(per_vertex.u_counts);
    t.pv = reinterpret_cast<detail::ull*>(per_vertex.v_counts);
    t.pw = reinterpret_cast<detail::ull*>(per_vertex.w_counts);
  }

  // A SIGINT/SIGTERM that came while `auto` sampled the host copies: nothing launched yet.
  throw_if_interrupted();
  detail::LaunchEnv env;
  env.stream = static_cast<cudaStream_t>(stream);
  env.sm_count = current_sm_count(&env.device);
  detail::keep_scratch_pool(env.device);
  env.same_views = same_views(A, B, C);
  env.after_v = env.same_views || (host.rows_of_oriented_c && A.offsets == B.offsets &&
                                   A.cols == B.cols && A.cols == C.cols);
  env.a_cut_of_b = host.a_cut && !env.after_v && A.rows == B.rows;
  env.a_cut_lo = host.a_cut_lo;
  env.per_vertex = per_vertex.wanted();
  env.variant = k.variant;
  if (host_offsets_A)
    env.a_edges = host_offsets_A[A.rows] - host_offsets_A[0];
  else if (host.a_packed.valid())
    env.a_edges = host.a_packed.edges();
  else
    env.a_edges = host.a_edges;

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
