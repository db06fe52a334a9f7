// stream/unit_preparer.cpp — a unit's slot layout and blocks (stream/unit_preparer.hpp).
#include "stream/unit_preparer.hpp"

#include <algorithm>

#include "stream/clock.hpp"

namespace tristream::stream {

namespace {

// The host images the block store did not lend are the host slot's.
void slot_images(unsigned char* slot, UnitLayout& L) {
  for (int bi = 0; slot && bi < L.num_blocks; ++bi) {
    const SlotBlock& b = L.blocks[bi];
    if (b.cut) continue;  // (the backend writes it; it has no host image)
    if (!L.host_offsets[bi] && !L.host_packed[bi].valid()) {
      const unsigned char* o = slot + b.offsets_at;
      if (b.packed)
        L.host_packed[bi] = packed_image(o, b.packed_rows);
      else
        L.host_offsets[bi] = reinterpret_cast<const eid_t*>(o);
    }
    if (!L.host_cols[bi]) L.host_cols[bi] = reinterpret_cast<const vid_t*>(slot + b.cols_at);
  }
}

// Packed blocks built in the host slot: the unit uploads its blocks' regions (dense offsets,
// columns) instead of the slot's whole range, and the packed images as host_packed.
void packed_regions(unsigned char* slot, UnitLayout& L) {
  bool any_packed = false;
  for (int bi = 0; bi < L.num_blocks; ++bi) any_packed |= L.blocks[bi].packed && L.uploads(bi);
  if (!slot || !any_packed || L.upload_from >= L.bytes) return;
  for (int bi = 0; bi < L.num_blocks; ++bi) {
    const SlotBlock& b = L.blocks[bi];
    if (!L.uploads(bi)) continue;
    if (!b.packed)
      L.direct.push_back({slot + b.offsets_at, b.offsets_at, dense_offsets_bytes(b.rows)});
    if (b.edges) L.direct.push_back({slot + b.cols_at, b.cols_at, b.edges * sizeof(vid_t)});
  }
  L.upload_from = L.bytes;
}

}  // namespace

UnitPreparer::UnitPreparer(const GraphSource& g, const Plan& plan, ThreadPool& pool,
                           ThreadPool& copy_pool, Recorder& rec, bool per_vertex,
                           std::uint64_t preload_spare, HostRegistrar* registrar,
                           HostBlockStore* shared)
    : g_(g),
      plan_(plan),
      rec_(rec),
      per_vertex_(per_vertex),
      reader_(g, pool, plan.window_chunks, plan.chunk_cache_bytes, rec),
      builder_(plan.partition, reader_),
      own_store_(
          shared ? nullptr
                 : std::make_unique<HostBlockStore>(plan, builder_, rec, registrar, preload_spare)),
      store_(shared ? *shared : *own_store_),
      in_core_(reader_, copy_pool, rec),
      range_(builder_, store_, copy_pool, rec),
      vertex_(plan.partition, builder_) {}

bool UnitPreparer::prepare(std::size_t u, unsigned char* slot, SlotState& st, Staging* staging) {
  const WorkUnit& w = plan_.units[u];
  UnitLayout L;
  L.unit = static_cast<std::int64_t>(u);
  L.per_vertex = per_vertex_;
  // 1. Place the blocks in the slot (A first, so a reused A stays where it is).
  const std::uint64_t a_end = place_blocks(w, st, L);
  // 2. Fill them (the builder of the unit's kind).
  const double t0 = now_s();
  if (!build_blocks(w, slot, L, st, staging)) return false;
  // 3. Describe the host images and what travels how.
  slot_images(slot, L);
  packed_regions(slot, L);
  // 4. Record the transform (less its decompression and waits) and hand the unit to the slot.
  const double t1 = now_s();
  const double dec = rec_.since(&spans_seen_, "decompress", L.unit);
  const double waited = range_.take_waited() + in_core_.take_waited();
  rec_.span("transform", L.unit, t0, t1, L.bytes - L.upload_from);
  rec_.less_transform(std::min(dec + waited, t1 - t0));
  if (L.a_cached) rec_.add_reused(a_end);
  st.layout = std::move(L);
  st.unit = st.layout.unit;
  st.keep.swap(keep_);
  keep_.clear();
  return true;
}

// Places A, then B and C unless they are A or B; returns the end of A. A reused A keeps the
// packing of the slot's previous copy.
std::uint64_t UnitPreparer::place_blocks(const WorkUnit& w, const SlotState& st,
                                         UnitLayout& L) const {
  std::uint64_t at = 0;
  auto place = [&](const BlockInfo& bi) {
    SlotBlock b;
    b.rows = bi.rows;
    b.edges = bi.edges;  // capacity for now (exact except vertex C)
    b.col_space = bi.col_space;
    b.offsets_at = at;
    b.cols_at = at + align_up((bi.rows + 1) * sizeof(eid_t));
    at = b.cols_at + align_up(bi.edges * sizeof(vid_t));
    L.blocks[L.num_blocks] = b;
    return L.num_blocks++;
  };
  L.a = place(w.a);
  const std::uint64_t a_end = at;
  if (plan_.partition.cuts_a()) {
    // pair's A = G_ij, cut by the backend from B = R_i (the rows of part i whole)
    SlotBlock& a = L.blocks[L.a];
    a.cut = true;
    a.cut_lo = plan_.partition.col_lo(w.a.col_part);
    a.cut_hi = plan_.partition.col_hi(w.a.col_part);
  }
  L.b = w.b_is_a ? L.a : place(w.b);
  L.c = w.c_is_a ? L.a : (w.c_is_b ? L.b : place(w.c));
  L.bytes = at;
  TS_CHECK(L.bytes <= plan_.slot_bytes, "a unit is larger than its slot");
  const bool reuse_a = reuses_a(w);
  L.upload_from = reuse_a || L.blocks[L.a].cut ? a_end : 0;
  L.a_cached = reuse_a;
  if (reuse_a) {  // A is what the slot's previous unit left there, packed or not
    const SlotBlock& prev = st.layout.blocks[st.layout.a];
    TS_CHECK(
        st.layout.unit >= 0 && prev.rows == L.blocks[L.a].rows && prev.edges == L.blocks[L.a].edges,
        "a reused block differs from the slot's");
    L.blocks[L.a].packed = prev.packed;
    L.blocks[L.a].packed_rows = prev.packed_rows;
  }
  return a_end;
}

// The unit builder of the unit's kind, and its per-vertex spaces. False on SIGINT (streamed).
bool UnitPreparer::build_blocks(const WorkUnit& w, unsigned char* slot, UnitLayout& L,
                                SlotState& st, Staging* staging) {
  const Partition& P = plan_.partition;
  TS_CHECK(!staging || P.p <= 1, "streamed staging is planned for the in-core unit only");
  if (P.p <= 1) {
    st.space_part[0] = st.space_part[1] = st.space_part[2] = 0;
    if (per_vertex_) {  // (before the build: row pieces are counted during it)
      L.num_spaces = 1;
      L.space_rows[0] = g_.n();
      L.u_space = L.v_space = L.w_space = 0;
    }
    if (staging) {
      L.streamed = true;
      if (g_.offsets()[0] == 0) L.host_offsets[L.a] = g_.offsets();  // the slot's exactly
      if (!(in_core_.has_image() ? in_core_.build_from_image(L, *staging)
                                 : in_core_.build_streamed(L, *staging)))
        return false;
    } else {
      in_core_.build(slot, L);
    }
  } else if (P.scheme == Scheme::Vertex) {
    vertex_.build(w, per_vertex_, slot, L, st);
  } else {
    range_.build(w, reuses_a(w), slot, L, keep_);
    if (per_vertex_) range_spaces(w, L, st);
  }
  return true;
}

// Range and hash: one per-vertex space per distinct part of the roles (u in i, v in j, w in k).
// Pair: w (a global id in B and C) has a space of every vertex, part 0's (bounds[0] = 0), which
// u and v share when they lie in part 0; otherwise u has part i's and v part j's (one if i == j).
void UnitPreparer::range_spaces(const WorkUnit& w, UnitLayout& L, SlotState& st) const {
  const Partition& P = plan_.partition;
  if (P.scheme == Scheme::Pair) {
    L.num_spaces = 0;
    auto space = [&](std::uint32_t part, std::uint64_t rows) {
      st.space_part[L.num_spaces] = part;  // (add_per_vertex maps local l to bounds[part] + l)
      L.space_rows[L.num_spaces] = rows;
      return L.num_spaces++;
    };
    L.w_space = space(0, P.n);
    L.u_space = w.i == 0 ? L.w_space : space(w.i, P.rows(w.i));
    L.v_space = w.j == 0 ? L.w_space : w.j == w.i ? L.u_space : space(w.j, P.rows(w.j));
    return;
  }
  const std::uint32_t parts[3] = {w.i, w.j, w.k};
  int role_space[3];
  L.num_spaces = 0;
  for (int r = 0; r < 3; ++r) {
    role_space[r] = -1;
    for (int s = 0; s < L.num_spaces; ++s)
      if (st.space_part[s] == parts[r]) role_space[r] = s;
    if (role_space[r] < 0) {
      st.space_part[L.num_spaces] = parts[r];
      L.space_rows[L.num_spaces] = plan_.partition.rows(parts[r]);
      role_space[r] = L.num_spaces++;
    }
  }
  L.u_space = role_space[0];
  L.v_space = role_space[1];
  L.w_space = role_space[2];
}

}  // namespace tristream::stream
