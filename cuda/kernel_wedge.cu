// cuda/kernel_wedge.cu — `wedge`: wedge-parallel counting after WeTriC (Euro-Par'25).
//
// Contract: adds count(A, B, C) to *t.total (and per-vertex counts when asked) for any three
// views satisfying csr.hpp's preconditions; 64-bit offsets and counts.
//
// Method: a wedge is (u; v, w) with v in A(u), w in B(u); it closes a triangle iff w in C(v).
// Row u holds |A(u)| * |B(u)| wedges, or |A(u)| (|A(u)| - 1) / 2 (pairs i < j) in the in-core
// case A = B = C, where C(v) holds only ids > v. A prefix sum over the rows' wedge counts
// numbers all wedges; thread blocks take windows of kBlock * kSpread consecutive wedges
// ("spread": each thread kSpread of them, neighbouring threads neighbouring wedges). The block
// finds the rows its window touches once, with two binary searches over the prefix sum, and
// keeps their prefix values in shared memory ("cooperation"), so each thread locates its wedges'
// rows in shared memory. A closing test is a branch-free binary search in C(v), except where v
// and w both lie in the dense corner of the highest-ranked kCorner rows and columns of C: that
// corner is kept as a bitmap (built once per launch) and the test is one bit.
#include <algorithm>

#include "check.hpp"
#include "kernels.hpp"
#include "memory.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr int kBlock = 256;
constexpr int kSpread = 4;
constexpr int kWindow = kBlock * kSpread;
constexpr std::uint64_t kCorner = 8192;

struct Corner {
  const unsigned* bits = nullptr;  // k * k bits, row-major
  std::uint64_t k = 0;
  std::uint64_t row0 = 0;  // first corner row of C
  std::uint64_t col0 = 0;  // first corner column
};

__device__ __forceinline__ ull row_wedges(const Task& t, std::uint64_t u, bool tri) {
  const ull da = t.A.off[u + 1] - t.A.off[u];
  if (tri) return da * (da - (da > 0)) / 2;
  return da * (t.B.off[u + 1] - t.B.off[u]);
}

__global__ void wedge_count_kernel(Task t, bool tri, ull* wedges) {
  for (std::uint64_t u = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < t.rows; u += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    wedges[u] = row_wedges(t, u, tri);
}

// Inclusive prefix sum, one block per kBlock-row tile then a serial pass over the tile sums:
// kept simple; cub would do as well.
__global__ void __launch_bounds__(kBlock)
    scan_tiles_kernel(ull* x, std::uint64_t n, ull* tile_sums) {
  __shared__ ull tmp[kBlock / 32 + 1];
  const BlockGroup<kBlock> g;
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kBlock + threadIdx.x;
  const ull v = i < n ? x[i] : 0;
  ull sum;
  const ull ex = g.exclusive_scan(v, &sum, tmp);
  if (i < n) x[i] = ex + v;
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kBlock)
    add_tile_base_kernel(ull* x, std::uint64_t n, const ull* tile_prefix) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (blockIdx.x > 0 && i < n) x[i] += tile_prefix[blockIdx.x - 1];
}

void inclusive_scan(ull* x, std::uint64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const std::uint64_t tiles = (n + kBlock - 1) / kBlock;
  AsyncBuffer<ull> sums(tiles, stream);
  scan_tiles_kernel<<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(x, n, sums.get());
  TS_CUDA_CHECK_LAUNCH();
  if (tiles > 1) {
    inclusive_scan(sums.get(), tiles, stream);
    add_tile_base_kernel<<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(x, n, sums.get());
    TS_CUDA_CHECK_LAUNCH();
  }
}

__global__ void corner_kernel(Task t, Corner c, unsigned* bits) {
  for (std::uint64_t r = c.row0 + blockIdx.x; r < t.c_rows; r += gridDim.x) {
    const eid_t cb = t.C.off[r], ce = t.C.off[r + 1];
    for (eid_t e = cb + threadIdx.x; e < ce; e += blockDim.x) {
      const vid_t w = t.C.col[e];
      if (w >= c.col0) {
        const std::uint64_t bit = (r - c.row0) * c.k + (w - c.col0);
        atomicOr(bits + (bit >> 5), 1u << (bit & 31));
      }
    }
  }
}

