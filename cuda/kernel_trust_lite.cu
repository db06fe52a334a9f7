// cuda/kernel_trust_lite.cu — `trust:lite`: a kernel for light rows that packs several whole
// consecutive rows into one warp ("window") and walks their neighbours' lists as one flat,
// coalesced sequence.
//
// Contract: adds to *t.total (and to the per-vertex counts when asked) the part of
// count(A, B, C) that comes from the light rows u: 0 < |A(u)| <= kLiteMax and
// 0 < |B(u)| <= kLiteMax. Rows outside that class are skipped (launch_trust counts them with its
// warp and block kernels, binned by the same key, max(|A(u)|, |B(u)|)). Any three views meeting
// csr.hpp's preconditions; 64-bit offsets and counts.
//
// Each triangle is found once: (u, v, w) is counted by the item w of C(v), v in A(u), that finds
// (w, u) in the window's table of the B lists — the definition of count(A, B, C).
//
// Method. Light rows are where a tile-per-row kernel spends its time on bookkeeping rather than on
// probes (on uniform graphs, and in the blocks of a hash partition, nearly every row has a few to
// a few dozen entries): a table clear, a scan and syncs for a handful of edges. Here:
//   1. The rows are cut into segments handed out through an atomic counter; a warp walks its
//      segment in windows: the next 32 rows' degrees are loaded and scanned, and the window is
//      the longest run of rows with at most 32 edges of A and 64 entries of B in total (heavy rows
//      count as empty). Lane e takes edge e of the window: its row's tag (0..31) and v.
//   2. The window's B lists go into one hash table in shared memory keyed by (id, tag): 512
//      slots of 32 bits where every id is below 2^27 - 1 (at most an eighth full), else 128 of
//      64 bits (at most half full); one insert per entry; the table is cleared once, and each
//      window frees the slots it took (not a clear per window or per row).
//   3. The lists C(v) of the window's edges (empty ones dropped, the rest numbered 0..s-1) are
//      walked as one flat sequence, 32 consecutive items per round: item k0 + lane. The lists
//      starting inside a round are consecutive, so the lane's list is the number of lists
//      starting before the round (carried from round to round) plus the number of list starts
//      at or before its item (one warp OR-reduction of start offsets and a population count): no
//      search, no per-item loop, neighbouring lanes read neighbouring addresses. Each item's
//      address is one multiply-add from its list's entry in shared memory.
//   4. Bytes: each edge reads random 32-byte sectors from DRAM (one offsets lookup and two or
//      three sectors of C(v)), so in core C's offsets are read narrowed to 32 bits (bin_rows
//      writes the copy in the pass it makes anyway), C's columns are loaded evict-first (they are
//      reused only far apart in time; the offsets stay in L2), and the edge to each row's largest
//      neighbour is skipped (no w in C(v) can be in B(u) = A(u)).
//   5. Instructions: with those cuts the issued instructions bound the walk on most shapes
//      (docs/kernels.md), so three rounds per step (three loads in flight per lane) at 32
//      registers (full occupancy: uniform graphs read their lists from DRAM), the window's rows
//      tagged by one OR of their end bits where every row has edges, one-row windows read no
//      tags, and segments of at least a window's rows.
// 32-bit arithmetic inside a window; __syncwarp only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "kernels.hpp"

