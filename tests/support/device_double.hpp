// device_double.hpp — a StreamingBackend with a separate "device" for the pipeline suites: late
// copies, the device block cache as the CUDA backend keeps it, direct uploads from registered
// memory, packed blocks expanded on the device, streamed pieces; it counts with the CPU counter
// over what reached its device, so every layout mistake shows in the count.
#pragma once

#include "pipeline_util.hpp"

namespace tristream::stream_test {

// A backend with a separate "device": device slots apart from the host slots / staging buffers.
// A piece's copy happens late (when the host waits for its buffer, or closes the unit's upload),
// like an asynchronous copy, so a buffer the pipeline overwrote too early uploads wrong bytes and
// the count goes wrong. Every byte of a streamed unit's [upload_from, bytes) must be uploaded
// exactly once and nothing outside it. Counts with the CPU counter over the device slot.
//
// The device block cache (use_device_cache, on unless device_cache is false) is emulated as the
// CUDA backend runs it: each block kept by its key as a copy of what was uploaded from the
// layout's host images, the same policy and the same block sizes, so the uploads match the
// planner's simulation; a hit is checked against the layout's host image (cache_mismatches),
// so a key naming two different blocks shows here and in the count. With the cache the slots
// are the plan's units in flight (host slots for the first two only), and a unit's copies and
// count run late, when it is collected, like work queued on a GPU: a host image the pipeline
// freed or overwrote while its unit was in flight, or a block evicted under it, shows as a
// mismatch (or a wrong count).
class DeviceDouble final : public StreamingBackend {
 public:
  bool device_cache = true;
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_mismatches = 0, cache_evictions = 0;
  std::uint64_t cached_upload_bytes = 0;  // bytes uploaded into the cache
  std::uint64_t device_limit = 0;         // throw DeviceOutOfMemory above it (0 = none)
  std::function<void()> on_piece;         // called after every upload_piece_async
  std::uint64_t pieces = 0, streamed_allocations = 0, releases = 0;
  // Every call of the driver's, in order: "allocate", "upload S", "count S", "wait S", "release".
  std::vector<std::string> calls;
  // Direct uploads: register_host refuses when refuse_registration; the counts of
  // registrations, of direct copies, and of blocks whose host image (lent by the layout) differs
  // from what reached the device.
  bool refuse_registration = false;
  std::atomic<std::uint64_t> registered{0}, unregistered{0};
  std::uint64_t direct_copies = 0, image_mismatches = 0, unregistered_sources = 0;
  std::uint64_t host_slot_bytes = 0;  // bytes uploaded from the host slot (not streamed)
  // Packed blocks uploaded and expanded here as the CUDA backend does; their dense rows.
  std::uint64_t packed_uploads = 0, packed_dense_rows = 0;
  std::uint64_t sliced_counts = 0;  // counts of slices (UnitLayout::sliced)

  bool register_host(void* p, std::uint64_t bytes) override {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);
    EXPECT_EQ(bytes % 4096, 0u);
    if (refuse_registration) return false;
    std::lock_guard<std::mutex> lk(reg_mu_);
    EXPECT_EQ(live_.count(p), 0u) << "registered twice";
    live_[p] = bytes;
    ++registered;
    return true;
  }
  void unregister_host(void* p) noexcept override {
    std::lock_guard<std::mutex> lk(reg_mu_);
    live_.erase(p);
    ++unregistered;
  }

  bool use_device_cache(std::uint64_t capacity) override {
    cache_on_ = device_cache && capacity > 0;
    cache_ = DeviceBlockCache(capacity);
    entries_.clear();
    return cache_on_;
  }

