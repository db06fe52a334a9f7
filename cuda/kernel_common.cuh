// cuda/kernel_common.cuh — what every counting kernel shares: the task descriptor, searches,
// group-wide scans and reductions, per-vertex output, rows handed out through an atomic counter,
// and the flattened walk of many short lists that the vertex-centric kernels (lstc, trust,
// bitmap) build on. Row binning is in launch_util.cu (kernels.hpp).
//
// Task (DESIGN.md): count(A, B, C) = sum over rows u of A, over v in A(u), of |B(u) ∩ C(v)|.
// All offsets and counts are 64-bit (eid_t, unsigned long long); vertex ids are 32-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tristream/types.hpp"

namespace tristream::cuda::detail {

using ull = unsigned long long;

struct DevView {
  const eid_t* off = nullptr;  // device, rows + 1 entries (off[0] need not be 0)
  const vid_t* col = nullptr;  // device, indexed by off
};

struct Task {
  DevView A, B, C;
  std::uint64_t rows = 0;  // rows of A (== rows of B)
  std::uint64_t c_rows = 0;
  std::uint64_t col_space = 0;  // max(B.col_space, C.col_space)
  ull* total = nullptr;         // the count is added here
  ull* pu = nullptr;            // per-vertex outputs (device) or null
  ull* pv = nullptr;
  ull* pw = nullptr;
  // A slice (the pipeline's WorkUnit::slices): C's rows outside [v_lo, v_hi) are empty, so A's
  // edges into them close no triangle and kernels may skip them (trust:in's transpose does).
  std::uint64_t v_lo = 0, v_hi = ~0ull;
};

constexpr vid_t kEmpty = 0xffffffffu;

// ---- searches ---------------------------------------------------------------------------------

// Branch-free lower bound of x in a[0, n).
__device__ __forceinline__ std::uint64_t lower_bound_bf(const vid_t* a, std::uint64_t n, vid_t x) {
  if (n == 0) return 0;
  const vid_t* base = a;
  while (n > 1) {
    const std::uint64_t half = n >> 1;
    base = (base[half] < x) ? base + half : base;
    n -= half;
  }
  return static_cast<std::uint64_t>(base - a) + (*base < x);
}

__device__ __forceinline__ bool contains_bf(const vid_t* a, std::uint64_t n, vid_t x) {
  const std::uint64_t p = lower_bound_bf(a, n, x);
  return p < n && a[p] == x;
}

// Index of the last entry of the ascending array pre[0, n) that is <= k (pre[0] <= k).
template <class T>
__device__ __forceinline__ int last_le(const T* pre, int n, T k) {
  int lo = 0;
  while (n > 1) {
    const int half = n >> 1;
    lo = (pre[lo + half] <= k) ? lo + half : lo;
    n -= half;
  }
  return lo;
}

// ---- reductions and scans ---------------------------------------------------------------------

__device__ __forceinline__ ull warp_sum(ull x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_down_sync(0xffffffffu, x, d);
  return x;
}

template <class T>
__device__ __forceinline__ T warp_inclusive_scan(T x, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

// Adds each warp's sum of `x` to *total (one atomic per warp). All threads of the warp call it.
__device__ __forceinline__ void add_warp_total(ull* total, ull x) {
  x = warp_sum(x);
  if ((threadIdx.x & 31) == 0 && x) atomicAdd(total, x);
}

// ---- thread groups: a warp, or the whole block -------------------------------------------------

// A tile of T consecutive lanes of one warp (T = 8, 16 or 32) working on its own rows:
// rank = lane within the tile. Tiles of one warp diverge freely; every collective names only the
// tile's lanes.
template <int T>
struct TileGroup {
  static constexpr int G = T;
  static_assert(T == 8 || T == 16 || T == 32, "tile size");
  __device__ int rank() const { return threadIdx.x & (T - 1); }
  __device__ unsigned mask() const {
    return T == 32 ? 0xffffffffu : ((1u << T) - 1) << ((threadIdx.x & 31) & ~(T - 1));
  }
  __device__ void sync() const { __syncwarp(mask()); }
  // Exclusive scan of x over the tile; *sum receives the tile total. tmp: unused.
  __device__ ull exclusive_scan(ull x, ull* sum, ull*) const {
    const unsigned m = mask();
    const int r = rank();
    ull inc = x;
#pragma unroll
    for (int d = 1; d < T; d <<= 1) {
      const ull y = __shfl_up_sync(m, inc, d, T);
      if (r >= d) inc += y;
    }
    *sum = __shfl_sync(m, inc, T - 1, T);
    return inc - x;
  }
  template <class V>
  __device__ V broadcast(V x, V*) const {
    return __shfl_sync(mask(), x, 0, T);
  }
};
using WarpGroup = TileGroup<32>;

// The whole block (BLOCK threads) working on one row at a time.
template <int BLOCK>
struct BlockGroup {
  static constexpr int G = BLOCK;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block size");
  __device__ int rank() const { return threadIdx.x; }
  __device__ void sync() const { __syncthreads(); }
  // tmp: BLOCK / 32 + 1 entries of shared memory.
  __device__ ull exclusive_scan(ull x, ull* sum, ull* tmp) const {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const ull inc = warp_inclusive_scan(x, lane);
    __syncthreads();  // tmp may still be read by a previous scan
    if (lane == 31) tmp[warp] = inc;
    __syncthreads();
    if (warp == 0) {
      const ull w = lane < BLOCK / 32 ? tmp[lane] : 0;
      const ull winc = warp_inclusive_scan(w, lane);
      if (lane < BLOCK / 32) tmp[lane] = winc - w;
      if (lane == BLOCK / 32 - 1) tmp[BLOCK / 32] = winc;
    }
    __syncthreads();
    *sum = tmp[BLOCK / 32];
    return tmp[warp] + inc - x;
  }
  // Value of thread 0's x for everyone; tmp: one shared slot.
  template <class T>
  __device__ T broadcast(T x, T* tmp) const {
    __syncthreads();
    if (threadIdx.x == 0) *tmp = x;
    __syncthreads();
    return *tmp;
  }
};

// ---- per-vertex output ------------------------------------------------------------------------

__device__ __forceinline__ void add_per_vertex(const Task& t, std::uint64_t u, vid_t v, vid_t w) {
  atomicAdd(t.pu + u, 1ull);
  atomicAdd(t.pv + v, 1ull);
  atomicAdd(t.pw + w, 1ull);
}

// ---- the flattened walk ------------------------------------------------------------------------
//
// A group enumerates the items of many short lists as one flat sequence: G lists at a time, an
// exclusive scan of their lengths gives each its start, and the G threads take consecutive items
// round-robin (neighbouring threads read neighbouring addresses). Each item w is tested with
// `member(w)` after a range check against [lo, hi]; hits call `hit(id, w)` where id is the list's
// tag. `lists(i, id, beg, len)` describes list i of [first, last): its tag, and the column
// indices [beg, beg + len) into `col`. With NARROW, a batch of fewer than 2^31 items (all but
// freak ones) is walked in 32-bit arithmetic, each list's items addressed from one pointer
// (walk_batch32): fewer instructions per item, where the walk is bound by instructions (long
// lists, skewed graphs), but more registers, which costs the light-row tiles their occupancy
// (docs/kernels.md).

template <int G>
struct WalkScratch {
  union {
    ull pre[G + 1];         // exclusive prefix of the list lengths, then the total
    unsigned pre32[G + 1];  // the same in 32 bits (a batch of fewer than 2^31 items)
  };
  union {
    eid_t beg[G];        // first column index of each list
    const vid_t* at[G];  // 32-bit batches: list j's item k is at[j][k] (col + beg - pre)
  };
  vid_t id[G];  // each list's tag
  ull scan_tmp[G / 32 + 1];
};

// One batch of walk_lists in 32 bits: s.pre32 and s.at filled for its nv lists, `sum` < 2^31
// items. Thread r takes items r, r + G, ...; the list of an item found as walk_lists does. (The
// same steps as walk_lists' 64-bit loop; one template for both made nvcc compile the 64-bit walk
// of lstc and of trust's light-row tiles up to 25% slower: bench/RESULTS.md, CUDA kernels.)
template <int G, class Member, class Hit>
__device__ __forceinline__ ull walk_batch32(const WalkScratch<G>& s, int r, int nv, unsigned sum,
                                            vid_t lo, vid_t hi, const Member& member,
                                            const Hit& hit) {
  constexpr int kUnroll = 4;
  ull found = 0;
  int j = 0;
  for (unsigned k0 = static_cast<unsigned>(r); k0 < sum; k0 += kUnroll * G) {
    vid_t w[kUnroll];
    int jj[kUnroll];
#pragma unroll
    for (int q = 0; q < kUnroll; ++q) {
      const unsigned k = k0 + static_cast<unsigned>(q * G);
      jj[q] = -1;
      if (k < sum) {
        if (s.pre32[j + 1] <= k) {
          if (j + 8 < nv && s.pre32[j + 8] <= k)
            j += last_le<unsigned>(s.pre32 + j + 8, nv - j - 8, k) + 8;
          else
            while (s.pre32[j + 1] <= k) ++j;
        }
        jj[q] = j;
        w[q] = s.at[j][k];
      }
    }
#pragma unroll
    for (int q = 0; q < kUnroll; ++q) {
      if (jj[q] >= 0 && w[q] >= lo && w[q] <= hi && member(w[q])) {
        ++found;
        hit(s.id[jj[q]], w[q]);
      }
    }
  }
  return found;
}

template <bool NARROW, class Group, class Lists, class Member, class Hit>
__device__ __forceinline__ ull walk_lists(const Group& g, WalkScratch<Group::G>& s, eid_t first,
                                          eid_t last, const Lists& lists, const vid_t* col,
                                          vid_t lo, vid_t hi, const Member& member,
                                          const Hit& hit) {
  constexpr int G = Group::G;
  const int r = g.rank();
  ull found = 0;
  for (eid_t base = first; base < last; base += G) {
    const int nv = static_cast<int>(min(static_cast<eid_t>(G), last - base));
    vid_t id = 0;
    eid_t beg = 0;
    ull len = 0;
    if (r < nv) lists(base + r, id, beg, len);
    ull sum;
    const ull pre = g.exclusive_scan(len, &sum, s.scan_tmp);
    g.sync();  // the previous batch's readers are done with s
    if (NARROW && sum < (1ull << 31)) {
      if (r < nv) {
        s.pre32[r] = static_cast<unsigned>(pre);
        s.at[r] = reinterpret_cast<const vid_t*>(reinterpret_cast<std::uintptr_t>(col + beg) -
                                                 pre * sizeof(vid_t));
        s.id[r] = id;
      }
      if (r == 0) s.pre32[nv] = static_cast<unsigned>(sum);
      g.sync();
      found += walk_batch32<G>(s, r, nv, static_cast<unsigned>(sum), lo, hi, member, hit);
      continue;
    }
    if (r < nv) {
      s.pre[r] = pre;
      s.beg[r] = beg;
      s.id[r] = id;
    }
    if (r == 0) s.pre[nv] = sum;
    g.sync();
    // Each thread's items k advance by G, so the list j holding k only moves forward: a short
    // linear advance, or a binary search for a long jump (s.pre[nv] is a sentinel). kUnroll
    // items are loaded before any is tested, so that several global loads are in flight.
    constexpr int kUnroll = 4;
    int j = 0;
    for (ull k0 = r; k0 < sum; k0 += kUnroll * G) {
      vid_t w[kUnroll];
      int jj[kUnroll];
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        const ull k = k0 + static_cast<ull>(q) * G;
        jj[q] = -1;
        if (k < sum) {
          if (s.pre[j + 1] <= k) {
            if (j + 8 < nv && s.pre[j + 8] <= k)
              j += last_le<ull>(s.pre + j + 8, nv - j - 8, k) + 8;
            else
              while (s.pre[j + 1] <= k) ++j;
          }
          jj[q] = j;
          w[q] = col[s.beg[j] + (k - s.pre[j])];
        }
      }
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        if (jj[q] >= 0 && w[q] >= lo && w[q] <= hi && member(w[q])) {
          ++found;
          hit(s.id[jj[q]], w[q]);
        }
      }
    }
  }
  return found;
}

