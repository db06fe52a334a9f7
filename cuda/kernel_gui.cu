// cuda/kernel_gui.cu — `gui`: after Gui et al. (HPEC'19): branch-free binary search, thread / warp
// / block kernels for degree classes launched concurrently, and a prefetching warp.
//
// Contract: adds count(A, B, C) to *t.total (and per-vertex counts when asked) for any three
// views satisfying csr.hpp's preconditions; 64-bit offsets and counts.
//
// Method: each intersection B(u) ∩ C(v) takes the shorter list and binary-searches (branch-free)
// each of its ids in the longer one. Rows are binned by |B(u)|:
//   - thread class, |B(u)| <= kThreadMax: one thread per row, its edges one after another;
//   - warp class, |B(u)| <= kWarpMax: one warp per row, for each v the lanes split the shorter
//     list;
//   - block class: one block per row; B(u) sits in shared memory (kTile ids) and warps 1.. take
//     the edges u -> v round-robin while warp 0 prefetches the next row's B list into the other
//     half of a double buffer. Rows longer than kTile search B(u) in global memory.
// The three kernels run concurrently on three streams forked from the caller's stream.
#include "check.hpp"
#include "kernels.hpp"
#include "memory.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr std::uint64_t kThreadMax = 8;
constexpr std::uint64_t kWarpMax = 256;
constexpr int kBlock = 256;
constexpr int kTile = 4096;

// |a ∩ b| by binary-searching the shorter list in the longer; lane `rank` of `step` threads.
template <bool PV>
__device__ __forceinline__ ull intersect(const Task& t, std::uint64_t u, vid_t v, const vid_t* a,
                                         std::uint64_t la, const vid_t* b, std::uint64_t lb,
                                         int rank, int step) {
  if (la > lb) {
    const vid_t* p = a;
    a = b;
    b = p;
    const std::uint64_t l = la;
    la = lb;
    lb = l;
  }
  ull found = 0;
  if (la == 0) return 0;
  const vid_t lo = b[0], hi = b[lb - 1];
  for (std::uint64_t i = rank; i < la; i += step) {
    const vid_t x = a[i];
    if (x < lo || x > hi) continue;
    if (contains_bf(b, lb, x)) {
      ++found;
      if (PV) add_per_vertex(t, u, v, x);
    }
  }
  return found;
}

// |B(u) ∩ C(v)| with B(u) in registers (b: R ids, kEmpty past its end, which no id equals) and
// C(v), of at most R ids, loaded at once: every pair compared, no dependent loads (the thread
// class's lists on meshes are a handful of ids each, where a binary search is a chain of loads).
template <bool PV, int R>
__device__ __forceinline__ ull intersect_registers(const Task& t, std::uint64_t u, vid_t v,
                                                   const vid_t (&b)[R], const vid_t* c,
                                                   std::uint64_t lc) {
  vid_t w[R];
#pragma unroll
  for (int k = 0; k < R; ++k) w[k] = static_cast<std::uint64_t>(k) < lc ? c[k] : kEmpty;
  ull found = 0;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    bool hit = false;
#pragma unroll
    for (int j = 0; j < R; ++j) hit |= w[k] == b[j];
    if (hit && w[k] != kEmpty) {
      ++found;
      if (PV) add_per_vertex(t, u, v, w[k]);
    }
  }
  return found;
}

// Row u of the thread class: B(u) (lb <= R ids) in registers; each C(v) of at most R ids
// compared pair by pair, a longer one searched for B(u)'s ids.
template <bool PV, int R>
__device__ __forceinline__ ull thread_row_registers(const Task& t, std::uint64_t u, eid_t bb,
                                                    std::uint64_t lb) {
  vid_t b[R];
#pragma unroll
  for (int k = 0; k < R; ++k) b[k] = static_cast<std::uint64_t>(k) < lb ? t.B.col[bb + k] : kEmpty;
  ull found = 0;
  for (eid_t e = t.A.off[u]; e < t.A.off[u + 1]; ++e) {
    const vid_t v = t.A.col[e];
    const eid_t cb = t.C.off[v];
    const std::uint64_t lc = t.C.off[v + 1] - cb;
    if (lc <= static_cast<std::uint64_t>(R))
      found += intersect_registers<PV, R>(t, u, v, b, t.C.col + cb, lc);
    else
      found += intersect<PV>(t, u, v, t.B.col + bb, lb, t.C.col + cb, lc, 0, 1);
  }
  return found;
}

// The thread class: one thread per row (|B(u)| <= kThreadMax). REG (the default): B(u) in
// registers, 4 of them where |B(u)| <= 4 (2D meshes), else kThreadMax; otherwise (`gui:bs`, a
// benchmark switch) every intersection by binary search.
template <bool PV, bool REG>
__global__ void __launch_bounds__(256)
    gui_thread_kernel(Task t, const vid_t* rows, const ull* nrows) {
  const ull n = *nrows;
  ull found = 0;
  for (ull i = static_cast<ull>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<ull>(gridDim.x) * blockDim.x) {
    const std::uint64_t u = rows[i];
    const eid_t bb = t.B.off[u];
    const std::uint64_t lb = t.B.off[u + 1] - bb;
    if (REG)
      found += lb <= 4 ? thread_row_registers<PV, 4>(t, u, bb, lb)
                       : thread_row_registers<PV, static_cast<int>(kThreadMax)>(t, u, bb, lb);
    else
      for (eid_t e = t.A.off[u]; e < t.A.off[u + 1]; ++e) {
        const vid_t v = t.A.col[e];
        const eid_t cb = t.C.off[v];
        found += intersect<PV>(t, u, v, t.B.col + bb, lb, t.C.col + cb, t.C.off[v + 1] - cb, 0, 1);
      }
  }
  add_warp_total(t.total, found);
}

