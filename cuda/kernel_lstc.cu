// cuda/kernel_lstc.cu — `lstc`: the LSTC kernel (ICPE'26): one thread block per source vertex.
//
// Contract: adds count(A, B, C) to *t.total (and per-vertex counts when asked) for any three
// views satisfying csr.hpp's preconditions; 64-bit offsets and counts.
//
// Method: the block of row u loads B(u) into shared memory in tiles of kTile ids. For each tile,
// the block's threads walk the lists C(v), v in A(u), round-robin as one flat sequence (walk_row:
// neighbouring threads read neighbouring addresses) and binary-search each w in the tile; items
// outside the tile's [first, last] range are rejected without a search. Rows are handed out one
// at a time through an atomic counter over the rows with |A(u)| > 0 and |B(u)| > 0.
#include "check.hpp"
#include "kernels.hpp"
#include "memory.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr int kBlock = 256;
constexpr int kTile = 4096;

template <bool PV>
__global__ void __launch_bounds__(kBlock)
    lstc_kernel(Task t, const vid_t* rows, const ull* nrows, ull* counter) {
  __shared__ WalkScratch<kBlock> s_walk;
  __shared__ vid_t s_tile[kTile];
  __shared__ ull s_bcast;
  const BlockGroup<kBlock> g;
  const ull n = *nrows;
  ChunkCursor c;
  ull found = 0;
  while (next_index(g, counter, n, 1, c, &s_bcast)) {
    const std::uint64_t u = rows[c.pos++];
    const eid_t bb = t.B.off[u], be = t.B.off[u + 1];
    for (eid_t tb = bb; tb < be; tb += kTile) {
      const int len = static_cast<int>(min(static_cast<eid_t>(kTile), be - tb));
      for (int i = threadIdx.x; i < len; i += kBlock) s_tile[i] = t.B.col[tb + i];
      g.sync();
      found += walk_row<PV, false>(t, u, g, s_walk, s_tile[0], s_tile[len - 1],
                                   [&](vid_t x) { return contains_bf(s_tile, len, x); });
      g.sync();
    }
  }
  add_warp_total(t.total, found);
}

template <bool PV>
void launch(const Task& t, const LaunchEnv& env) {
  AsyncBuffer<vid_t> list(t.rows, env.stream);
  AsyncBuffer<ull> counts(2, env.stream);  // [0]: rows listed, [1]: work counter
  const std::uint64_t bounds[1] = {~0ull};
  bin_rows(t, 1, bounds, list.get(), counts.get(), env);
  TS_CUDA_CHECK(cudaMemsetAsync(counts.get() + 1, 0, sizeof(ull), env.stream));
  auto* const k = &lstc_kernel<PV>;
  const int grid = resident_blocks(reinterpret_cast<const void*>(k), kBlock, 0, env);
  k<<<grid, kBlock, 0, env.stream>>>(t, list.get(), counts.get(), counts.get() + 1);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_lstc(const Task& t, const LaunchEnv& env) {
  if (env.per_vertex)
    launch<true>(t, env);
  else
    launch<false>(t, env);
}

}  // namespace tristream::cuda::detail
