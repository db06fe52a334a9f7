// stream/host_block_store.hpp — the host block cache: blocks G_ab of range and hash partitions,
// built a whole row part at a time, kept (LRU, within the plan's block_cache_bytes) so that
// units copy or directly upload them instead of decompressing and filtering again.
//
// When every row part's blocks fit (plan.row_parts_bytes <= block_cache_bytes), start_preload()
// builds them all on background threads (block_preload.cpp: decompress -> build -> register, each
// a stage of its own) in the order the units first need them; cached_block() then waits for the
// row part it needs only. With direct uploads (a registrar given: a backend with its own device
// memory) the preload's blocks live in one PinnedArena registered once; blocks outside it are
// registered one by one. Every registration is undone before its memory is freed. The store owns
// its blocks; a unit that uploads from them keeps a shared_ptr until its count has finished.
//
// One store may serve several workers of a process (stream/shared_blocks.hpp: made when every
// row part fits and the preload runs, so nothing is ever evicted while a worker uses it).
// Thread-safety: cached_block(), register_block(), enabled()/disable(), finish_preload() and
// stop_preload() may be called by several drivers at once: a miss builds its row part under
// one lock (the next caller that misses the same block finds it built), registrations take
// another, and the preload is joined once. start_preload() is called once, before any lookup.
// The preload's threads work inside.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/lru_cache.hpp"
#include "stream/block_builder.hpp"
#include "stream/in_core_image.hpp"
#include "stream/pinned_arena.hpp"
#include "tristream/packed_rows.hpp"

namespace tristream::stream {

// A cached block: `off` holds the dense offsets (rows + 1) or, packed, the packed image
// (packed_bytes(packed_rows) bytes: ids, then offsets), exactly as the slot holds it.
struct HostBlock {
  RawArray<eid_t> off;
  RawArray<vid_t> cols;
  bool packed = false;
  std::uint64_t packed_rows = 0;
  std::uint64_t bytes() const { return off.size() * sizeof(eid_t) + cols.size() * sizeof(vid_t); }
  PackedRows packed_view() const {
    return packed ? packed_image(off.data(), packed_rows) : PackedRows{};
  }
};
using BlockKey = std::pair<std::uint32_t, std::uint32_t>;  // (a, b) of G_ab (BlockInfo's parts)

// The host budget's room a plan left unused (beyond its estimate and both caches): the preload
// may decompress more chunks at once in it.
std::uint64_t preload_spare(const Plan& plan);

class HostBlockStore {
 public:
  // registrar: the source of direct uploads, or null (no direct uploads). preload_spare: host
  // bytes the preload may add to the chunk cache. plan, builder, rec and registrar outlive it.
  HostBlockStore(const Plan& plan, BlockBuilder& builder, Recorder& rec, HostRegistrar* registrar,
                 std::uint64_t preload_spare);
  ~HostBlockStore();  // stops the preload
  HostBlockStore(const HostBlockStore&) = delete;
  HostBlockStore& operator=(const HostBlockStore&) = delete;

  // Whether units take their blocks from the store (range or hash, p > 1, a block cache); off
  // for the rest of the run once it could not hold a unit's blocks.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void disable() { enabled_.store(false, std::memory_order_relaxed); }
  // Whether a store for `plan` takes units' blocks (range, hash or pair, p > 1, a block cache),
  // and whether it preloads them all (every row part's blocks within the block cache; with
  // `units`, plan indices, the row parts of those units only).
  static bool uses_store(const Plan& plan);
  static bool would_preload(const Plan& plan, const std::vector<std::size_t>* units = nullptr);
  // Direct uploads are on (the preload runs with a registrar).
  bool direct() const { return direct_; }

  // Pair plans: each row part's suffix block (its whole rows with global ids, the same bytes as
  // the graph's columns) becomes a view of the in-core image's columns instead of a copy, for
  // every row part whose chunks the image holds when it is built. The preload then builds each
  // row part's view as soon as the image holds its rows (preload_views; the image decodes from
  // its last rows, where the pair units start), and reserves an arena for the views' offsets
  // only. Until the image is whole and registered a unit either uploads the views from the
  // image's pageable memory or waits for the registration (wait_for_views), and uploads from
  // the registered image from then on. The image outlives the store. Set before start_preload.
  void use_image(InCoreImage* image, double copy_bytes_per_s) {
    if (plan_.partition.scheme == Scheme::Pair && image && image->n() == plan_.partition.n) {
      image_ = image;
      part_registered_ = std::make_unique<std::atomic<bool>[]>(plan_.partition.p);
      for (std::uint32_t a = 0; a < plan_.partition.p; ++a) part_registered_[a] = false;
    }
    copy_bytes_per_s_ = copy_bytes_per_s;
  }
  // Before unit w takes views of an image not registered yet (direct uploads): waits for the
  // registration unless w's estimated kernel seconds are at least the time its blocks take at
  // the use_image rate (then w uploads them from the image's pageable memory now). True when
  // it waited.
  bool wait_for_views(const WorkUnit& w);
  // Whether every unit's blocks are uploaded from where they lie, never through a host slot:
  // pair's views of the image, every row part preloaded, with a registrar (direct uploads).
  // The pipeline's host slots are then a fallback only (StreamingBackend::
  // set_host_slots_pinned). Known once use_image was called.
  bool uploads_in_place() const {
    return image_ && enabled() && would_preload(plan_) && registrar_;
  }
  // Views of the image (use_image took it).
  bool views_image() const { return image_ != nullptr; }