// Index of the last row r in [lo, hi) with prefix[r] <= g (prefix inclusive, so the wedge g
// lies in the row after it): upper bound of g.
__device__ __forceinline__ std::uint64_t upper_row(const ull* prefix, std::uint64_t n, ull g) {
  std::uint64_t lo = 0;
  while (n > 0) {
    const std::uint64_t half = n >> 1;
    if (prefix[lo + half] <= g) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return lo;  // first row whose inclusive prefix exceeds g
}

// Pairs (i, j), i < j < d, ordered by i then j: the pair with index l.
__device__ __forceinline__ void decode_pair(ull d, ull l, ull& i, ull& j) {
  const double a = 2.0 * static_cast<double>(d) - 1.0;
  double disc = a * a - 8.0 * static_cast<double>(l);
  if (disc < 0) disc = 0;
  ull ii = static_cast<ull>((a - sqrt(disc)) / 2.0);
  auto before = [d](ull x) { return x * (2 * d - x - 1) / 2; };
  while (ii > 0 && before(ii) > l) --ii;
  while (ii + 1 < d && before(ii + 1) <= l) ++ii;
  i = ii;
  j = ii + 1 + (l - before(ii));
}

template <bool PV>
__global__ void __launch_bounds__(kBlock)
    wedge_kernel(Task t, bool tri, const ull* prefix, Corner corner) {
  __shared__ ull s_pre[kWindow + 1];  // s_pre[k]: wedges before row r0 + k
  __shared__ std::uint64_t s_r0;
  __shared__ int s_nrows;
  const ull total = t.rows ? prefix[t.rows - 1] : 0;
  ull found = 0;
  for (ull w0 = static_cast<ull>(blockIdx.x) * kWindow; w0 < total;
       w0 += static_cast<ull>(gridDim.x) * kWindow) {
    const ull w1 = min(total, w0 + kWindow);
    __syncthreads();
    if (threadIdx.x == 0) {
      const std::uint64_t r0 = upper_row(prefix, t.rows, w0);
      const std::uint64_t r1 = upper_row(prefix, t.rows, w1 - 1);
      s_r0 = r0;
      s_nrows = r1 - r0 + 1 <= kWindow ? static_cast<int>(r1 - r0 + 1) : kWindow + 1;
    }
    __syncthreads();
    const std::uint64_t r0 = s_r0;
    const int nrows = s_nrows;  // rows with wedges in the window; rows with none may lie between
    // Rows without wedges inside [r0, r1] would make nrows exceed the window: fall back to global
    // searches in that (rare) case.
    const bool in_shared = nrows <= kWindow;
    if (in_shared) {
      for (int k = threadIdx.x; k <= nrows; k += kBlock)
        s_pre[k] = (r0 + k == 0) ? 0 : prefix[r0 + k - 1];
    }
    __syncthreads();
    for (int s = 0; s < kSpread; ++s) {
      const ull g = w0 + static_cast<ull>(s) * kBlock + threadIdx.x;
      if (g >= w1) break;
      std::uint64_t u;
      ull before;
      if (in_shared) {
        // Row r0 + k holds wedges [s_pre[k], s_pre[k + 1]); rows without wedges repeat a value,
        // and the last entry <= g is the row that holds g.
        const int k = last_le<ull>(s_pre, nrows, g);
        u = r0 + k;
        before = s_pre[k];
      } else {
        u = upper_row(prefix, t.rows, g);
        before = u ? prefix[u - 1] : 0;
      }
      const ull l = g - before;
      const eid_t ab = t.A.off[u];
      ull i, j;
      if (tri) {
        decode_pair(t.A.off[u + 1] - ab, l, i, j);
      } else {
        const ull db = t.B.off[u + 1] - t.B.off[u];
        i = l / db;
        j = l % db;
      }
      const vid_t v = t.A.col[ab + i];
      const vid_t w = t.B.col[t.B.off[u] + j];
      bool closed;
      if (v >= corner.row0 && w >= corner.col0 && corner.k) {
        const std::uint64_t bit = (v - corner.row0) * corner.k + (w - corner.col0);
        closed = (corner.bits[bit >> 5] >> (bit & 31)) & 1u;
      } else {
        const eid_t cb = t.C.off[v];
        closed = contains_bf(t.C.col + cb, t.C.off[v + 1] - cb, w);
      }
      if (closed) {
        ++found;
        if (PV) add_per_vertex(t, u, v, w);
      }
    }
  }
  add_warp_total(t.total, found);
}

template <bool PV>
void launch(const Task& t, const LaunchEnv& env) {
  const bool tri = env.same_views;
  AsyncBuffer<ull> prefix(t.rows, env.stream);
  const int fill_grid = env.sm_count * 8;
  wedge_count_kernel<<<fill_grid, 256, 0, env.stream>>>(t, tri, prefix.get());
  TS_CUDA_CHECK_LAUNCH();
  inclusive_scan(prefix.get(), t.rows, env.stream);

  Corner corner;
  corner.k = std::min<std::uint64_t>({kCorner, t.c_rows, t.col_space});
  if (env.variant == "nocorner") corner.k = 0;
  corner.row0 = t.c_rows - corner.k;
  corner.col0 = t.col_space - corner.k;
  const std::uint64_t words = (corner.k * corner.k + 31) / 32;
  AsyncBuffer<unsigned> bits(std::max<std::uint64_t>(words, 1), env.stream);
  if (corner.k) {
    TS_CUDA_CHECK(cudaMemsetAsync(bits.get(), 0, words * sizeof(unsigned), env.stream));
    corner_kernel<<<env.sm_count * 8, 256, 0, env.stream>>>(t, corner, bits.get());
    TS_CUDA_CHECK_LAUNCH();
  } else {
    corner.row0 = t.c_rows;  // never in the corner
    corner.col0 = ~0u;
  }
  corner.bits = bits.get();
  auto* const k = &wedge_kernel<PV>;
  const int grid = resident_blocks(reinterpret_cast<const void*>(k), kBlock, 0, env);
  k<<<grid, kBlock, 0, env.stream>>>(t, tri, prefix.get(), corner);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_wedge(const Task& t, const LaunchEnv& env) {
  if (env.per_vertex)
    launch<true>(t, env);
  else
    launch<false>(t, env);
}

}  // namespace tristream::cuda::detail
