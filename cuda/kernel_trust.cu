// cuda/kernel_trust.cu — `trust`: vertex-centric hashing after TRUST (Pandey et al., TPDS'21).
//
// Contract: adds count(A, B, C) to *t.total (and per-vertex counts when asked) for any three
// views satisfying csr.hpp's preconditions; 64-bit offsets and counts.
//
// Method: for each row u, B(u) is hashed once into a table in shared memory (open addressing
// with linear probing, Fibonacci hashing, an eighth full where the table's room allows, at most
// half full), then every w in C(v), v in A(u), probes it; the probes walk the wedges of u as one
// flat, coalesced sequence (walk_row).
//   - rows with |B(u)| <= kWarpMax (100, TRUST's threshold) are handled by one warp each, with a
//     1024-entry table per warp, and those with |B(u)| <= 16 by half a warp each (two rows in
//     flight per warp: light rows are bound by the latency of their few dependent loads);
//   - longer rows by a whole block (kBlock threads) with a table of up to kTable entries;
//   - rows whose B(u) does not fit the block's table "spill": the probes binary-search B(u) in
//     global memory instead (its cache lines stay in L1/L2 for the row's walk).
// Rows are handed out in chunks through an atomic counter (dynamic scheduling); the light-row,
// warp and block kernels run concurrently on three streams. Variant `trust:lite` sends the light
// rows (max(|A(u)|, |B(u)|) <= kLiteMax = 32) to kernel_trust_lite.cu instead, which packs several
// whole rows into one warp window and walks their lists as one flat sequence (faster on uniform
// graphs, slower on Kronecker graphs: docs/kernels.md).
//
// Variant `trust:in` turns the roles around: it hashes C(v) once per row v of C and probes it
// with B(u) for every u with v in A(u) (the in-edges of v, found through a transpose of A built
// on the device: counting, scan, scatter). In the in-core case (A = B = C, oriented) only the
// part of B(u) after v can close a triangle, so the probes of one v are the wedges (u; v, w),
// v < w, and the total work is the wedge count sum_u C(d+(u), 2) instead of the
// sum over edges u -> v of d+(v) that `trust` walks: about 4x less on Kronecker graphs (see
// docs/kernels.md). The same holds where A is cut from B (pair's units: A(u) is a run of B(u),
// whose start the transpose finds once per row). In general the part of B(u) from the first id
// of C(v) on is probed (a binary search skips the rest).
// Variant `trust:t32`: warp rows only up to |B(u)| = 32.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "check.hpp"
#include "kernels.hpp"
#include "memory.hpp"
#include "wait.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr int kWarpMax = 100;
constexpr int kWarpTable = 1024;  // >= 8 * kWarpMax, power of two
constexpr int kWarpsPerBlock = 8;
constexpr int kBlock = 512;
constexpr int kTable = 8192;  // block table entries (32 KB)
constexpr int kTableLog2 = 13;
static_assert(1 << kTableLog2 == kTable, "block table size");

__device__ __forceinline__ unsigned hash_slot(vid_t x, int shift) {
  return (x * 2654435769u) >> shift;
}

// Builds the table (size 2^log2 entries) for B(u) with the group's threads. The caller syncs.
template <class Group>
__device__ __forceinline__ void build_table(const Group& g, vid_t* table, int log2, const vid_t* b,
                                            std::uint64_t len) {
  const unsigned size = 1u << log2, mask = size - 1;
  const int shift = 32 - log2;
  for (unsigned i = g.rank(); i < size; i += Group::G) table[i] = kEmpty;
  g.sync();
  for (std::uint64_t i = g.rank(); i < len; i += Group::G) {
    const vid_t x = b[i];
    unsigned h = hash_slot(x, shift);
    while (atomicCAS(table + h, kEmpty, x) != kEmpty) h = (h + 1) & mask;
  }
  g.sync();
}

__device__ __forceinline__ bool probe(const vid_t* table, int log2, vid_t x) {
  const unsigned mask = (1u << log2) - 1;
  unsigned h = hash_slot(x, 32 - log2);
  for (;;) {
    const vid_t y = table[h];
    if (y == x) return true;
    if (y == kEmpty) return false;
    h = (h + 1) & mask;
  }
}

// The table for a list of len ids (2 len <= 2^max_log2): the smallest power of two >= 8 len, at
// least 128, at most 2^max_log2 entries. Linear probing reads (1 + 1 / (1 - f)^2) / 2 slots for a
// key that is absent (most probes) at fill f: 1.15 an eighth full, 1.39 a quarter, 2.5 half;
// measured, Kronecker 22 trust:in 35.0 / 29.6 / 27.9 ms (docs/kernels.md).
__device__ __forceinline__ int table_log2(std::uint64_t len, int max_log2) {
  const unsigned need = static_cast<unsigned>(len < 16 ? 16 : len) * 8;
  const int log2 = 32 - __clz(need - 1);
  return log2 < max_log2 ? log2 : max_log2;
}

