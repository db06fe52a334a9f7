// fake_backend.hpp — a small StreamingBackend with a device of its own, for the pipeline suites.
//
// It records the driver's calls in order and runs each unit the way a GPU runs queued work: the
// unit's copies and its count happen when the unit is collected (wait), so a host image the
// driver freed or overwrote while its unit was in flight counts wrong. Streamed pieces are copied
// when their buffer is waited for or the unit's upload closes. Counts use the CPU counter over the
// fake device's copy (slot bytes at the layout's offsets, or the blocks the device block cache
// keeps by key under the real policy, DeviceBlockCache), and every block is compared with the host
// image the layout lends. It can play a device budget (DeviceOutOfMemory) and a registrar that
// refuses.
#pragma once

#include "pipeline_util.hpp"

namespace tristream::stream_test {

class FakeBackend final : public StreamingBackend {
 public:
  // ---- settings ----
  bool device_cache = true;          // accept use_device_cache
  bool refuse_registration = false;  // register_host returns false
  std::uint64_t device_bytes = 0;    // free device memory; an allocation above it throws (0: none)
  std::function<void()> on_piece;    // after every upload_piece_async
  std::function<void()> on_count;    // in every count_async
  bool row_pieces = false;           // counts_row_pieces' answer
  std::function<bool()> rows_busy_answer;  // rows_busy's (none: never busy)
  bool claimed_rows = false;  // row pieces of rows claimed by several GPUs: a unit may send part
  // Registrations are portable, as CUDA's: memory registered through this other fake (the
  // first GPU's, which the shared store registers through) is a registered source here too.
  FakeBackend* registrations_of = nullptr;
  // ---- records ----
  std::vector<std::string> calls;  // "allocate", "upload S", "count S", "wait S", "release"
  int max_slots = 0;
  std::uint64_t pieces = 0, streamed_allocations = 0, releases = 0, sliced_counts = 0;
  std::atomic<std::uint64_t> registered{0}, unregistered{0};
  // copies from registered memory, bytes from a host slot, sources neither; packed blocks
  std::uint64_t direct_copies = 0, host_slot_bytes = 0, unregistered_sources = 0;
  std::uint64_t packed_uploads = 0, image_mismatches = 0;  // device copy != layout's host image
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_mismatches = 0, cached_upload_bytes = 0;
  std::uint64_t early_collections = 0;  // device_cache_fits said no
  bool host_slots_pinned = true;        // set_host_slots_pinned's last word
  std::uint64_t cuts = 0;               // blocks cut from B (SlotBlock::cut)
  // row pieces: counts, rows they counted, counts whose bytes were not all on the device
  std::uint64_t row_counts = 0, counted_rows = 0, premature_rows = 0;
  std::map<std::int64_t, std::uint64_t> unit_uploads;  // device cache: bytes uploaded per unit

