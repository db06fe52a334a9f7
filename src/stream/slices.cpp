// stream/slices.cpp — the slices of a unit: boundaries over C's rows that balance the estimated
// work (slice_bounds, tristream/pipeline.hpp).
//
// The work of a middle vertex v is |C(v)| plus, over the edges u -> v of A, |B(u)| + 1: exact
// integers, so the boundaries are the same for any number of threads (workers that count the
// slices of one unit each compute them and must agree). Two passes over A's edges, split among
// the pool's threads:
//   1. the work per bucket of consecutive middle vertices (at most kBuckets buckets, one
//      histogram per task);
//   2. the exact work of every vertex of the buckets a boundary falls in (at most slices - 1
//      buckets; the few edges into them add atomically).
// Boundary x is then the first row v before which at least x / slices of the total work lies,
// found in its bucket.
#include <algorithm>
#include <vector>

#include "common/thread_pool.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

namespace {

constexpr std::uint64_t kBuckets = 4096;
constexpr std::size_t kTasks = 64;
using u128 = unsigned __int128;

// A, B and C as the host images give them. A cut block (SlotBlock::cut) is walked through B's
// rows, its columns those in [cut_lo, cut_hi) less cut_lo.
struct Views {
  std::uint64_t c_rows = 0;
  HostRows a_rows;  // A's rows, or B's for a cut A
  HostRows b;
  const eid_t* c_off = nullptr;
  const PackedRows* c_pk = nullptr;
  bool cut = false;
  std::uint64_t cut_lo = 0, cut_hi = 0;
  // A's rows to walk: dense rows, or the packed image's entries
  std::uint64_t a_items() const { return a_rows.items(); }
  std::uint64_t c_degree(std::uint64_t v) const {
    return c_off ? c_off[v + 1] - c_off[v] : c_pk->degree(v);
  }
  // calls f(v, probe) for every edge u -> v of A's items [x0, x1)
  template <class F>
  void edges(std::uint64_t x0, std::uint64_t x1, F&& f) const {
    a_rows.for_each(x0, x1, [&](std::uint64_t u, const vid_t* cols, std::uint64_t deg) {
      const vid_t *s = cols, *t = cols + deg;
      if (cut) cut_range(cols, deg, cut_lo, cut_hi, &s, &t);
      if (s == t) return;
      const std::uint64_t probe = (cut ? deg : b.degree(u)) + 1;  // |B(u)| + 1
      for (; s < t; ++s) f(static_cast<vid_t>(*s - (cut ? cut_lo : 0)), probe);
    });
  }
};

// Runs fn(t, lo, hi) over [0, n) cut into `tasks` ranges, on the pool when there is one.
template <class F>
void split(ThreadPool* pool, std::size_t tasks, std::uint64_t n, F&& fn) {
  auto one = [&](std::size_t t) { fn(t, n * t / tasks, n * (t + 1) / tasks); };
  if (pool && tasks > 1)
    pool->run(tasks, one);
  else
    for (std::size_t t = 0; t < tasks; ++t) one(t);
}

}  // namespace