// The in-edges of the rows of C (a transpose of A): in-edge i of row v is u -> v, v = A(u)[pos].
// pos is v's place in B(u) where A is B's rows (in core, a row piece of it) or cut from them
// (pair); else v's place in A(u).
struct InEdge {
  vid_t u;
  vid_t pos;
};
struct InIndex {
  const eid_t* off = nullptr;  // c_rows + 1 entries
  const InEdge* edge = nullptr;
  bool tri = false;  // pos is v's place in B(u): probe only B(u) after it
};

// The list hashed for `row`: B(row), or C(row) for the in-formulation.
template <bool IN>
__device__ __forceinline__ const vid_t* hashed_list(const Task& t, std::uint64_t row,
                                                    std::uint64_t& len) {
  const DevView H = IN ? t.C : t.B;
  const eid_t b = H.off[row];
  len = H.off[row + 1] - b;
  return H.col + b;
}

template <bool PV, bool IN, class Group, class Member>
__device__ __forceinline__ ull walk(const Task& t, const InIndex& in, std::uint64_t row,
                                    const Group& g, WalkScratch<Group::G>& s, vid_t lo, vid_t hi,
                                    const Member& member) {
  // (32-bit walks where the items are many: trust:in, whose lists are B's long rows, and the
  // block rows; the light-row tiles of `trust` keep their registers: docs/kernels.md)
  constexpr bool kNarrow = IN || Group::G > 32;
  if (!IN) return walk_row<PV, kNarrow>(t, row, g, s, lo, hi, member);
  const vid_t v = static_cast<vid_t>(row);
  const DevView B = t.B;
  return walk_lists<kNarrow>(
      g, s, in.off[v], in.off[v + 1],
      [&](eid_t i, vid_t& u, eid_t& beg, ull& len) {
        const InEdge ie = in.edge[i];
        u = ie.u;
        const eid_t b0 = B.off[u], e0 = B.off[u + 1];
        // Only ids in [lo, hi] (the range of C(v)) can hit. In core that is the part of B(u)
        // after v; in general, skip the part of B(u) below lo by a binary search.
        if (in.tri)
          beg = b0 + ie.pos + 1;
        else
          beg = b0 + (e0 - b0 > 8 ? lower_bound_bf(B.col + b0, e0 - b0, lo) : 0);
        len = e0 - beg;
      },
      B.col, lo, hi, member,
      [&](vid_t u, vid_t w) {
        if (PV) add_per_vertex(t, u, v, w);
      });
}

// Light rows: one tile of T lanes per row (T = 16 for |list| <= 16, else a warp), a table of
// 4T entries per tile (>= 2 * the longest list of its class).
template <bool PV, bool IN, int T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    trust_tile_kernel(Task t, InIndex in, const vid_t* rows, const ull* nrows, ull* counter) {
  constexpr int kTiles = kWarpsPerBlock * 32 / T;
  constexpr int kTableSize = T == 32 ? kWarpTable : 8 * T;
  constexpr int kTileLog2 = T == 32 ? 10 : (T == 16 ? 7 : 6);
  static_assert(1 << kTileLog2 == kTableSize, "tile table size");
  __shared__ WalkScratch<T> s_walk[kTiles];
  __shared__ vid_t s_table[kTiles][kTableSize];
  const TileGroup<T> g;
  const int tile = threadIdx.x / T;
  const ull n = *nrows;
  // Chunks of about 1/16 of a tile's fair share (4 to 128 rows): few atomics on the shared
  // counter, still dynamic enough for the skew of the light rows.
  const ull share = n / (static_cast<ull>(gridDim.x) * kTiles * 16);
  const ull chunk = share < 4 ? 4 : (share > 128 ? 128 : share);
  ChunkCursor c;
  ull found = 0;
  while (next_index(g, counter, n, chunk, c, static_cast<ull*>(nullptr))) {
    const std::uint64_t row = rows[c.pos++];
    std::uint64_t len;
    const vid_t* h = hashed_list<IN>(t, row, len);
    const int log2 = table_log2(len, kTileLog2);
    build_table(g, s_table[tile], log2, h, len);
    const vid_t* table = s_table[tile];
    found += walk<PV, IN>(t, in, row, g, s_walk[tile], h[0], h[len - 1],
                          [&](vid_t x) { return probe(table, log2, x); });
    g.sync();
  }
  add_warp_total(t.total, found);
}