  std::string name() const override { return "fake"; }
  std::string describe() const override { return "fake device"; }
  bool device_is_host() const override { return false; }
  std::uint64_t free_device_bytes() override { return device_bytes; }
  bool register_host(void* p, std::uint64_t bytes) override {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096 + bytes % 4096, 0u);
    if (refuse_registration) return false;
    std::lock_guard<std::mutex> lk(mu_);
    EXPECT_TRUE(live_.emplace(static_cast<unsigned char*>(p), bytes).second) << "registered twice";
    ++registered;
    return true;
  }
  void unregister_host(void* p) noexcept override {
    std::lock_guard<std::mutex> lk(mu_);
    live_.erase(static_cast<unsigned char*>(p));
    ++unregistered;
  }
  bool use_device_cache(std::uint64_t capacity) override {
    cache_on_ = device_cache && capacity > 0;
    cache_ = DeviceBlockCache(capacity);
    entries_.clear();
    return cache_on_;
  }
  bool device_cache_fits(const UnitLayout& L) override {
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    const bool fits = cache_.fits(req, L.num_blocks);
    early_collections += fits ? 0 : 1;
    return fits;
  }
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    calls.push_back("allocate");
    EXPECT_TRUE(slots >= 1 && slots <= (cache_on_ ? 31 : 2)) << slots << " slots";
    slots_.assign(static_cast<std::size_t>(reserve(slots, slot_bytes)), Slot{});
    for (int s = 0; s < slots; ++s) {
      Slot& sl = slots_[s];
      if (!cache_on_ || s < 2) sl.host.assign(slot_bytes / 8 + 1, 0);
      if (!cache_on_) sl.dev.assign(slot_bytes / 8 + 1, 0xdeadbeefdeadbeefull);  // until copied
      sl.pv.assign(pv_rows, 0);
    }
  }
  void allocate_without_host_slots(int slots, std::uint64_t slot_bytes,
                                   std::uint64_t pv_rows) override {
    allocate(slots, slot_bytes, pv_rows);
    calls.back() = "allocate without host slots";
    for (Slot& sl : slots_) sl.host.clear();
  }
  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    slots_.assign(static_cast<std::size_t>(reserve(slots, slot_bytes)), Slot{});
    for (Slot& sl : slots_) sl.dev.assign(slot_bytes / 8 + 1, 0xdeadbeefdeadbeefull);
    for (Slot& sl : slots_) sl.pv.assign(pv_rows, 0);
    for (Slot& sl : slots_) sl.landed.assign(slot_bytes, false);
    staging_.assign(static_cast<std::size_t>(buffers), Piece{});
    for (Piece& p : staging_) p.buf.assign(piece_bytes / 8 + 1, 0);
    piece_bytes_ = piece_bytes;
    ++streamed_allocations;
  }
  unsigned char* host_slot(int s) override { return bytes_of(slots_.at(s).host); }
  void set_host_slots_pinned(bool pinned) override { host_slots_pinned = pinned; }
  unsigned char* staging_buffer(int b) override { return bytes_of(staging_.at(b).buf); }
  void wait_staging(int b) override { land(staging_.at(b)); }
  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    Piece& p = staging_.at(b);
    EXPECT_FALSE(p.pending) << "staging buffer " << b << " sent again before wait_staging";
    land(p);
    EXPECT_TRUE(bytes > 0 && bytes <= piece_bytes_ && at + bytes <= slot_bytes_);
    p = Piece{std::move(p.buf), true, s, at, bytes};
    ++pieces;
    if (on_piece) on_piece();
  }
  bool counts_row_pieces(const eid_t* offsets, std::uint64_t rows) override {
    EXPECT_TRUE(offsets && offsets[0] == 0 && rows > 0);
    return row_pieces;
  }
  bool rows_busy(int) override { return rows_busy_answer && rows_busy_answer(); }
  // Counts the rows at once, on the device copy, after checking that every byte they read (the
  // offsets, the columns of r0 and above) has landed.
  void count_rows_async(int s, const UnitLayout& L, std::uint64_t r0, std::uint64_t r1) override {
    ++row_counts;
    EXPECT_TRUE(L.row_pieces && L.streamed && r0 < r1 && r1 <= L.blocks[L.a].rows);
    Slot& sl = slots_.at(s);
    for (Piece& p : staging_) land(p);
    count_rows(sl, L, r0, r1);
  }
  void upload_async(int s, const UnitLayout& L) override {
    calls.push_back("upload " + std::to_string(s));
    Slot& sl = slots_.at(s);
    EXPECT_FALSE(sl.queued) << "slot " << s << " reused before its wait";
    sl.layout = L;
    if (L.streamed) {  // every piece of this unit lands, and they cover its bytes exactly
      for (Piece& p : staging_) land(p);
      if (L.row_pieces && claimed_rows)  // (what the counts read is sent: count_rows checks)
        EXPECT_LE(sl.piece_bytes, L.bytes - L.upload_from) << "unit " << L.unit;
      else
        EXPECT_EQ(sl.piece_bytes, L.bytes - L.upload_from) << "unit " << L.unit;
      sl.piece_bytes = 0;
    }
    if (!cache_on_) return;
    // The device block cache admits the unit's blocks now, in queue order; copies run late.
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    for (const std::uint64_t victim : cache_.admit(req, L.num_blocks, s, sl.hit))
      entries_.erase(victim);
    std::uint64_t up = 0;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      if (!sl.hit[bi]) entries_[L.blocks[bi].cache_key] = Block{};
      (sl.hit[bi] ? sl.hit_bytes : up) += L.blocks[bi].image_bytes();
    }
    sl.uploaded = up;
    unit_uploads[L.unit] = up;
  }
  void count_async(int s, const UnitLayout& L) override {
    calls.push_back("count " + std::to_string(s));
    if (on_count) on_count();
    slots_.at(s).queued = true;
    sliced_counts += L.sliced ? 1 : 0;
  }
  SlotResult wait(int s) override {
    calls.push_back("wait " + std::to_string(s));
    Slot& sl = slots_.at(s);
    SlotResult r;
    if (!sl.queued) return r;
    sl.queued = false;
    const UnitLayout& L = sl.layout;
    if (L.row_pieces) {  // the rows left, then the unit's sums
      if (L.rows_left > 0) count_rows(sl, L, 0, L.rows_left);
      r.triangles = sl.rows_total;
      r.kernel_pieces.swap(sl.row_spans);
      sl.row_spans.clear();
      sl.rows_total = 0;
      sl.rows_pv_done.swap(sl.rows_pv);  // (valid until the slot's next count)
      sl.rows_pv.clear();
      if (L.per_vertex) {
        sl.rows_pv_done.resize(L.blocks[L.a].rows, 0);
        r.per_vertex[0] = sl.rows_pv_done.data();
      }
      return r;
    }
    const DeviceBlocks d = cache_on_ ? run_cached(sl) : run_slot(s, sl);
    r.triangles = count(L, d, sl.pv, r);
    if (cache_on_) {
      cache_.release(s);
      r.uploaded_bytes = static_cast<std::int64_t>(sl.uploaded);
      r.cache_hit_bytes = sl.hit_bytes;
      r.upload_start = r.upload_end = 0;  // recorded as an (instant) upload span
      sl.hit_bytes = 0;
    }
    return r;
  }
  void release() override {
    calls.push_back("release");
    slots_.clear();
    staging_.clear();
    ++releases;
  }

 private:
  struct Block {  // empty until the late copy of the unit that missed it writes it
    std::vector<eid_t> off;
    std::vector<vid_t> cols;
  };
  struct Piece {
    std::vector<std::uint64_t> buf;
    bool pending = false;
    int slot = 0;
    std::uint64_t at = 0, bytes = 0;
  };
  struct Slot {
    std::vector<std::uint64_t> host, dev;
    std::vector<count_t> pv;
    UnitLayout layout;
    bool queued = false, hit[3] = {false, false, false};
    std::uint64_t uploaded = 0, hit_bytes = 0, piece_bytes = 0;
    std::vector<bool> landed;  // streamed: the device bytes a piece has written
    count_t rows_total = 0;    // row pieces: the unit's sums so far
    std::vector<count_t> rows_pv, rows_pv_done;
    std::vector<UploadPiece> row_spans;  // an (instant) kernel span per row count
  };
  struct DeviceBlocks {
    const eid_t* off[3] = {nullptr, nullptr, nullptr};
    const vid_t* cols[3] = {nullptr, nullptr, nullptr};
  };
  // expand_packed of an image that may have been overwritten under its unit: a broken one (ids not
  // increasing below rows) is a mismatch and expands to empty rows instead of writing out of
  // bounds.
  void expand(const PackedRows& p, std::uint64_t rows, eid_t* out) {
    bool ok = p.valid() && (p.count == 0 || p.ids[p.count - 1] < rows);
    for (std::uint64_t r = 1; ok && r < p.count; ++r) ok = p.ids[r - 1] < p.ids[r];
    if (ok) return expand_packed(p, rows, out);
    ++image_mismatches;
    std::fill(out, out + rows + 1, 0);
  }
  static unsigned char* bytes_of(std::vector<std::uint64_t>& v) {
    return v.empty() ? nullptr : reinterpret_cast<unsigned char*>(v.data());
  }
  // The device memory an allocation takes, against device_bytes.
  int reserve(int slots, std::uint64_t slot_bytes) {
    max_slots = std::max(max_slots, slots);
    const std::uint64_t need = cache_on_ ? cache_.capacity() : slots * slot_bytes;
    if ((device_bytes && need > device_bytes) || slot_bytes > (std::uint64_t{1} << 32))
      throw DeviceOutOfMemory("out of memory (fake device)", need);
    slot_bytes_ = slot_bytes;
    return slots;
  }
  void land(Piece& p) {
    if (!p.pending) return;
    Slot& sl = slots_.at(p.slot);
    std::memcpy(bytes_of(sl.dev) + p.at, bytes_of(p.buf), p.bytes);
    sl.piece_bytes += p.bytes;
    for (std::uint64_t x = p.at; x < p.at + p.bytes && x < sl.landed.size(); ++x)
      sl.landed[x] = true;
    p.pending = false;
  }
  // Row pieces: rows [r0, r1) of the in-core unit (A = B = those rows, C = all) counted into the
  // slot's sums when every byte they read (the offsets of rows r0 to n, the columns from row r0's
  // on) has landed, else a premature count (not counted).
  void count_rows(Slot& sl, const UnitLayout& L, std::uint64_t r0, std::uint64_t r1) {
    const SlotBlock& b = L.blocks[L.a];
    const unsigned char* dev = bytes_of(sl.dev);
    const auto* off = reinterpret_cast<const eid_t*>(dev + b.offsets_at);
    const auto* cols = reinterpret_cast<const vid_t*>(dev + b.cols_at);
    auto landed = [&](std::uint64_t lo, std::uint64_t hi) {
      return hi <= sl.landed.size() &&
             std::all_of(sl.landed.begin() + static_cast<long>(lo),
                         sl.landed.begin() + static_cast<long>(hi), [](bool x) { return x; });
    };
    const std::uint64_t off_end = b.offsets_at + (b.rows + 1) * sizeof(eid_t);
    if (!landed(b.offsets_at + r0 * sizeof(eid_t), off_end) || off[b.rows] != b.edges ||
        !landed(b.cols_at + off[r0] * sizeof(vid_t), b.cols_at + b.edges * sizeof(vid_t))) {
      ++premature_rows;
      return;
    }
    if (L.per_vertex && sl.rows_pv.empty()) sl.rows_pv.assign(b.rows, 0);
    PerVertexOut out;
    if (L.per_vertex)
      out = PerVertexOut{sl.rows_pv.data() + r0, sl.rows_pv.data(), sl.rows_pv.data()};
    const CsrView rows{r1 - r0, off + r0, cols, b.col_space};
    sl.rows_total += counter_->count(rows, rows, CsrView{b.rows, off, cols, b.col_space}, out);
    sl.row_spans.push_back(UploadPiece{0, 0, (off[r1] - off[r0]) * sizeof(vid_t)});
    counted_rows += r1 - r0;
  }
  // A copy's source: a host slot, or memory registered with the backend (one registration, or
  // several that follow each other: the CUDA backend splits such a copy at their edges).
  void source(const void* p, std::uint64_t bytes) {
    const auto* q = static_cast<const unsigned char*>(p);
    for (Slot& sl : slots_)
      if (!sl.host.empty() && q >= bytes_of(sl.host) &&
          q + bytes <= bytes_of(sl.host) + sl.host.size() * 8) {
        host_slot_bytes += bytes;
        return;
      }
    ++direct_copies;
    FakeBackend& r = registrations_of ? *registrations_of : *this;
    std::lock_guard<std::mutex> lk(r.mu_);
    auto it = r.live_.upper_bound(const_cast<unsigned char*>(q));
    if (it == r.live_.begin()) {
      ++unregistered_sources;
      return;
    }
    --it;
    const unsigned char* end = it->first + it->second;
    for (++it; end < q + bytes && it != r.live_.end() && it->first == end; ++it)
      end = it->first + it->second;
    if (q + bytes > end) ++unregistered_sources;
  }
  // Two device slots: the host slot's range, the direct copies and the packed images.
  DeviceBlocks run_slot(int s, Slot& sl) {
    const UnitLayout& L = sl.layout;
    unsigned char* dev = bytes_of(sl.dev);
    if (!L.streamed && L.bytes > L.upload_from) {
      source(host_slot(s) + L.upload_from, L.bytes - L.upload_from);
      std::memcpy(dev + L.upload_from, host_slot(s) + L.upload_from, L.bytes - L.upload_from);
    }
    for (const DirectUpload& u : L.direct) {
      source(u.host, u.bytes);
      std::memcpy(dev + u.at, u.host, u.bytes);
    }
    DeviceBlocks d;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (b.packed && L.uploads(bi)) {
        source(L.host_packed[bi].ids, packed_bytes(b.packed_rows));
        expand(L.host_packed[bi], b.rows, reinterpret_cast<eid_t*>(dev + b.offsets_at));
        ++packed_uploads;
      }
      d.off[bi] = reinterpret_cast<const eid_t*>(dev + b.offsets_at);
      d.cols[bi] = reinterpret_cast<const vid_t*>(dev + b.cols_at);
    }
    cut_blocks(L, d, nullptr);
    return d;
  }
  // The cut blocks (SlotBlock::cut) from B's device copy, as the GPU cuts them before the count
  // (hit: the blocks the device block cache held, not cut again).
  void cut_blocks(const UnitLayout& L, DeviceBlocks& d, const bool* hit) {
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      if (!L.cuts(bi) || (hit && hit[bi])) continue;
      const SlotBlock& b = L.blocks[bi];
      const SlotBlock& B = L.blocks[L.b];
      const eid_t got =
          cut_rows(HostRows{B.rows, d.off[L.b], {}, d.cols[L.b]}, b.cut_lo, b.cut_hi,
                   const_cast<eid_t*>(d.off[bi]), const_cast<vid_t*>(d.cols[bi]), b.edges);
      image_mismatches += got == b.edges ? 0 : 1;
      ++cuts;
    }
  }
  // The device block cache: each hit must still hold its block; each miss is copied from the
  // layout's host images.
  DeviceBlocks run_cached(Slot& sl) {
    const UnitLayout& L = sl.layout;
    DeviceBlocks d;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      auto it = entries_.find(b.cache_key);
      cache_mismatches += it == entries_.end() ? 1 : 0;  // evicted under a unit in flight
      Block& e = it == entries_.end() ? entries_[b.cache_key] : it->second;
      if (sl.hit[bi]) {
        ++cache_hits;
        cache_mismatches += e.off.size() == b.rows + 1 && e.cols.size() == b.edges ? 0 : 1;
      } else {
        ++cache_misses;
        cached_upload_bytes += b.image_bytes();
        e = Block{std::vector<eid_t>(b.rows + 1), std::vector<vid_t>(b.edges)};
        if (b.packed) {
          source(L.host_packed[bi].ids, packed_bytes(b.packed_rows));
          expand(L.host_packed[bi], b.rows, e.off.data());
          ++packed_uploads;
        } else if (L.host_offsets[bi]) {
          source(L.host_offsets[bi], dense_offsets_bytes(b.rows));
          std::memcpy(e.off.data(), L.host_offsets[bi], dense_offsets_bytes(b.rows));
        }
        if (b.edges && L.host_cols[bi]) {
          source(L.host_cols[bi], b.edges * sizeof(vid_t));
          std::memcpy(e.cols.data(), L.host_cols[bi], b.edges * sizeof(vid_t));
        }
      }
      d.off[bi] = e.off.data();
      d.cols[bi] = e.cols.data();
    }
    cut_blocks(L, d, sl.hit);
    return d;
  }
  // The unit's count over its device blocks, each checked first against the layout's host
  // image and for being a CSR of its shape (a broken one is not counted: the count goes wrong).
  count_t count(const UnitLayout& L, const DeviceBlocks& d, std::vector<count_t>& pv,
                SlotResult& r) {
    bool valid = true;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      std::vector<eid_t> dense(b.rows + 1);
      if (L.host_packed[bi].valid()) expand(L.host_packed[bi], b.rows, dense.data());
      const eid_t* host = L.host_packed[bi].valid() ? dense.data() : L.host_offsets[bi];
      image_mismatches += (b.packed != L.host_packed[bi].valid()) ||
                          (host && std::memcmp(host, d.off[bi], dense.size() * sizeof(eid_t))) ||
                          (L.host_cols[bi] && b.edges &&
                           std::memcmp(L.host_cols[bi], d.cols[bi], b.edges * sizeof(vid_t)));
      valid =
          valid && d.off[bi][0] == 0 && d.off[bi][b.rows] == b.edges &&
          std::is_sorted(d.off[bi], d.off[bi] + b.rows + 1) &&
          std::all_of(d.cols[bi], d.cols[bi] + b.edges, [&](vid_t c) { return c < b.col_space; });
    }
    if (!valid) {
      ++image_mismatches;
      return 0;
    }
    PerVertexOut out;
    count_t* spaces[3] = {nullptr, nullptr, nullptr};
    std::uint64_t at = 0;
    for (int x = 0; L.per_vertex && x < L.num_spaces; at += L.space_rows[x++]) {
      spaces[x] = pv.data() + at;
      r.per_vertex[x] = spaces[x];
      std::fill(spaces[x], spaces[x] + L.space_rows[x], 0);
    }
    if (L.per_vertex) out = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    auto view = [&](int bi) {
      return CsrView{L.blocks[bi].rows, d.off[bi], d.cols[bi], L.blocks[bi].col_space};
    };
    std::vector<eid_t> window;
    return counter_->count(view(L.a), view(L.b), counted_c(L, view(L.c), window), out);
  }

  std::mutex mu_;
  std::map<unsigned char*, std::uint64_t> live_;  // registered ranges
  std::unique_ptr<Counter> counter_ = make_cpu_counter();
  std::vector<Slot> slots_;
  std::vector<Piece> staging_;
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  bool cache_on_ = false;
  DeviceBlockCache cache_;
  std::map<std::uint64_t, Block> entries_;  // the cached blocks by key
};

}  // namespace tristream::stream_test