  // Starts the background preload when every block fits (nothing otherwise). base_nice: the
  // run's base nice value (stream/clock.hpp's priorities). units: the plan indices of the units
  // the store will serve when known before the count (an MPI rank's static share): only their
  // row parts are preloaded, in the order those units first need them; null: every unit's.
  void start_preload(int base_nice, const std::vector<std::size_t>* units = nullptr);
  // Waits for the preload; rethrows its failure (a corrupt chunk).
  void finish_preload();
  // Called once when the preload started by start_preload ends (done, failed or stopped), or
  // at once by start_preload when it starts none; set before start_preload.
  void on_preloaded(std::function<void()> f) { on_preloaded_ = std::move(f); }
  // Stops the preload after its current row part.
  void stop_preload();

  // Who asks for a block: the worker's recorder (its unit's "wait" and "build" spans) and the
  // seconds it waited for the preload (added to).
  struct Caller {
    Recorder& rec;
    double waited_s = 0;
  };
  // The cached block G_ab, building row part a when missing (protect: blocks not to evict); null
  // when the store cannot hold it. While the preload runs, waits for row part a. Without a
  // caller the spans go to the store's recorder.
  std::shared_ptr<HostBlock> cached_block(BlockKey key, const std::vector<BlockKey>& protect,
                                          std::int64_t unit, Caller* caller = nullptr);
  // Registers a block's arrays for direct uploads; true when both are.
  bool register_block(HostBlock& hb);
  // The chunk reader's peak cache bytes.
  std::uint64_t chunk_cache_peak_bytes() const { return builder_.reader().peak_bytes(); }

  // A cached block's arrays as copies to their places in the slot: the offsets region (dense,
  // or the packed image, which `direct` leaves out: the backend uploads a packed block from
  // UnitLayout::host_packed) and the columns. Marks the slot's block packed like the cached one.
  // Throws Error(Internal) when the block differs from the census.
  static void block_regions(const HostBlock& hb, SlotBlock& sb, bool direct,
                            std::vector<DirectUpload>& out);

 private:
  struct PreloadBatch;
  using Made = std::vector<std::shared_ptr<HostBlock>>;
  bool build_row_part(std::uint32_t a, const std::vector<BlockKey>& protect, std::int64_t unit,
                      Recorder& rec, Made* built = nullptr);
  bool register_block_locked(HostBlock& hb);
  // Row part a's suffix block as a view of the image's columns (its offsets built); false when
  // the image does not hold all of the part's chunks yet (`needed`).
  bool suffix_view(std::uint32_t a, const std::vector<std::uint64_t>& needed, HostBlock& hb);
  // Registers the image's columns of row part a (its view's), once; true when they are.
  bool register_part(std::uint32_t a);
  bool part_registered(std::uint32_t a) const {
    return part_registered_[a].load(std::memory_order_acquire);
  }
  template <class T>
  void alloc_array(RawArray<T>& a, std::size_t n);
  void register_blocks(const Made& made, ThreadPool& pool, std::int64_t unit, bool shared = false);
  // block_preload.cpp
  std::vector<PreloadBatch> preload_batches(const std::vector<std::uint32_t>& order,
                                            std::uint64_t cap) const;
  void background_preload(const std::vector<std::uint32_t>& order);
  void preload_views(const std::vector<std::uint32_t>& order);
  void preload_ended(std::exception_ptr err);
  void reserve_arena();

  const Plan& plan_;
  BlockBuilder& builder_;
  ChunkReader& reader_;
  Recorder& rec_;
  HostRegistrar* registrar_;
  std::uint64_t preload_spare_;
  unsigned threads_;
  int base_nice_ = 0;
  std::atomic<bool> enabled_{false};
  std::uint64_t block_cap_ = 0;
  std::uint64_t preload_bytes_ = 0;  // the preloaded row parts' bytes (start_preload)
  std::mutex build_mu_;  // the miss path: one row part built at a time, outside the preload
  std::mutex join_mu_;   // the preload's thread, joined once
  std::mutex reg_mu_;    // registrations of blocks outside the arena
  // (before the blocks, which may live in it: it goes after them)
  PinnedArena arena_;
  std::atomic<bool> direct_{false};
  // the background preload: row parts built so far, guarded by bmu_ (with blocks_)
  std::thread preload_thread_;
  std::mutex bmu_;
  std::condition_variable bcv_;
  std::vector<char> part_ready_;
  bool preload_running_ = false;
  std::function<void()> on_preloaded_;
  InCoreImage* image_ = nullptr;  // pair's suffix blocks view its columns (use_image)
  // per row part: the image's columns of the part are registered (its view's flag); set under
  // bmu_, with bcv_ notified
  std::unique_ptr<std::atomic<bool>[]> part_registered_;
  double copy_bytes_per_s_ = 0;
  std::exception_ptr preload_error_;
  std::atomic<bool> stop_{false};
  LruCache<BlockKey, std::shared_ptr<HostBlock>> blocks_;
};

}  // namespace tristream::stream