template <bool PV, bool IN>
__global__ void __launch_bounds__(kBlock)
    trust_block_kernel(Task t, InIndex in, const vid_t* rows, const ull* nrows, ull* counter) {
  __shared__ WalkScratch<kBlock> s_walk;
  __shared__ vid_t s_table[kTable];
  __shared__ ull s_bcast;
  const BlockGroup<kBlock> g;
  const ull n = *nrows;
  ChunkCursor c;
  ull found = 0;
  while (next_index(g, counter, n, 1, c, &s_bcast)) {
    const std::uint64_t row = rows[c.pos++];
    std::uint64_t len;
    const vid_t* h = hashed_list<IN>(t, row, len);
    const vid_t lo = h[0], hi = h[len - 1];
    if (2 * len <= kTable) {
      const int log2 = table_log2(len, kTableLog2);
      build_table(g, s_table, log2, h, len);
      found += walk<PV, IN>(t, in, row, g, s_walk, lo, hi,
                            [&](vid_t x) { return probe(s_table, log2, x); });
    } else {
      found += walk<PV, IN>(t, in, row, g, s_walk, lo, hi,
                            [&](vid_t x) { return contains_bf(h, len, x); });
    }
    g.sync();
  }
  add_warp_total(t.total, found);
}

// ---- the transpose of A for the in-formulation (8 threads per row of A) ------------------------

__global__ void in_degree_kernel(Task t, ull* count) {
  const unsigned sub = threadIdx.x & 7;
  const std::uint64_t stride = (static_cast<std::uint64_t>(gridDim.x) * blockDim.x) >> 3;
  for (std::uint64_t u = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 3;
       u < t.rows; u += stride)
    for (eid_t e = t.A.off[u] + sub; e < t.A.off[u + 1]; e += 8) {
      const vid_t v = t.A.col[e];
      if (v >= t.v_lo && v < t.v_hi) atomicAdd(count + v, 1ull);
    }
}

// With `cut` (A cut from B, ids less cut_lo), pos is v's place in B(u): A(u)'s start in B(u),
// found once per row by a binary search of A(u)[0] + cut_lo, plus v's place in A(u).
__global__ void in_scatter_kernel(Task t, ull* cursor, InEdge* edges, bool cut, vid_t cut_lo) {
  const unsigned sub = threadIdx.x & 7;
  const std::uint64_t stride = (static_cast<std::uint64_t>(gridDim.x) * blockDim.x) >> 3;
  for (std::uint64_t u = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 3;
       u < t.rows; u += stride) {
    const eid_t ab = t.A.off[u], ae = t.A.off[u + 1];
    if (ab == ae) continue;
    eid_t base = 0;  // A(u)[0]'s place in B(u) (cut), else 0
    if (cut) {
      const eid_t b0 = t.B.off[u];
      base = lower_bound_bf(t.B.col + b0, t.B.off[u + 1] - b0, t.A.col[ab] + cut_lo);
    }
    for (eid_t e = ab + sub; e < ae; e += 8) {
      const vid_t v = t.A.col[e];
      if (v < t.v_lo || v >= t.v_hi) continue;  // a slice's C row without columns
      const ull p = atomicAdd(cursor + v, 1ull);
      edges[p] = InEdge{static_cast<vid_t>(u), static_cast<vid_t>(base + (e - ab))};
    }
  }
}

// Bins: [0] lists of at most 16 ids (half-warp tiles) — or, with `lite`, the light rows of
// kernel_trust_lite.cu, which finds them itself —, [1] at most kWarpMax (warps), [2] blocks.
template <bool PV, bool IN>
void run_bins(const Task& t, const InIndex& in, const vid_t* lists, std::uint64_t list_stride,
              ull* counts, const LaunchEnv& env, bool lite = false,
              const std::uint32_t* c_off32 = nullptr) {
  TS_CUDA_CHECK(cudaMemsetAsync(counts + 3, 0, 3 * sizeof(ull), env.stream));
  Fork fork(env.stream, 3);
  {
    auto* const k = &trust_block_kernel<PV, IN>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), kBlock, 0, env);
    k<<<grid, kBlock, 0, fork.stream(0)>>>(t, in, lists + 2 * list_stride, counts + 2, counts + 5);
    TS_CUDA_CHECK_LAUNCH();
  }
  {
    auto* const k = &trust_tile_kernel<PV, IN, 32>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), kWarpsPerBlock * 32, 0, env);
    k<<<grid, kWarpsPerBlock * 32, 0, fork.stream(1)>>>(t, in, lists + list_stride, counts + 1,
                                                        counts + 4);
    TS_CUDA_CHECK_LAUNCH();
  }
  if (lite) {
    launch_trust_lite(t, env, fork.stream(2), counts + 3, c_off32);
  } else {
    auto* const k = &trust_tile_kernel<PV, IN, 16>;
    const int grid = resident_blocks(reinterpret_cast<const void*>(k), kWarpsPerBlock * 32, 0, env);
    k<<<grid, kWarpsPerBlock * 32, 0, fork.stream(2)>>>(t, in, lists, counts, counts + 3);
    TS_CUDA_CHECK_LAUNCH();
  }
  fork.join();
}

