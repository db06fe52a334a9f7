// cuda/kernel_bitmap.cu — `bitmap`: bitmap intersection after Bisson & Fatica (IEEE TPDS'18),
// for dense parts.
//
// Contract: adds count(A, B, C) to *t.total (and per-vertex counts when asked) for any three
// views satisfying csr.hpp's preconditions; 64-bit offsets and counts.
//
// Method: a thread block per row u marks B(u) in a bitmap, then walks the lists C(v), v in A(u),
// as one flat coalesced sequence (walk_row) and tests one bit per item, then clears the bits it
// set (so the bitmap is never cleared whole). The bitmap covers the id range [first, last] of
// B(u): it lives in shared memory (kWords words, 262,144 ids) when the range fits, which in a
// degree-ordered graph is the case for the high-degree rows whose neighbours are all high-ranked;
// otherwise each resident block owns a bitmap over the whole column space in global memory (the
// grid is capped so these bitmaps take at most kGlobalBudget bytes). Rows are handed out through
// an atomic counter.
#include <algorithm>

#include "check.hpp"
#include "kernels.hpp"
#include "memory.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr int kBlock = 256;
constexpr int kWords = 8192;  // 32 KB of shared bitmap
constexpr std::uint64_t kGlobalBudget = 1ull << 30;

template <bool PV>
__global__ void __launch_bounds__(kBlock)
    bitmap_kernel(Task t, const vid_t* rows, const ull* nrows, ull* counter, unsigned* global_bits,
                  std::uint64_t global_words) {
  __shared__ WalkScratch<kBlock> s_walk;
  __shared__ unsigned s_bits[kWords];
  __shared__ ull s_bcast;
  const BlockGroup<kBlock> g;
  unsigned* my_global = global_bits + blockIdx.x * global_words;
  for (int i = threadIdx.x; i < kWords; i += kBlock) s_bits[i] = 0;
  g.sync();
  const ull n = *nrows;
  ChunkCursor c;
  ull found = 0;
  while (next_index(g, counter, n, 1, c, &s_bcast)) {
    const std::uint64_t u = rows[c.pos++];
    const eid_t bb = t.B.off[u];
    const std::uint64_t len = t.B.off[u + 1] - bb;
    const vid_t* b = t.B.col + bb;
    const vid_t lo = b[0], hi = b[len - 1];
    const bool shared = (static_cast<std::uint64_t>(hi - lo) >> 5) < kWords;
    unsigned* bits = shared ? s_bits : my_global;
    const vid_t base = shared ? lo : 0;
    // Without a column space (0) there is no global bitmap: wide rows search B(u) instead.
    const bool mark = shared || global_words;
    for (std::uint64_t i = threadIdx.x; mark && i < len; i += kBlock) {
      const vid_t x = b[i] - base;
      atomicOr(bits + (x >> 5), 1u << (x & 31));
    }
    g.sync();
    if (mark) {
      found += walk_row<PV, true>(t, u, g, s_walk, lo, hi, [&](vid_t x) {
        x -= base;
        return (bits[x >> 5] >> (x & 31)) & 1u;
      });
    } else {
      found += walk_row<PV, true>(t, u, g, s_walk, lo, hi,
                                  [&](vid_t x) { return contains_bf(b, len, x); });
    }
    g.sync();
    for (std::uint64_t i = threadIdx.x; mark && i < len; i += kBlock) bits[(b[i] - base) >> 5] = 0;
    g.sync();
  }
  add_warp_total(t.total, found);
}

template <bool PV>
void launch(const Task& t, const LaunchEnv& env) {
  AsyncBuffer<vid_t> list(t.rows, env.stream);
  AsyncBuffer<ull> counts(2, env.stream);
  const std::uint64_t bounds[1] = {~0ull};
  bin_rows(t, 1, bounds, list.get(), counts.get(), env);
  TS_CUDA_CHECK(cudaMemsetAsync(counts.get() + 1, 0, sizeof(ull), env.stream));
  auto* const k = &bitmap_kernel<PV>;
  const std::uint64_t words = t.col_space ? (t.col_space + 31) / 32 + 1 : 0;
  int grid = resident_blocks(reinterpret_cast<const void*>(k), kBlock, 0, env);
  if (words)
    grid = static_cast<int>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(grid, kGlobalBudget / (words * sizeof(unsigned)))));
  AsyncBuffer<unsigned> global_bits(std::max<std::uint64_t>(grid * words, 1), env.stream);
  if (words)
    TS_CUDA_CHECK(
        cudaMemsetAsync(global_bits.get(), 0, grid * words * sizeof(unsigned), env.stream));
  k<<<grid, kBlock, 0, env.stream>>>(t, list.get(), counts.get(), counts.get() + 1,
                                     global_bits.get(), words);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_bitmap(const Task& t, const LaunchEnv& env) {
  if (env.per_vertex)
    launch<true>(t, env);
  else
    launch<false>(t, env);
}

}  // namespace tristream::cuda::detail