template <bool PV>
__global__ void __launch_bounds__(256)
    gui_warp_kernel(Task t, const vid_t* rows, const ull* nrows) {
  const ull n = *nrows;
  const int lane = threadIdx.x & 31;
  ull found = 0;
  const ull warps = static_cast<ull>(gridDim.x) * (blockDim.x / 32);
  for (ull i = static_cast<ull>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; i < n;
       i += warps) {
    const std::uint64_t u = rows[i];
    const eid_t bb = t.B.off[u];
    const std::uint64_t lb = t.B.off[u + 1] - bb;
    for (eid_t e = t.A.off[u]; e < t.A.off[u + 1]; ++e) {
      const vid_t v = t.A.col[e];
      const eid_t cb = t.C.off[v];
      found +=
          intersect<PV>(t, u, v, t.B.col + bb, lb, t.C.col + cb, t.C.off[v + 1] - cb, lane, 32);
    }
  }
  add_warp_total(t.total, found);
}

template <bool PV>
__global__ void __launch_bounds__(kBlock)
    gui_block_kernel(Task t, const vid_t* rows, const ull* nrows) {
  __shared__ vid_t s_buf[2][kTile];
  const ull n = *nrows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kWorkers = kBlock / 32 - 1;
  ull found = 0;
  ull i = blockIdx.x;
  int cur = 0;
  // Load the first row's list with the whole block.
  if (i < n) {
    const std::uint64_t u = rows[i];
    const eid_t bb = t.B.off[u];
    const std::uint64_t lb = t.B.off[u + 1] - bb;
    if (lb <= kTile)
      for (std::uint64_t k = threadIdx.x; k < lb; k += kBlock) s_buf[0][k] = t.B.col[bb + k];
  }
  __syncthreads();
  for (; i < n; i += gridDim.x) {
    const std::uint64_t u = rows[i];
    const eid_t bb = t.B.off[u];
    const std::uint64_t lb = t.B.off[u + 1] - bb;
    const vid_t* b = lb <= kTile ? s_buf[cur] : t.B.col + bb;
    const ull next = i + gridDim.x;
    if (warp == 0) {
      // The prefetching warp: the next row's list into the other buffer.
      if (next < n) {
        const std::uint64_t un = rows[next];
        const eid_t nb = t.B.off[un];
        const std::uint64_t ln = t.B.off[un + 1] - nb;
        if (ln <= kTile)
          for (std::uint64_t k = lane; k < ln; k += 32) s_buf[cur ^ 1][k] = t.B.col[nb + k];
      }
    } else {
      const eid_t ab = t.A.off[u], ae = t.A.off[u + 1];
      for (eid_t e = ab + (warp - 1); e < ae; e += kWorkers) {
        const vid_t v = t.A.col[e];
        const eid_t cb = t.C.off[v];
        found += intersect<PV>(t, u, v, b, lb, t.C.col + cb, t.C.off[v + 1] - cb, lane, 32);
      }
    }
    __syncthreads();
    cur ^= 1;
  }
  add_warp_total(t.total, found);
}

template <bool PV>
void launch(const Task& t, const LaunchEnv& env) {
  const bool reg = env.variant != "bs";  // (`gui:bs`: the thread class by binary search)
  AsyncBuffer<vid_t> lists(3 * t.rows, env.stream);
  AsyncBuffer<ull> counts(3, env.stream);
  const std::uint64_t bounds[3] = {kThreadMax, kWarpMax, ~0ull};
  bin_rows(t, 3, bounds, lists.get(), counts.get(), env);
  Fork fork(env.stream, 3);
  {
    auto* const k = &gui_block_kernel<PV>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), kBlock, 0, env);
    k<<<grid, kBlock, 0, fork.stream(0)>>>(t, lists.get() + 2 * t.rows, counts.get() + 2);
    TS_CUDA_CHECK_LAUNCH();
  }
  {
    auto* const k = &gui_warp_kernel<PV>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), 256, 0, env);
    k<<<grid, 256, 0, fork.stream(1)>>>(t, lists.get() + t.rows, counts.get() + 1);
    TS_CUDA_CHECK_LAUNCH();
  }
  {
    auto* const k = reg ? &gui_thread_kernel<PV, true> : &gui_thread_kernel<PV, false>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), 256, 0, env);
    k<<<grid, 256, 0, fork.stream(2)>>>(t, lists.get(), counts.get());
    TS_CUDA_CHECK_LAUNCH();
  }
  fork.join();
}

}  // namespace

void launch_gui(const Task& t, const LaunchEnv& env) {
  if (env.per_vertex)
    launch<true>(t, env);
  else
    launch<false>(t, env);
}

}  // namespace tristream::cuda::detail