template <bool PV>
void launch_out(const Task& t, const LaunchEnv& env) {
  AsyncBuffer<vid_t> lists(3 * t.rows, env.stream);
  AsyncBuffer<ull> counts(6, env.stream);  // [0,3): bin sizes, [3,6): work counters
  // Light rows: half-warp tiles up to 16 ids, binned by |B(u)|; with `trust:lite`, rows with
  // max(|A(u)|, |B(u)|) <= kLiteMax for the window kernel (kernel_trust_lite.cu), which finds
  // them itself (bin 0 is dropped) and, in core, reads C's offsets narrowed to 32 bits by the
  // same pass. Heavier rows go to the warp and block kernels.
  const bool lite = env.variant.compare(0, 4, "lite") == 0;
  const std::uint64_t warp_max = env.variant == "t32" ? 32 : kWarpMax;
  const std::uint64_t bounds[3] = {lite ? kLiteMax : std::min<std::uint64_t>(16, warp_max),
                                   warp_max, ~0ull};
  const bool narrow = lite && lite_narrows(t, env);
  AsyncBuffer<std::uint32_t> narrowed(narrow ? t.rows + 1 : 0, env.stream);
  bin_rows(t, 3, bounds, lists.get(), counts.get(), env, lite ? 0 : 63, lite ? 1 : 0,
           narrowed.get());
  run_bins<PV, false>(t, InIndex{}, lists.get(), t.rows, counts.get(), env, lite, narrowed.get());
}

template <bool PV>
void launch_in(const Task& t, const LaunchEnv& env) {
  const std::uint64_t n = t.c_rows;
  cudaStream_t s = env.stream;
  // 1. In-degrees, their exclusive prefix (the in-edge offsets), the scatter.
  AsyncBuffer<ull> count(n + 1, s), off(n + 1, s);
  TS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, (n + 1) * sizeof(ull), s));
  const int grid = env.sm_count * 16;
  in_degree_kernel<<<grid, 256, 0, s>>>(t, count.get());
  TS_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  TS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, count.get(), off.get(),
                                              static_cast<std::int64_t>(n + 1), s));
  {
    AsyncBuffer<char> temp(temp_bytes, s);
    TS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, count.get(), off.get(),
                                                static_cast<std::int64_t>(n + 1), s));
  }
  std::uint64_t m = env.a_edges;
  if (m == ~0ull) {  // not given: read it back (synchronises the stream)
    unsigned long long total = 0;
    TS_CUDA_CHECK(cudaMemcpyAsync(&total, off.get() + n, sizeof(total), cudaMemcpyDeviceToHost, s));
    wait_stream(s);  // interruptible (wait.hpp)
    m = total;
  }
  TS_CUDA_CHECK(
      cudaMemcpyAsync(count.get(), off.get(), (n + 1) * sizeof(ull), cudaMemcpyDeviceToDevice, s));
  AsyncBuffer<InEdge> edges(m ? m : 1, s);
  in_scatter_kernel<<<grid, 256, 0, s>>>(t, count.get(), edges.get(), env.a_cut_of_b,
                                         static_cast<vid_t>(env.a_cut_lo));
  TS_CUDA_CHECK_LAUNCH();
  // 2. Bins over the rows v of C: a block when |C(v)| > kWarpMax or the in-degree > 4 kWarpMax.
  Task bt = t;
  bt.A = {reinterpret_cast<const eid_t*>(off.get()), nullptr};
  bt.B = t.C;
  bt.rows = n;
  AsyncBuffer<vid_t> lists(3 * n, s);
  AsyncBuffer<ull> counts(6, s);
  const std::uint64_t bounds[3] = {16, kWarpMax, ~0ull};
  bin_rows(bt, 3, bounds, lists.get(), counts.get(), env, 2);
  // 3. Count.
  const InIndex in{reinterpret_cast<const eid_t*>(off.get()), edges.get(),
                   env.after_v || env.a_cut_of_b};
  run_bins<PV, true>(t, in, lists.get(), n, counts.get(), env);
}

}  // namespace

void launch_trust(const Task& t, const LaunchEnv& env) {
  const bool in = env.variant == "in";
  if (env.per_vertex)
    in ? launch_in<true>(t, env) : launch_out<true>(t, env);
  else
    in ? launch_in<false>(t, env) : launch_out<false>(t, env);
}

}  // namespace tristream::cuda::detail
