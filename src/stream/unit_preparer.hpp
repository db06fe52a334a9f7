// stream/unit_preparer.hpp — makes a unit ready for upload: places its blocks in a slot, has the
// unit builder of its kind fill them, and describes the result (UnitLayout) for the backend.
//
// It owns the pieces that turn chunks into blocks: the chunk reader, the block builder, the host
// block store (with its preload; or it uses one shared by the workers of the process, whose
// owner starts and ends its preload) and the three unit builders (in-core, range/hash, vertex).
// prepare() runs on the driver's thread only. The "transform" span of a unit excludes its
// decompression and its waits for the preload or for staging buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "stream/host_block_store.hpp"
#include "stream/slot_state.hpp"
#include "stream/unit_in_core.hpp"
#include "stream/unit_range.hpp"
#include "stream/unit_vertex.hpp"

namespace tristream::stream {

class UnitPreparer {
 public:
  // pool: decompression and block building; copy_pool: the copies into the slots (the
  // background preload builds on `pool` while the driver copies units on `copy_pool`).
  // registrar: the source of direct uploads, or null. preload_spare: host bytes the preload may
  // add to the chunk cache (the budget's room that the plan left unused). shared: a host block
  // store shared by several workers (made for the same plan), or null. All outlive it.
  UnitPreparer(const GraphSource& g, const Plan& plan, ThreadPool& pool, ThreadPool& copy_pool,
               Recorder& rec, bool per_vertex, std::uint64_t preload_spare,
               HostRegistrar* registrar, HostBlockStore* shared = nullptr);

  // The plan's reuse_a (A left in the slot by the slot's unit before last) holds with two slots
  // only; with more units in flight (the device block cache) every unit names all its blocks.
  void set_slots(int slots) { reuse_ok_ = slots == 2; }
  // Starts the host block store's preload (base_nice: the run's base nice value; preloaded:
  // called once it has ended, or at once when none starts; units: those it will serve, when
  // known, HostBlockStore::start_preload); waits for it (rethrowing its failure); stops it. A
  // shared store's preload is its owner's: not here.
  void start_preload(int base_nice, std::function<void()> preloaded = {},
                     const std::vector<std::size_t>* units = nullptr) {
    if (!own_store_) {
      if (preloaded) preloaded();
      return;
    }
    own_store_->on_preloaded(std::move(preloaded));
    own_store_->start_preload(base_nice, units);
  }
  void finish_preload() {
    if (own_store_) own_store_->finish_preload();
  }
  void stop_preload() {
    if (own_store_) own_store_->stop_preload();
  }
  std::uint64_t chunk_cache_peak_bytes() const { return reader_.peak_bytes(); }
  const GraphSource& graph() const { return g_; }
  // The in-core unit comes from this image (passed to prepare() as its slot): InCoreUnitBuilder;
  // with claims, streamed in row pieces, only the rows claimed there are counted.
  void use_in_core_image(InCoreImage* image, RowClaims* claims = nullptr) {
    in_core_.use_image(image);
    in_core_.use_claims(claims);
  }
  // Out of core, pair's suffix blocks view this image's columns (HostBlockStore::use_image; a
  // store of its own only). Before start_preload.
  void use_image_for_blocks(InCoreImage* image, double copy_bytes_per_s) {
    if (own_store_) own_store_->use_image(image, copy_bytes_per_s);
  }
  // Whether no unit goes through a host slot (HostBlockStore::uploads_in_place; its own store's
  // or the shared one's).
  bool uploads_in_place() const { return store_.uploads_in_place(); }

  // Builds unit u into the host slot and fills the slot state. With `staging` (streamed
  // staging, p = 1 only; slot is then null) the unit is built and uploaded piece by piece
  // through the backend's staging buffers instead. Returns false when SIGINT stopped a streamed
  // build between two pieces (the slot state is then left without a unit).
  bool prepare(std::size_t u, unsigned char* slot, SlotState& st, Staging* staging = nullptr);

 private:
  bool reuses_a(const WorkUnit& w) const { return w.reuse_a && reuse_ok_; }
  std::uint64_t place_blocks(const WorkUnit& w, const SlotState& st, UnitLayout& L) const;
  bool build_blocks(const WorkUnit& w, unsigned char* slot, UnitLayout& L, SlotState& st,
                    Staging* staging);
  void range_spaces(const WorkUnit& w, UnitLayout& L, SlotState& st) const;

  const GraphSource& g_;
  const Plan& plan_;
  Recorder& rec_;
  bool per_vertex_;
  ChunkReader reader_;
  BlockBuilder builder_;
  std::unique_ptr<HostBlockStore> own_store_;  // (null with a shared store)
  HostBlockStore& store_;
  InCoreUnitBuilder in_core_;
  RangeUnitBuilder range_;
  VertexUnitBuilder vertex_;
  bool reuse_ok_ = true;
  std::size_t spans_seen_ = 0;
  std::vector<std::shared_ptr<const void>> keep_;  // the unit being prepared's cached blocks
};

}  // namespace tristream::stream