std::vector<std::uint64_t> slice_bounds(const UnitLayout& L, std::uint32_t slices,
                                        ThreadPool* pool) {
  TS_CHECK(slices >= 1, "a unit of no slices");
  Views V;
  const SlotBlock& A = L.blocks[L.a];
  V.c_rows = L.blocks[L.c].rows;
  V.b = L.host_rows(L.b);
  V.cut = A.cut;
  V.cut_lo = A.cut_lo;
  V.cut_hi = A.cut_hi;
  V.a_rows = A.cut ? V.b : L.host_rows(L.a);
  V.c_off = L.host_offsets[L.c];
  V.c_pk = &L.host_packed[L.c];
  if (!V.a_rows.valid() || (!V.b.offsets && !V.b.packed.valid()) || (!V.c_off && !V.c_pk->valid()))
    throw Error(ErrorKind::Internal, "a unit's slices need the host images of A, B and C");
  const std::uint64_t c_rows = V.c_rows;
  std::vector<std::uint64_t> bounds(slices + 1, c_rows);
  bounds[0] = 0;
  if (slices == 1) return bounds;
  // 1. The work per bucket of 2^shift consecutive middle vertices.
  unsigned shift = 0;
  while ((c_rows >> shift) >= kBuckets) ++shift;
  const std::uint64_t nb = (c_rows >> shift) + 1;
  const std::size_t tasks = pool ? std::min<std::size_t>(kTasks, 4 * pool->threads()) : 1;
  std::vector<std::vector<std::uint64_t>> part(tasks, std::vector<std::uint64_t>(nb, 0));
  split(pool, tasks, V.a_items(), [&](std::size_t t, std::uint64_t x0, std::uint64_t x1) {
    std::vector<std::uint64_t>& h = part[t];
    V.edges(x0, x1, [&](vid_t v, std::uint64_t probe) {
      if (v < c_rows) h[v >> shift] += probe;
    });
  });
  split(pool, tasks, c_rows, [&](std::size_t t, std::uint64_t v0, std::uint64_t v1) {
    std::vector<std::uint64_t>& h = part[t];
    for (std::uint64_t v = v0; v < v1; ++v) h[v >> shift] += V.c_degree(v);
  });
  std::vector<std::uint64_t> start(nb + 1, 0);  // the work before each bucket
  for (std::uint64_t b = 0; b < nb; ++b) {
    std::uint64_t s = 0;
    for (const auto& h : part) s += h[b];
    start[b + 1] = start[b] + s;
  }
  std::vector<std::vector<std::uint64_t>>().swap(part);
  const std::uint64_t total = start[nb];
  if (total == 0) {  // (by rows when there is no work)
    for (std::uint32_t x = 1; x < slices; ++x) bounds[x] = chunk_range(c_rows, slices, x).lo;
    return bounds;
  }
  // 2. Boundary x lies in the last bucket that starts with less than x / slices of the work;
  //    the exact work of those buckets' vertices.
  const auto reached = [&](std::uint64_t prefix, std::uint32_t x) {
    return static_cast<u128>(prefix) * slices >= static_cast<u128>(total) * x;
  };
  std::vector<std::uint64_t> bucket_of(slices, 0);
  std::vector<std::int64_t> slot(nb, -1);  // a selected bucket's place in `work`
  std::vector<std::uint64_t> picked;
  for (std::uint32_t x = 1; x < slices; ++x) {
    std::uint64_t b = 0;
    while (b + 1 < nb && !reached(start[b + 1], x)) ++b;
    bucket_of[x] = b;
    if (slot[b] < 0) {
      slot[b] = static_cast<std::int64_t>(picked.size());
      picked.push_back(b);
    }
  }
  const std::uint64_t width = std::uint64_t{1} << shift;
  std::vector<std::uint64_t> work(picked.size() * width, 0);
  auto at = [&](std::uint64_t v) -> std::uint64_t* {
    const std::int64_t s = slot[v >> shift];
    return s < 0 ? nullptr : &work[static_cast<std::uint64_t>(s) * width + (v & (width - 1))];
  };
  split(pool, tasks, V.a_items(), [&](std::size_t, std::uint64_t x0, std::uint64_t x1) {
    V.edges(x0, x1, [&](vid_t v, std::uint64_t probe) {
      if (v >= c_rows) return;
      if (std::uint64_t* w = at(v)) __atomic_fetch_add(w, probe, __ATOMIC_RELAXED);
    });
  });
  for (std::uint64_t b : picked)
    for (std::uint64_t v = b << shift; v < std::min(c_rows, (b + 1) << shift); ++v)
      *at(v) += V.c_degree(v);
  // 3. In its bucket, boundary x is the first row v before which at least x / slices lies.
  for (std::uint32_t x = 1; x < slices; ++x) {
    const std::uint64_t b = bucket_of[x];
    const std::uint64_t end = std::min(c_rows, (b + 1) << shift);
    std::uint64_t prefix = start[b], v = b << shift;
    while (v < end && !reached(prefix, x)) prefix += *at(v++);
    bounds[x] = reached(prefix, x) ? v : c_rows;
  }
  return bounds;
}

}  // namespace tristream