// The walk of row u of A: the lists C(v), v in A(u), tagged v; w in B(u) is a triangle.
template <bool PV, bool NARROW, class Group, class Member>
__device__ __forceinline__ ull walk_row(const Task& t, std::uint64_t u, const Group& g,
                                        WalkScratch<Group::G>& s, vid_t lo, vid_t hi,
                                        const Member& member) {
  const DevView A = t.A, C = t.C;
  return walk_lists<NARROW>(
      g, s, A.off[u], A.off[u + 1],
      [&](eid_t e, vid_t& v, eid_t& beg, ull& len) {
        v = A.col[e];
        beg = C.off[v];
        len = C.off[v + 1] - beg;
      },
      C.col, lo, hi, member,
      [&](vid_t v, vid_t w) {
        if (PV) add_per_vertex(t, u, v, w);
      });
}

// ---- rows handed out through an atomic counter ------------------------------------------------

// Next index for the group from *counter, in chunks of `chunk`; `c` holds the group's current
// chunk (pos, end). Returns false when the list is exhausted.
struct ChunkCursor {
  ull pos = 0, end = 0;
};

template <class Group, class T>
__device__ __forceinline__ bool next_index(const Group& g, ull* counter, ull n, ull chunk,
                                           ChunkCursor& c, T* bcast) {
  if (c.pos >= c.end) {
    ull first = 0;
    if (g.rank() == 0) first = atomicAdd(counter, chunk);
    first = g.broadcast(first, bcast);
    if (first >= n) return false;
    c.pos = first;
    c.end = min(first + chunk, n);
  }
  return true;
}

}  // namespace tristream::cuda::detail
