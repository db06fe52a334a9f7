// stream/slices.cpp — the slices of a unit: boundaries over C's rows that balance the estimated
// work (slice_bounds, tristream/pipeline.hpp).
#include <vector>

#include "common/thread_pool.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

std::vector<std::uint64_t> slice_bounds(const UnitLayout& L, std::uint32_t slices) {
  TS_CHECK(slices >= 1, "a unit of no slices");
  const std::uint64_t a_rows = L.blocks[L.a].rows, c_rows = L.blocks[L.c].rows;
  const eid_t* a_off = L.host_offsets[L.a];
  const PackedRows& a_pk = L.host_packed[L.a];
  const eid_t* b_off = L.host_offsets[L.b];
  const PackedRows& b_pk = L.host_packed[L.b];
  const eid_t* c_off = L.host_offsets[L.c];
  const PackedRows& c_pk = L.host_packed[L.c];
  const vid_t* a_cols = L.host_cols[L.a];
  if ((!a_off && !a_pk.valid()) || (!b_off && !b_pk.valid()) || (!c_off && !c_pk.valid()) ||
      (!a_cols && L.blocks[L.a].edges > 0))
    throw Error(ErrorKind::Internal, "a unit's slices need the host images of A, B and C");
  // 1. The estimated work of every middle vertex v: hashing C(v), and probing it with B(u) for
  // each of its in-edges u -> v in A.
  std::vector<double> work(c_rows, 0.0);
  for (std::uint64_t v = 0; v < c_rows; ++v)
    work[v] = static_cast<double>(c_off ? c_off[v + 1] - c_off[v] : c_pk.degree(v));
  auto add_row = [&](std::uint64_t u, eid_t e0, eid_t e1) {
    const double probe = static_cast<double>(b_off ? b_off[u + 1] - b_off[u] : b_pk.degree(u)) + 1;
    for (eid_t e = e0; e < e1; ++e)
      if (a_cols[e] < c_rows) work[a_cols[e]] += probe;
  };
  if (a_off) {
    for (std::uint64_t u = 0; u < a_rows; ++u) add_row(u, a_off[u], a_off[u + 1]);
  } else {
    for (std::uint64_t x = 0; x < a_pk.count; ++x)
      add_row(a_pk.ids[x], a_pk.offsets[x], a_pk.offsets[x + 1]);
  }
  // 2. Boundary x: the first row before which at least x / slices of the work lies (by rows
  // when there is no work); boundary 0 is 0 and boundary `slices` is C's rows.
  double total = 0;
  for (double w : work) total += w;
  std::vector<std::uint64_t> bounds(slices + 1, c_rows);
  bounds[0] = 0;
  if (total <= 0) {
    for (std::uint32_t x = 1; x < slices; ++x) bounds[x] = chunk_range(c_rows, slices, x).lo;
    return bounds;
  }
  double sum = 0;
  std::uint32_t x = 1;
  for (std::uint64_t v = 0; v < c_rows && x < slices; ++v) {
    while (x < slices && sum >= total * x / slices) bounds[x++] = v;
    sum += work[v];
  }
  return bounds;
}

}  // namespace tristream