namespace tristream::cuda::detail {
namespace {

constexpr int kWarps = 8;          // warps per block
constexpr unsigned kWindowA = 32;  // edges of A per window (one per lane)
constexpr unsigned kWindowB = 64;  // entries of B per window (two per lane)
// Table slots per warp: 128 (half full at most) with 64-bit keys, 512 (an eighth full: a missing
// key, most probes, reads 1.15 slots on average against 2.5) with 32-bit ones.
template <class Key>
constexpr int kSlotsLog2 = sizeof(Key) == 8 ? 7 : 9;
// A table slot holds the key (w << 5 | tag): 64 bits, or 32 where every id is below 2^27 - 1
// (Key = unsigned: half the shared-memory bytes and one compare per probe). All ones is free.
template <class Key>
constexpr Key kFree = ~Key{0};
constexpr std::uint64_t kNarrowKeyIds = (std::uint64_t{1} << 27) - 1;  // col_space bound
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned kRounds = 3;  // rounds of 32 items per step: loads in flight per lane
constexpr eid_t kLongList = eid_t{1} << 26;  // 32 lists below this: items fit 32 bits

static_assert(kLiteMax <= kWindowA && kLiteMax <= kWindowB, "a light row fits a window");

template <class Key>
__device__ __forceinline__ Key key_of(vid_t w, unsigned tag) {
  return static_cast<Key>(w) * 32u + tag;  // (tag < 32: w << 5 | tag in one multiply-add)
}

// The slot: a multiplicative hash of the key in 32 bits (a 32-bit key itself: one multiply and a
// shift per probe's start).
template <int BITS>
__device__ __forceinline__ unsigned slot_of(vid_t w, unsigned tag) {
  return (key_of<unsigned>(w, tag) * 0x9e3779b1u) >> (32 - BITS);
}

// Returns the slot taken (the window's end frees it).
template <class Key, int BITS>
__device__ __forceinline__ unsigned insert(Key* table, vid_t w, unsigned tag) {
  unsigned h = slot_of<BITS>(w, tag);
  while (atomicCAS(table + h, kFree<Key>, key_of<Key>(w, tag)) != kFree<Key>)
    h = (h + 1) & ((1u << BITS) - 1);
  return h;
}

template <class Key, int BITS>
__device__ __forceinline__ bool lookup(const Key* table, vid_t w, unsigned tag) {
  const Key key = key_of<Key>(w, tag);
  unsigned h = slot_of<BITS>(w, tag);
  Key y = table[h];
  while (y != key && y != kFree<Key>) {
    h = (h + 1) & ((1u << BITS) - 1);
    y = table[h];
  }
  return y == key;
}

// Index of the window row holding item j: the number of rows whose inclusive prefix is <= j
// (prefixes ascending over lanes 0..k-1). Every lane of the warp must call it.
__device__ __forceinline__ unsigned row_of(unsigned inclusive, unsigned k, unsigned j) {
  unsigned pos = 0;
#pragma unroll
  for (unsigned step = 16; step > 0; step >>= 1) {
    const unsigned x = __shfl_sync(kFull, inclusive, (pos + step - 1) & 31);
    if (pos + step <= k && x <= j) pos += step;
  }
  return pos;
}

struct WarpLists {
  // Each non-empty list's address less 4 bytes per item before it in the walk: item k of the
  // walk, in list j, is at at[j] + 4 k (one multiply-add per load, no offset arithmetic).
  std::uint64_t at[32];
  unsigned pre[32];  // exclusive prefix of the list lengths
  unsigned tag[32];  // the window row of the list's edge
  vid_t v[32];       // the edge's v (per-vertex output only)
};

// COff: the type of C's row offsets as the kernel reads them (eid_t, or std::uint32_t narrowed
// by bin_rows in core: half the bytes per random lookup). EVICT_FIRST: C's columns are loaded
// with the evict-first hint (ld.global.cs; each list is read once per in-edge, far apart in
// time, so keeping them only pushes out the offsets). MINB: blocks per SM the registers must
// allow (8 = 32 registers, full occupancy). Key: the table's slots (unsigned only when
// t.col_space <= kNarrowKeyIds).
template <bool PV, class COff, bool EVICT_FIRST, int MINB, class Key, int BITS = kSlotsLog2<Key>>
__global__ void __launch_bounds__(kWarps * 32, MINB)
    trust_lite_kernel(Task t, const COff* c_off, ull* counter, ull segments, ull seg_rows,
                      bool prune, bool clear_each) {
  // A warp's table and lists side by side: both addressed from one base register (the walk
  // reads the lists at fixed offsets from the table).
  struct WarpShared {
    Key table[1u << BITS];
    WarpLists lists;
  };
  __shared__ WarpShared s_warp[kWarps];
  const unsigned lane = threadIdx.x & 31;
  Key* const table = s_warp[threadIdx.x >> 5].table;
  WarpLists& L = s_warp[threadIdx.x >> 5].lists;
  const bool same_ab = t.A.off == t.B.off && t.A.col == t.B.col;
  const bool in_core = prune && same_ab;  // (prune: LaunchEnv::after_v)
  // c_off[v] indexes c_col: the narrowed offsets start at 0, the wide ones are C's own.
  const vid_t* const c_col = sizeof(COff) == sizeof(eid_t) ? t.C.col : t.C.col + t.C.off[0];
  auto load_at = [](const vid_t* p) -> vid_t { return EVICT_FIRST ? __ldcs(p) : *p; };
  // The table is cleared once; each window frees the slots it took (at most two per lane),
  // instead of clearing all of them.
  for (unsigned i = lane; i < (1u << BITS); i += 32) table[i] = kFree<Key>;
  __syncwarp();
  constexpr unsigned kNoSlot = ~0u;
  ull found = 0;
  for (;;) {
    ull seg = 0;
    if (lane == 0) seg = atomicAdd(counter, 1ull);
    seg = __shfl_sync(kFull, seg, 0);
    if (seg >= segments) break;
    const std::uint64_t r_end = min((seg + 1) * seg_rows, static_cast<ull>(t.rows));
    std::uint64_t r = seg * seg_rows;
    // The next window's row offsets are loaded while the current window is counted.
    eid_t na0 = 0, na1 = 0, nb0 = 0, nb1 = 0;
    auto fetch = [&](std::uint64_t first) {
      const std::uint64_t row = first + lane;
      if (row < r_end) {
        na0 = t.A.off[row];
        na1 = t.A.off[row + 1];
        nb0 = same_ab ? na0 : t.B.off[row];
        nb1 = same_ab ? na1 : t.B.off[row + 1];
      }
    };
    fetch(r);
    while (r < r_end) {
      // 1. The window: degrees of the next 32 rows, heavy rows as empty, inclusive scans.
      const std::uint64_t row = r + lane;
      unsigned da = 0, db = 0;
      const eid_t a0 = na0, b0 = nb0;
      if (row < r_end && na1 > na0 && nb1 > nb0 && na1 - na0 <= kLiteMax && nb1 - nb0 <= kLiteMax) {
        da = static_cast<unsigned>(na1 - na0);
        db = static_cast<unsigned>(nb1 - nb0);
      }
      const unsigned ia = warp_inclusive_scan(da, lane);
      const unsigned ib = same_ab ? ia : warp_inclusive_scan(db, lane);
      const unsigned fits = __ballot_sync(kFull, row < r_end && ia <= kWindowA && ib <= kWindowB);
      const unsigned k = __popc(fits);  // a prefix of the lanes; >= 1 (row r is light or empty)
      const unsigned ea = __shfl_sync(kFull, ia, k - 1), eb = __shfl_sync(kFull, ib, k - 1);
      const std::uint64_t r0 = r;
      r += k;
      if (r < r_end) fetch(r);
      if (ea == 0) continue;
      // 2. Lane e's edge (e < ea): its row's tag and v; the table of the window's B lists.
      if (clear_each) {  // (benchmark switch `c`: the whole table cleared per window)
        for (unsigned i = lane; i < (1u << BITS); i += 32) table[i] = kFree<Key>;
        __syncwarp();
      }
      // The row of lane e's edge: the number of window rows ending at or before e. When every
      // row of the window has edges (the usual case) their ends are distinct — one warp OR of
      // end bits and a population count — and the window's edges follow each other in A from
      // its first row's; else a search over the scan (row_of) and the row's own offset.
      unsigned tag;
      vid_t v = kEmpty;
      if (__ballot_sync(kFull, lane < k && da == 0) == 0) {
        const unsigned ends = __reduce_or_sync(kFull, lane < k && ia < 32 ? 1u << ia : 0u);
        tag = __popc(ends & ((2u << lane) - 1));
        const eid_t first = __shfl_sync(kFull, a0, 0);
        if (lane < ea) v = t.A.col[first + lane];
      } else {
        tag = row_of(ia, k, lane);
        const eid_t base = __shfl_sync(kFull, a0, tag & 31);
        const unsigned ex = __shfl_sync(kFull, ia - da, tag & 31);
        if (lane < ea) v = t.A.col[base + (lane - ex)];
      }
      unsigned mine[kWindowB / 32];  // the slots this lane took
#pragma unroll
      for (unsigned q = 0; q < kWindowB / 32; ++q) mine[q] = kNoSlot;
      if (same_ab) {
        if (lane < ea) mine[0] = insert<Key, BITS>(table, v, tag);
      } else {
#pragma unroll
        for (unsigned q = 0; q < kWindowB / 32; ++q) {
          const unsigned j = lane + 32 * q;
          const unsigned bt = row_of(ib, k, j);
          const eid_t base = __shfl_sync(kFull, b0, bt & 31);
          const unsigned ex = __shfl_sync(kFull, ib - db, bt & 31);
          if (j < eb) mine[q] = insert<Key, BITS>(table, t.B.col[base + (j - ex)], bt);
        }
      }
      // (after the window's last lookup, every lane's)
      auto free_mine = [&] {
        __syncwarp();
#pragma unroll
        for (unsigned q = 0; q < kWindowB / 32; ++q)
          if (mine[q] != kNoSlot && !clear_each) table[mine[q]] = kFree<Key>;
      };
      // w closes a triangle with the edge u -> v of window row tg when (w, tg) is in the table.
      // The window's hits are counted in 32 bits (fewer than 2^32 items per window, as below).
      unsigned hits = 0;
      auto test = [&](vid_t w, unsigned tg, vid_t v_of_edge) {
        const bool hit = lookup<Key, BITS>(table, w, tg);
        hits += hit;
        if (PV && hit) add_per_vertex(t, r0 + tg, v_of_edge, w);
      };
      // 3. The non-empty lists C(v), numbered in order, and their prefix. In core (A = B = C, one
      //    id space) the edge to a row's largest neighbour closes no triangle — every w in C(v)
      //    exceeds v, and B(u) holds nothing above v —, so its list is not read at all.
      const unsigned next_tag = __shfl_down_sync(kFull, tag, 1);
      const bool last_of_row = in_core && (lane + 1 >= ea || next_tag != tag);
      COff c0 = 0, c1 = 0;
      if (v != kEmpty && !last_of_row) {
        c0 = c_off[v];
        c1 = c_off[v + 1];
      }
      if (__any_sync(kFull, c1 - c0 >= kLongList)) {
        // Rare: a list so long that 32 of them could overflow the 32-bit item numbers. Each
        // lane walks its own list.
        __syncwarp();
        for (COff i = c0; i < c1; ++i) test(load_at(c_col + i), tag, v);
        found += hits;
        free_mine();
        __syncwarp();
        continue;
      }
      const unsigned len = static_cast<unsigned>(c1 - c0);
      const unsigned nonempty = __ballot_sync(kFull, len > 0);
      const unsigned lists = __popc(nonempty);
      const unsigned incl = warp_inclusive_scan(len, lane);
      const unsigned total = __shfl_sync(kFull, incl, 31);
      if (len > 0) {
        const unsigned c = __popc(nonempty & ((1u << lane) - 1));
        L.at[c] = reinterpret_cast<std::uint64_t>(c_col + c0) -
                  std::uint64_t{sizeof(vid_t)} * (incl - len);
        L.pre[c] = incl - len;
        L.tag[c] = tag;
        if (PV) L.v[c] = v;
      }
      __syncwarp();
      const unsigned my_pre = lane < lists ? L.pre[lane] : ~0u;  // list `lane` starts here
      // 4. The flat walk: round k0 covers items k0 .. k0 + 31. The list of item k0 + lane is
      //    the last one starting at or before it: the lists starting before the round (carried
      //    from round to round) and those starting in the round at or before the lane's item
      //    (one warp OR of start bits; every list is non-empty, so no two share a bit). kRounds
      //    rounds per step, so that each lane has that many loads in flight.
      const unsigned upto = (2u << lane) - 1;  // lanes 0..lane (wraps to all for lane 31)
      unsigned before = 0;                     // lists starting before the round
      auto list_of = [&](unsigned k0) {
        const unsigned off = my_pre - k0;  // wraps for lists before the round
        const unsigned starts = __reduce_or_sync(kFull, off < 32 ? 1u << off : 0u);
        const unsigned j = before + __popc(starts & upto) - 1;
        before += __popc(starts);
        return j;
      };
      // A window of one row (the usual one where rows have 17-32 edges) tags every item 0: its
      // walk reads no tags.
      auto walk = [&](auto one_row) {
        for (unsigned k0 = 0; k0 < total; k0 += 32 * kRounds) {
          unsigned j[kRounds];
          vid_t w[kRounds];
#pragma unroll
          for (unsigned q = 0; q < kRounds; ++q) {
            const unsigned base = k0 + 32 * q;
            j[q] = list_of(base);
            const unsigned item = base + lane;
            w[q] = item < total ? load_at(reinterpret_cast<const vid_t*>(
                                      L.at[j[q]] + std::uint64_t{sizeof(vid_t)} * item))
                                : kEmpty;
          }
          // (a branch per round: a round past the last item is skipped by the whole warp, and the
          // lookups wait for every round's load to be issued)
#pragma unroll
          for (unsigned q = 0; q < kRounds; ++q)
            if (w[q] != kEmpty)
              test(w[q], decltype(one_row)::value ? 0u : L.tag[j[q]], PV ? L.v[j[q]] : 0);
        }
      };
      if (__shfl_sync(kFull, ia, 0) == ea)
        walk(std::true_type{});
      else
        walk(std::false_type{});
      found += hits;
      free_mine();
      __syncwarp();  // the table and lists are rebuilt by the next window
    }
  }
  add_warp_total(t.total, found);
}

// cfg bits: 1 evict-first loads of C's columns, 2 at most 32 registers (8 blocks per SM), 4
// 32-bit table keys (only with 1 and 2: the shipping choice; the others are benchmark switches).
template <bool PV, class COff>
const void* pick_cfg(int cfg) {
  switch (cfg) {
    case 0:
      return reinterpret_cast<const void*>(&trust_lite_kernel<PV, COff, false, 1, ull>);
    case 1:
      return reinterpret_cast<const void*>(&trust_lite_kernel<PV, COff, true, 1, ull>);
    case 2:
      return reinterpret_cast<const void*>(&trust_lite_kernel<PV, COff, false, 8, ull>);
    case 3:
      return reinterpret_cast<const void*>(&trust_lite_kernel<PV, COff, true, 8, ull>);
    default:
      return reinterpret_cast<const void*>(&trust_lite_kernel<PV, COff, true, 8, unsigned>);
  }
}
const void* pick_kernel(bool pv, bool narrow, int cfg) {
  if (narrow) return pv ? pick_cfg<true, std::uint32_t>(cfg) : pick_cfg<false, std::uint32_t>(cfg);
  return pv ? pick_cfg<true, eid_t>(cfg) : pick_cfg<false, eid_t>(cfg);
}

}  // namespace

namespace {

// Benchmark switches, "lite-FLAGS" (plain "lite" is "lite-sbk"): s loads C's columns
// evict-first; b caps the registers at 32 for 8 blocks per SM; k keys the table in 32 bits where
// the ids allow (with s and b only); c clears the whole table per window instead of freeing the
// slots the window took; x turns the in-core pruning of each row's last edge off; 6
// keeps C's offsets 64-bit; q and h hand out 4 and 16 segments of rows per warp instead of 8.
// docs/kernels.md has what each was worth.
struct LiteFlags {
  bool evict_first, cap_registers, narrow_keys, prune, wide, clear_each;
  std::uint64_t segments_per_warp;
};
LiteFlags lite_flags(const std::string& variant) {
  const std::string f = variant.size() > 4 ? variant.substr(5) : std::string("sbk");
  auto has = [&](char c) { return f.find(c) != std::string::npos; };
  return {has('s'),
          has('b'),
          has('k'),
          !has('x'),
          has('6'),
          has('c'),
          has('q') ? 4u : has('h') ? 16u : 8u};
}

}  // namespace

bool lite_narrows(const Task& t, const LaunchEnv& env) {
  return !lite_flags(env.variant).wide && env.same_views &&
         env.a_edges < (std::uint64_t{1} << 32) && t.c_rows == t.rows;
}

void launch_trust_lite(const Task& t, const LaunchEnv& env, cudaStream_t stream, ull* counter,
                       const std::uint32_t* c_off32) {
  if (t.rows == 0) return;
  const LiteFlags f = lite_flags(env.variant);
  int cfg = (f.evict_first ? 1 : 0) | (f.cap_registers ? 2 : 0);
  if (cfg == 3 && f.narrow_keys && t.col_space > 0 && t.col_space <= kNarrowKeyIds) cfg = 4;
  const void* kernel = pick_kernel(env.per_vertex, c_off32 != nullptr, cfg);
  const int grid = resident_blocks(kernel, kWarps * 32, 0, env);
  // Eight segments per warp: dynamic enough that no warp runs long after the others (four left
  // 4% of the time to the tail on uniform graphs), few atomics. A segment holds at least the rows
  // of one window on average (32 edges of A; 32 rows where A's size is unknown), so that windows
  // are seldom cut at a segment's end; a floor of 32 rows gave small graphs of long light rows
  // (one row per window) two segments per warp, the last a tail of up to half a warp's work.
  const std::uint64_t warps = static_cast<std::uint64_t>(grid) * kWarps;
  const std::uint64_t per_warp = f.segments_per_warp;
  std::uint64_t min_rows = 32;
  if (env.a_edges != ~0ull && env.a_edges > 0)
    min_rows = std::clamp<std::uint64_t>(kWindowA * t.rows / env.a_edges, 1, 32);
  ull seg_rows =
      std::max<std::uint64_t>(min_rows, (t.rows + per_warp * warps - 1) / (per_warp * warps));
  ull segments = (t.rows + seg_rows - 1) / seg_rows;
  TS_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(ull), stream));
  Task task = t;
  const void* c_off = c_off32 ? static_cast<const void*>(c_off32) : t.C.off;
  // The edge to a row's largest neighbour closes no triangle when A = B are rows of the oriented
  // C (in core, or a row piece of it: LaunchEnv::after_v).
  bool prune = f.prune && env.after_v;
  bool clear_each = f.clear_each;
  void* args[] = {&task, &c_off, &counter, &segments, &seg_rows, &prune, &clear_each};
  TS_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(grid)), dim3(kWarps * 32), args,
                                 0, stream));
}

}  // namespace tristream::cuda::detail