  std::string name() const override { return "double"; }
  std::string describe() const override { return "device double"; }
  bool device_is_host() const override { return false; }
  std::uint64_t free_device_bytes() override { return device_limit; }
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    calls.push_back("allocate");
    EXPECT_TRUE(slots >= 1 && slots <= (cache_on_ ? 31 : 2)) << slots << " slots";
    max_slots = std::max(max_slots, slots);
    alloc_device(slots, slot_bytes, pv_rows);
    for (int s = 0; s < slots && (!cache_on_ || s < 2); ++s) host_[s].assign(slot_bytes / 8 + 1, 0);
  }
  int max_slots = 0;                                   // the most slots (units in flight) allocated
  std::map<std::int64_t, std::uint64_t> unit_uploads;  // device cache: bytes uploaded per unit
  std::uint64_t early_collections = 0;  // units collected before their turn (cache room)
  bool device_cache_fits(const UnitLayout& L) override {
    if (!cache_on_) return true;
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    const bool fits = cache_.fits(req, L.num_blocks);
    early_collections += fits ? 0 : 1;
    return fits;
  }
  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    alloc_device(slots, slot_bytes, pv_rows);
    staging_.assign(static_cast<std::size_t>(buffers),
                    std::vector<std::uint64_t>(piece_bytes / 8 + 1));
    pending_.assign(static_cast<std::size_t>(buffers), Copy{});
    piece_bytes_ = piece_bytes;
    ++streamed_allocations;
  }
  unsigned char* host_slot(int s) override {
    auto& h = host_.at(static_cast<std::size_t>(s));
    return h.empty() ? nullptr : reinterpret_cast<unsigned char*>(h.data());
  }
  unsigned char* staging_buffer(int b) override {
    return reinterpret_cast<unsigned char*>(staging_.at(static_cast<std::size_t>(b)).data());
  }
  void wait_staging(int b) override { complete(b); }
  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    Copy& c = pending_.at(static_cast<std::size_t>(b));
    if (c.active) {
      ADD_FAILURE() << "staging buffer " << b << " reused before wait_staging";
      complete(b);
    }
    EXPECT_GT(bytes, 0u);
    EXPECT_LE(bytes, piece_bytes_);
    EXPECT_LE(at + bytes, slot_bytes_);
    c = Copy{true, s, at, bytes};
    ++pieces;
    if (on_piece) on_piece();
  }
  void upload_async(int s, const UnitLayout& L) override {
    calls.push_back("upload " + std::to_string(s));
    auto* dev = reinterpret_cast<unsigned char*>(dev_[s].data());
    if (cache_on_ && !L.streamed) {
      upload_cached(s, L);
      return;
    }
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      off_[s][bi] = reinterpret_cast<const eid_t*>(dev + L.blocks[bi].offsets_at);
      cols_[s][bi] = reinterpret_cast<const vid_t*>(dev + L.blocks[bi].cols_at);
    }
    if (!L.streamed) {
      std::memcpy(dev + L.upload_from, host_slot(s) + L.upload_from, L.bytes - L.upload_from);
      host_slot_bytes += L.bytes - L.upload_from;
      for (const DirectUpload& d : L.direct) {
        EXPECT_LE(d.at + d.bytes, slot_bytes_);
        const bool from_slot = in_host_slot(s, d.host, d.bytes);
        unregistered_sources += from_slot || registered_range(d.host, d.bytes) ? 0 : 1;
        std::memcpy(dev + d.at, d.host, d.bytes);
        if (from_slot)
          host_slot_bytes += d.bytes;
        else
          ++direct_copies;
      }
      // packed blocks: their images (registered or in the host slot) expanded into place
      for (int bi = 0; bi < L.num_blocks; ++bi) {
        const SlotBlock& b = L.blocks[bi];
        if (!b.packed || !L.uploads(bi)) continue;
        const PackedRows& hp = L.host_packed[bi];
        EXPECT_TRUE(hp.valid());
        EXPECT_EQ(hp.count, b.packed_rows);
        EXPECT_EQ(hp.edges(), b.edges);
        for (const void* q :
             {static_cast<const void*>(hp.ids), static_cast<const void*>(hp.offsets)})
          unregistered_sources +=
              in_host_slot(s, q, 1) || registered_range(static_cast<const unsigned char*>(q), 1)
                  ? 0
                  : 1;
        expand_packed(hp, b.rows, reinterpret_cast<eid_t*>(dev + b.offsets_at));
        ++packed_uploads;
        packed_dense_rows += b.rows;
      }
      return;
    }
    for (std::size_t b = 0; b < pending_.size(); ++b)
      if (pending_[b].active && pending_[b].slot == s) complete(static_cast<int>(b));
    std::uint64_t wrong = 0;
    for (std::uint64_t x = 0; x < cover_[s].size(); ++x)
      wrong += cover_[s][x] != (x >= L.upload_from && x < L.bytes ? 1 : 0);
    EXPECT_EQ(wrong, 0u) << "bytes of unit " << L.unit << " not uploaded exactly once";
    std::fill(cover_[s].begin(), cover_[s].end(), 0);
  }
  void count_async(int s, const UnitLayout& L) override {
    calls.push_back("count " + std::to_string(s));
    result_[s] = SlotResult{};
    PerVertexOut pv;
    if (L.per_vertex) {
      std::uint64_t at = 0;
      count_t* spaces[3] = {nullptr, nullptr, nullptr};
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = pv_[s].data() + at;
        std::fill(spaces[x], spaces[x] + L.space_rows[x], 0);
        at += L.space_rows[x];
        result_[s].per_vertex[x] = spaces[x];
      }
      pv = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    if (L.sliced) ++sliced_counts;
    if (cache_on_ && !L.streamed) {  // runs when collected (wait), after its late copies
      late_[s] = L;
      late_pv_[s] = pv;
      late_count_[s] = true;
      return;
    }
    run_count(s, L, pv, false);
  }
  SlotResult wait(int s) override {
    calls.push_back("wait " + std::to_string(s));
    if (late_count_[s]) {  // the unit's queued work: its copies into the cache, then its count
      late_count_[s] = false;
      run_cached(s, late_[s]);
      run_count(s, late_[s], late_pv_[s], true);
    }
    if (cache_on_) {
      cache_.release(s);
      result_[s].uploaded_bytes = static_cast<std::int64_t>(uploaded_[s]);
      result_[s].cache_hit_bytes = hit_bytes_[s];
      result_[s].upload_start = result_[s].upload_end = 0;  // an instant copy, so it is recorded
    }
    return result_[s];
  }
  void release() override {
    calls.push_back("release");
    free_all();
  }

 private:
  void free_all() {
    dev_.clear();
    host_.clear();
    cover_.clear();
    staging_.clear();
    pending_.clear();
    ++releases;
  }
  struct Copy {
    bool active = false;
    int slot = 0;
    std::uint64_t at = 0, bytes = 0;
  };
  void alloc_device(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) {
    const std::uint64_t need =
        cache_on_ ? cache_.capacity() : static_cast<std::uint64_t>(slots) * slot_bytes;
    if (device_limit && need > device_limit)
      throw DeviceOutOfMemory("out of memory (device double)", need);
    // the tests' graphs are small: a larger slot is a planner bug (and the bound keeps g++ 13's
    // -Wstringop-overflow from reasoning about sizes beyond any object)
    if (slot_bytes > (std::uint64_t{1} << 32) || pv_rows > (std::uint64_t{1} << 32))
      throw DeviceOutOfMemory("device double: slot of " + std::to_string(slot_bytes) + " bytes",
                              slot_bytes);
    free_all();
    const auto n = static_cast<std::size_t>(slots);
    dev_.resize(n);
    host_.resize(n);
    cover_.resize(n);
    pv_.assign(n, std::vector<count_t>(pv_rows, 0));
    result_.assign(n, SlotResult{});
    off_.assign(n, {nullptr, nullptr, nullptr});
    cols_.assign(n, {nullptr, nullptr, nullptr});
    uploaded_.assign(n, 0);
    hit_bytes_.assign(n, 0);
    late_.assign(n, UnitLayout{});
    late_pv_.assign(n, PerVertexOut{});
    late_count_.assign(n, false);
    late_hit_.assign(n, {false, false, false});
    for (std::size_t s = 0; s < n && !cache_on_; ++s) {           // the cache replaces device slots
      dev_[s].assign(slot_bytes / 8 + 1, 0xdeadbeefdeadbeefull);  // garbage until uploaded
      cover_[s].assign(slot_bytes, 0);
    }
    slot_bytes_ = slot_bytes;
  }
  // The count of slot s over the blocks off_/cols_ point at, after checking them against the
  // host images the layout lends; with check_csr (late copies) a block that is not a CSR of its
  // shape (copied from a host image overwritten too early) is a mismatch and is not counted.
  void run_count(int s, const UnitLayout& L, const PerVertexOut& pv, bool check_csr) {
    auto view = [&](int bi) {
      return CsrView{L.blocks[bi].rows, off_[s][bi], cols_[s][bi], L.blocks[bi].col_space};
    };
    bool valid = true;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (b.packed != L.host_packed[bi].valid() || b.packed == (L.host_offsets[bi] != nullptr))
        ++image_mismatches;
      if (!same_as_host_image(L, bi, off_[s][bi], cols_[s][bi])) ++image_mismatches;
      if (check_csr) valid &= valid_csr(b, off_[s][bi], cols_[s][bi]);
    }
    std::vector<eid_t> window;
    if (valid)
      result_[s].triangles =
          counter_->count(view(L.a), view(L.b), counted_c(L, view(L.c), window), pv);
    else
      ++image_mismatches;
  }
  // Whether a block's device copy is a CSR of its shape (offsets from 0 to edges, not
  // decreasing; columns inside the column space).
  static bool valid_csr(const SlotBlock& b, const eid_t* off, const vid_t* cols) {
    if (off[0] != 0 || off[b.rows] != b.edges) return false;
    for (std::uint64_t r = 0; r < b.rows; ++r)
      if (off[r + 1] < off[r]) return false;
    for (eid_t e = 0; e < b.edges; ++e)
      if (cols[e] >= b.col_space) return false;
    return true;
  }
  // Whether the device copy of block bi (dense offsets, columns) equals the layout's host image.
  static bool same_as_host_image(const UnitLayout& L, int bi, const eid_t* off, const vid_t* cols) {
    const SlotBlock& b = L.blocks[bi];
    if (L.host_offsets[bi] && std::memcmp(L.host_offsets[bi], off, (b.rows + 1) * sizeof(eid_t)))
      return false;
    if (L.host_packed[bi].valid()) {
      std::vector<eid_t> dense(b.rows + 1);
      expand_packed(L.host_packed[bi], b.rows, dense.data());
      if (std::memcmp(dense.data(), off, dense.size() * sizeof(eid_t))) return false;
    }
    return !(L.host_cols[bi] && b.edges &&
             std::memcmp(L.host_cols[bi], cols, b.edges * sizeof(vid_t)));
  }
  // The unit through the emulated device block cache (DeviceBlockCache::admit, as the CUDA
  // backend runs it, when the upload is queued); its copies run late (run_cached).
  void upload_cached(int s, const UnitLayout& L) {
    uploaded_[s] = hit_bytes_[s] = 0;
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    bool hit[3] = {false, false, false};
    for (const std::uint64_t victim : cache_.admit(req, L.num_blocks, s, hit)) {
      entries_.erase(victim);
      ++cache_evictions;
    }
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      late_hit_[s][bi] = hit[bi];
      if (!hit[bi]) entries_[b.cache_key] = Entry{};  // allocated, written by the late copy
      (hit[bi] ? hit_bytes_[s] : uploaded_[s]) += b.image_bytes();
    }
    unit_uploads[L.unit] = uploaded_[s];
  }
  // The unit's queued copies, when it is collected: hits checked against the host images (the
  // block must still be there, written by an earlier unit's copy), then each miss copied from
  // its host images (which must be registered or in a host slot, as the CUDA backend needs them
  // pinned, and still intact).
  void run_cached(int s, const UnitLayout& L) {
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      auto it = entries_.find(b.cache_key);
      if (it == entries_.end()) {  // evicted while a unit in flight held it
        ++cache_mismatches;
        it = entries_.emplace(b.cache_key, Entry{}).first;
      }
      Entry& e = it->second;
      if (late_hit_[s][bi]) {
        ++cache_hits;
        if (!e.written || e.off.size() != b.rows + 1 || e.cols.size() != b.edges ||
            !same_as_host_image(L, bi, e.off.data(), e.cols.data()))
          ++cache_mismatches;
      } else {
        ++cache_misses;
        e.written = true;
        e.off.assign(b.rows + 1, 0);
        e.cols.assign(b.edges, 0);
        if (b.packed) {
          const PackedRows& hp = L.host_packed[bi];
          EXPECT_TRUE(hp.valid());
          EXPECT_EQ(hp.count, b.packed_rows);
          if (hp.valid()) expand_packed(hp, b.rows, e.off.data());
          count_source(s, hp.ids, packed_bytes(b.packed_rows));
          ++packed_uploads;
          packed_dense_rows += b.rows;
        } else {
          EXPECT_NE(L.host_offsets[bi], nullptr);
          if (L.host_offsets[bi])
            std::memcpy(e.off.data(), L.host_offsets[bi], (b.rows + 1) * sizeof(eid_t));
          count_source(s, L.host_offsets[bi], dense_offsets_bytes(b.rows));
        }
        if (b.edges) {
          EXPECT_NE(L.host_cols[bi], nullptr);
          if (L.host_cols[bi]) std::memcpy(e.cols.data(), L.host_cols[bi], b.edges * sizeof(vid_t));
          count_source(s, L.host_cols[bi], b.edges * sizeof(vid_t));
        }
        cached_upload_bytes += b.image_bytes();
      }
      off_[s][bi] = e.off.data();
      cols_[s][bi] = e.cols.data();
    }
  }
  // A copy's source: the host slot or registered memory (else unregistered_sources).
  void count_source(int s, const void* p, std::uint64_t bytes) {
    if (!p) return;
    const bool from_slot = in_host_slot(s, p, bytes);
    if (!from_slot && !registered_range(static_cast<const unsigned char*>(p), bytes))
      ++unregistered_sources;
    if (from_slot)
      host_slot_bytes += bytes;
    else
      ++direct_copies;
  }
  void complete(int b) {
    Copy& c = pending_.at(static_cast<std::size_t>(b));
    if (!c.active) return;
    std::memcpy(reinterpret_cast<unsigned char*>(dev_[c.slot].data()) + c.at, staging_buffer(b),
                c.bytes);
    for (std::uint64_t x = c.at; x < c.at + c.bytes; ++x)
      cover_[c.slot][x] = static_cast<unsigned char>(std::min(cover_[c.slot][x] + 1, 255));
    c.active = false;
  }
  // Whether [p, p + bytes) lies in slot s's host slot (with the device cache: in either host
  // slot, which units in any slot take in turn).
  bool in_host_slot(int s, const void* p, std::uint64_t bytes) const {
    const auto* q = static_cast<const unsigned char*>(p);
    for (std::size_t x = 0; x < host_.size(); ++x) {
      if (!cache_on_ && x != static_cast<std::size_t>(s)) continue;
      const auto* b = reinterpret_cast<const unsigned char*>(host_[x].data());
      if (!host_[x].empty() && q >= b && q + bytes <= b + host_[x].size() * 8) return true;
    }
    return false;
  }
  bool registered_range(const unsigned char* p, std::uint64_t bytes) {
    std::lock_guard<std::mutex> lk(reg_mu_);
    for (const auto& r : live_) {
      const auto* lo = static_cast<const unsigned char*>(r.first);
      if (p >= lo && p + bytes <= lo + r.second) return true;
    }
    return false;
  }
  std::mutex reg_mu_;
  std::map<void*, std::uint64_t> live_;
  std::unique_ptr<Counter> counter_ = make_cpu_counter();
  std::vector<std::vector<std::uint64_t>> dev_, host_;  // per slot
  std::vector<std::vector<unsigned char>> cover_;
  std::vector<std::vector<count_t>> pv_;
  std::vector<std::vector<std::uint64_t>> staging_;
  std::vector<Copy> pending_;
  std::vector<SlotResult> result_;
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  // the blocks each slot's count reads (in the slot, or in the emulated cache)
  std::vector<std::array<const eid_t*, 3>> off_;
  std::vector<std::array<const vid_t*, 3>> cols_;
  struct Entry {
    bool written = false;  // by the late copy of the unit that missed it
    std::vector<eid_t> off;
    std::vector<vid_t> cols;
  };
  bool cache_on_ = false;
  DeviceBlockCache cache_;
  std::map<std::uint64_t, Entry> entries_;
  std::vector<std::uint64_t> uploaded_, hit_bytes_;
  // the cache's units in flight: layout, per-vertex outputs and hits, run when collected
  std::vector<UnitLayout> late_;
  std::vector<PerVertexOut> late_pv_;
  std::vector<char> late_count_;
  std::vector<std::array<bool, 3>> late_hit_;
};

}  // namespace tristream::stream_test
