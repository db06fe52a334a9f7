// stream/unit_range.cpp — a range, hash or pair unit's blocks (stream/unit_range.hpp): each
// block is the one its BlockInfo names (row part, column part or pair's suffix code).
#include "stream/unit_range.hpp"

#include "stream/clock.hpp"
#include "stream/parallel_copy.hpp"

namespace tristream::stream {

namespace {
// Block bi's host image is the cached block, kept alive until the slot is prepared again.
void lend_image(UnitLayout& L, int bi, const std::shared_ptr<HostBlock>& hb,
                std::vector<std::shared_ptr<const void>>& keep) {
  L.host_offsets[bi] = hb->packed ? nullptr : hb->off.data();
  L.host_packed[bi] = hb->packed_view();
  L.host_cols[bi] = hb->cols.data();
  keep.push_back(hb);
}
}  // namespace

RangeUnitBuilder::RangeUnitBuilder(BlockBuilder& builder, HostBlockStore& store,
                                   ThreadPool& copy_pool, Recorder& rec)
    : builder_(builder), store_(store), copy_pool_(copy_pool), caller_{rec} {}

double RangeUnitBuilder::take_waited() {
  const double w = caller_.waited_s;
  caller_.waited_s = 0;
  return w;
}

void RangeUnitBuilder::build(const WorkUnit& w, bool reuse_a, unsigned char* slot, UnitLayout& L,
                             std::vector<std::shared_ptr<const void>>& keep) {
  if (from_store(w, reuse_a, slot, L, keep)) return;
  BlockWriter A, B, C;
  const bool build_a = !reuse_a && !L.blocks[L.a].cut;  // (a cut A is the backend's)
  const bool build_b = !w.b_is_a;
  if (build_a) A.start(slot, L.blocks[L.a], L.blocks[L.a].edges);
  if (build_b) B.start(slot, L.blocks[L.b], L.blocks[L.b].edges);
  BlockWriter* outs[2];
  std::uint32_t cps[2];
  int nout = 0;
  if (build_a) {
    outs[nout] = &A;
    cps[nout++] = w.a.col_part;
  }
  if (build_b) {
    outs[nout] = &B;
    cps[nout++] = w.b.col_part;
  }
  if (nout && !builder_.build_into(w.a.row_part, nout, cps, outs, L.unit)) {
    builder_.walk(
        w.a.row_part,
        [&](const vid_t* cols, std::uint64_t deg) {
          if (build_a) {
            builder_.filter_row(cols, deg, w.a.col_part, A);
            A.end_row();
          }
          if (build_b) {
            builder_.filter_row(cols, deg, w.b.col_part, B);
            B.end_row();
          }
        },
        L.unit);
  }
  TS_CHECK(!build_a || A.edges == L.blocks[L.a].edges, "block A differs from the census");
  TS_CHECK(!build_b || B.edges == L.blocks[L.b].edges, "block B differs from the census");
  if (build_a) A.mark(L.blocks[L.a]);
  if (build_b) B.mark(L.blocks[L.b]);
  if (!w.c_is_a && !w.c_is_b) {
    C.start(slot, L.blocks[L.c], L.blocks[L.c].edges);
    BlockWriter* co[1] = {&C};
    const std::uint32_t ck[1] = {w.c.col_part};
    if (!builder_.build_into(w.c.row_part, 1, ck, co, L.unit))
      builder_.walk(
          w.c.row_part,
          [&](const vid_t* cols, std::uint64_t deg) {
            builder_.filter_row(cols, deg, w.c.col_part, C);
            C.end_row();
          },
          L.unit);
    TS_CHECK(C.edges == L.blocks[L.c].edges, "block C differs from the census");
    C.mark(L.blocks[L.c]);
  }
}

bool RangeUnitBuilder::from_store(const WorkUnit& w, bool reuse_a, unsigned char* slot,
                                  UnitLayout& L, std::vector<std::shared_ptr<const void>>& keep) {
  auto disable = [&] {
    store_.disable();
    return false;
  };
  if (!store_.enabled()) return false;
  const bool cut_a = L.blocks[L.a].cut;  // (the backend's, from B)
  const bool build_a = !reuse_a && !cut_a, build_b = !w.b_is_a, build_c = !w.c_is_a && !w.c_is_b;
  const BlockKey ka{w.a.row_part, w.a.col_part}, kb{w.b.row_part, w.b.col_part},
      kc{w.c.row_part, w.c.col_part};
  std::vector<BlockKey> protect{ka, kb, kc};
  std::shared_ptr<HostBlock> a, b, c;
  if (build_a && !(a = store_.cached_block(ka, protect, L.unit, &caller_))) return disable();
  if (build_b && !(b = store_.cached_block(kb, protect, L.unit, &caller_))) return disable();
  if (build_c && !(c = store_.cached_block(kc, protect, L.unit, &caller_))) return disable();
  // With direct uploads A's host image is always the cached block: A reused in the device
  // slot may have come by a direct upload, so the host slot need not hold it.
  std::shared_ptr<HostBlock> ra = a;
  if (store_.direct() && !cut_a && !ra &&
      !(ra = store_.cached_block(ka, protect, L.unit, &caller_)))
    return disable();
  // Direct uploads: the blocks go to the device from the cache itself, with no copy into the
  // host slot — unless a block cannot be registered; then the unit goes through the host slot,
  // or with views of the image (whose host slots are not pinned) from pageable memory. (Views
  // of an image not registered yet: a light unit waits for the registration instead.)
  if (store_.direct()) {
    const double w0 = now_s();
    if (store_.wait_for_views(w)) {
      const double w1 = now_s();
      caller_.rec.span("wait", L.unit, w0, w1, 0);
      caller_.waited_s += w1 - w0;
    }
  }
  bool direct = store_.direct();
  for (HostBlock* hb : {ra.get(), b.get(), c.get()})
    if (direct && hb) direct = store_.register_block(*hb);
  // (Views of an image not registered yet, or a block that could not be registered: uploaded
  // from pageable memory, never copied into the host slot.)
  if (store_.direct() && store_.views_image()) direct = true;
  std::vector<DirectUpload> regions;
  if (a) HostBlockStore::block_regions(*a, L.blocks[L.a], direct, regions);
  if (b) HostBlockStore::block_regions(*b, L.blocks[L.b], direct, regions);
  if (c) HostBlockStore::block_regions(*c, L.blocks[L.c], direct, regions);
  // (When A is uploaded through the host slot, the slot's copy is its image and its source.)
  if (ra && store_.direct() && (direct || !a)) lend_image(L, L.a, ra, keep);
  if (direct) {
    L.direct = std::move(regions);
    L.upload_from = L.bytes;  // nothing from the host slot
    if (b) lend_image(L, L.b, b, keep);
    if (c) lend_image(L, L.c, c, keep);
    return true;
  }
  // every block of the unit copied by every core at once
  std::vector<CopyJob> jobs;
  for (const DirectUpload& r : regions) jobs.push_back(CopyJob{slot + r.at, r.host, r.bytes});
  par_copy(copy_pool_, jobs);
  return true;
}

}  // namespace tristream::stream
