// stream/block_preload.cpp — the host block store's background preload: every row part's
// blocks built ahead of the units that need them (stream/host_block_store.hpp).
#include <algorithm>
#include <deque>
#include <iterator>
#include <utility>

#include "common/thread_pool.hpp"
#include "common/thread_priority.hpp"
#include "stream/clock.hpp"
#include "stream/host_block_store.hpp"

namespace tristream::stream {

// The preload's batches: row parts order[x, y) whose chunks are decompressed together.
struct HostBlockStore::PreloadBatch {
  std::size_t x = 0, y = 0;
  std::vector<std::uint64_t> chunks;  // every chunk of the batch (sorted)
  // set by the builder once the previous batch is pinned: the chunks not cached then, and
  // whether they fit beside the cache (else the builder decompresses them when it pins)
  std::vector<std::uint64_t> extra;
  bool fits = false;
  std::vector<ChunkBuffer> bufs;  // extra, decompressed ahead (fits)
};

// Splits the preload order into batches: the first row part alone (the first unit waits for
// one row part only), then as many row parts as give the decompressor 2 chunks per thread,
// each batch with the next at most the chunk cache (one is built while the next is
// decompressed; a batch too large for that is decompressed by the builder, after the previous).
std::vector<HostBlockStore::PreloadBatch> HostBlockStore::preload_batches(
    const std::vector<std::uint32_t>& order, std::uint64_t cap) const {
  std::vector<PreloadBatch> out;
  std::vector<std::uint64_t> nd, merged;
  const std::size_t enough = 2 * static_cast<std::size_t>(std::max(1u, threads_));
  for (std::size_t x = 0; x < order.size();) {
    PreloadBatch B;
    B.x = x;
    std::size_t y = x;
    while (y < order.size() && (y == x || (x > 0 && B.chunks.size() < enough))) {
      builder_.rows_needed(order[y], nd);
      merged.clear();
      std::set_union(B.chunks.begin(), B.chunks.end(), nd.begin(), nd.end(),
                     std::back_inserter(merged));
      if (y > x && reader_.chunk_bytes(merged) > cap / 2) break;
      B.chunks.swap(merged);
      ++y;
    }
    B.y = y;
    out.push_back(std::move(B));
    x = y;
  }
  return out;
}

// The preload as a three-stage pipeline over the batches, each stage on a thread of its own:
//   1. the decompressor (a pool of its own) decompresses batch n+1's chunks that are not
//      cached while batch n is built, when they fit beside the cache (the builder makes room
//      for them and lists them after pinning batch n: the cache stays as it is until then);
//   2. the builder (this thread, on the pool) pins batch n's chunks and builds its row parts;
//   3. with direct uploads, the registrar pins each built row part's blocks for the backend,
//      one at a time, so the builder goes on with the next row part at once.
// A row part is ready (part_ready_) once built and, with direct uploads, registered. (Pair with
// the in-core image: preload_views instead.)
void HostBlockStore::background_preload(const std::vector<std::uint32_t>& order) {
  std::exception_ptr err;
  if (image_) {
    try {
      preload_views(order);
    } catch (...) {
      err = std::current_exception();
    }
    preload_ended(err);
    return;
  }
  const std::uint64_t cap0 = reader_.cache_cap();
  std::mutex mu;  // guards the hand-overs below
  std::condition_variable cv;
  std::size_t decompressed = 0, pinned = 0;  // batches [0, decompressed) ready; [0, pinned)
  bool quit = false;                         // builder -> decompressor and registrar
  bool arena_faulted = false;                // builder -> registrar: register the arena
  std::exception_ptr stage_err;              // the decompressor's or the registrar's failure
  std::deque<std::pair<std::uint32_t, std::vector<std::shared_ptr<HostBlock>>>> to_register;
  std::thread decompressor, registrar;
  auto stop_stages = [&] {
    {
      std::lock_guard<std::mutex> lk(mu);
      quit = true;
    }
    cv.notify_all();
    if (decompressor.joinable()) decompressor.join();
    if (registrar.joinable()) registrar.join();
  };
  try {
    reader_.set_cache_cap(cap0 + preload_spare_);
    const std::uint64_t cap = reader_.cache_cap();
    std::vector<PreloadBatch> batches = preload_batches(order, cap);
    // (every core, at the decompressor's priority: the builder's pool, the preload's critical
    // path, and the driver, which issues the GPU work, come first when the cores are all busy)
    ThreadPool dpool(std::max(1u, threads_), base_nice_ + kDecompressorDrop);
    // the stages use `batches` and `dpool`: they are joined before those go, also when the
    // builder throws
    struct Joiner {
      decltype(stop_stages)& stop;
      ~Joiner() { stop(); }
    } joiner{stop_stages};
    // (the first batch: the cache is empty)
    if (!batches.empty()) {
      batches[0].extra = batches[0].chunks;
      batches[0].fits = reader_.chunk_bytes(batches[0].chunks) <= cap;
    }
    // 1. the decompressor: batch n once batch n - 1 is pinned and batch n's extra chunks known
    decompressor = std::thread([&] {
      (void)set_thread_nice(base_nice_ + kDecompressorDrop);
      try {
        for (std::size_t n = 0; n < batches.size(); ++n) {
          {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [&] { return quit || pinned >= n; });
            if (quit) return;
          }
          PreloadBatch& B = batches[n];
          if (B.fits) B.bufs = reader_.decompress(B.extra, dpool, -1);
          {
            std::lock_guard<std::mutex> lk(mu);
            decompressed = n + 1;
          }
          cv.notify_all();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        stage_err = std::current_exception();
        quit = true;
        cv.notify_all();
      }
    });
    // (direct uploads: the blocks go into one arena, registered first)
    if (direct_) reserve_arena();
    // 3. the registrar: registers the arena once the builder has faulted it in; then, per
    // built row part, pins its blocks outside the arena, one at a time (a registration holds
    // the driver's lock, so the copies and launches the driver issues meanwhile wait: one call
    // at a time lets them in between); then the part is ready. It keeps the driver's
    // priority, which this thread has until it lowers itself below (the thread priorities).
    if (direct_)
      registrar = std::thread([&] {
        ThreadPool rpool(1);
        try {
          if (arena_.size()) {
            {
              std::unique_lock<std::mutex> lk(mu);
              cv.wait(lk, [&] { return quit || arena_faulted; });
              if (!arena_faulted) return;
            }
            const double t0 = now_s();
            (void)arena_.register_with(*registrar_);  // (else its blocks go through the slots)
            rec_.span("register", -1, t0, now_s(), arena_.size());
          }
          if (image_) {  // (the suffix blocks' views: waits for the image to be whole)
            const double t0 = now_s();
            if (image_->register_with(*registrar_))
              rec_.span("register", -1, t0, now_s(), image_->bytes());
          }
          for (;;) {
            std::pair<std::uint32_t, std::vector<std::shared_ptr<HostBlock>>> job;
            {
              std::unique_lock<std::mutex> lk(mu);
              cv.wait(lk, [&] { return quit || !to_register.empty(); });
              if (to_register.empty()) return;  // quit, and nothing left to pin
              job = std::move(to_register.front());
              to_register.pop_front();
            }
            register_blocks(job.second, rpool, -1);
            {
              std::lock_guard<std::mutex> lk(bmu_);
              part_ready_[job.first] = 1;
            }
            bcv_.notify_all();
          }
        } catch (...) {
          std::lock_guard<std::mutex> lk(mu);
          stage_err = std::current_exception();
          cv.notify_all();  // (the builder stops at its next batch)
        }
      });
    // 2. the builder, at the builder's priority from here on; first it faults the arena in
    // (while the decompressor works on the first batch) and hands it to the registrar
    (void)set_thread_nice(base_nice_ + kBuilderDrop);
    if (arena_.size()) {
      const double t0 = now_s();
      arena_.fault_in(reader_.pool());
      rec_.span("fault", -1, t0, now_s(), arena_.size());
      {
        std::lock_guard<std::mutex> lk(mu);
        arena_faulted = true;
      }
      cv.notify_all();
    }
    // (the suffix blocks view the image: every row part's once it is whole)
    if (image_) image_->wait();
    std::vector<std::shared_ptr<HostBlock>> made;
    for (std::size_t n = 0; n < batches.size() && !stop_; ++n) {
      PreloadBatch& B = batches[n];
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return decompressed > n || stage_err; });
        if (stage_err) break;
      }
      if (B.fits) reader_.adopt(B.extra, B.bufs);
      B.bufs.clear();
      // when even one row part does not fit, build_row_part says so
      const bool fits = reader_.pin(B.chunks, -1);
      if (fits && n + 1 < batches.size()) {
        PreloadBatch& N = batches[n + 1];
        N.fits = reader_.room_for(B.chunks, N.chunks, N.extra);
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        pinned = n + 1;
      }
      cv.notify_all();
      const double t0 = now_s();  // (the batch's transform: its builds, not its decompression)
      bool ok = true;
      std::uint64_t bytes = 0;
      for (std::size_t x = B.x; x < B.y && ok && !stop_; ++x) {
        const std::uint32_t a = order[x];
        ok = build_row_part(a, {}, -1, rec_, &made);
        if (!ok) break;
        for (const auto& hb : made) bytes += hb->bytes();
        if (direct_) {
          {
            std::lock_guard<std::mutex> lk(mu);
            to_register.emplace_back(a, std::move(made));
          }
          cv.notify_all();
        } else {
          {
            std::lock_guard<std::mutex> lk(bmu_);
            part_ready_[a] = 1;
          }
          bcv_.notify_all();
        }
        made.clear();
      }
      rec_.span("transform", -1, t0, now_s(), bytes);
      if (!ok) break;  // the rest is built on demand
    }
    stop_stages();
    if (stage_err) std::rethrow_exception(stage_err);
    reader_.drop_cache();
    reader_.set_cache_cap(cap0);
  } catch (...) {
    err = std::current_exception();
  }
  preload_ended(err);
}

// Pair with the in-core image: every row part is a view of the image's columns (suffix_view),
// so nothing is decompressed or copied. Row part a is built (its offsets) as soon as the image
// holds its rows, in the order the units first need them (the image decodes from its last
// chunk, where the pair units start), and is ready at once. With direct uploads the arena (the
// views' offsets) is registered first, and a registrar thread registers each part's columns of
// the image (register_part: one registration per part, in the same order) and then the part's
// blocks outside the arena; a unit waits for its parts' registration (wait_for_views), so no
// unit waits for the whole image and none goes through a host slot.
void HostBlockStore::preload_views(const std::vector<std::uint32_t>& order) {
  std::mutex mu;  // guards the hand-overs below
  std::condition_variable cv;
  bool quit = false;
  std::exception_ptr reg_err;
  std::deque<std::pair<std::uint32_t, Made>> to_register;  // (row part, its blocks)
  std::thread registrar;
  auto stop = [&] {
    {
      std::lock_guard<std::mutex> lk(mu);
      quit = true;
    }
    cv.notify_all();
    if (registrar.joinable()) registrar.join();
  };
  struct Joiner {
    decltype(stop)& f;
    ~Joiner() { f(); }
  } joiner{stop};
  (void)set_thread_nice(base_nice_ + kBuilderDrop);
  if (direct_) {
    // 1. The arena (the views' offsets), faulted in and registered before any part is ready, so
    // that a unit's blocks are registered as soon as the image is.
    reserve_arena();
    if (arena_.size()) {
      double t0 = now_s();
      arena_.fault_in(reader_.pool());
      rec_.span("fault", -1, t0, now_s(), arena_.size());
      t0 = now_s();
      (void)arena_.register_with(*registrar_);
      rec_.span("register", -1, t0, now_s(), arena_.size());
    }
    // 2. The registrar: each row part's columns of the image, then its blocks outside the arena.
    registrar = std::thread([&] {
      ThreadPool rpool(1);
      try {
        for (;;) {
          std::pair<std::uint32_t, Made> job;
          {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [&] { return quit || !to_register.empty(); });
            if (to_register.empty()) return;  // quit, and nothing left to pin
            job = std::move(to_register.front());
            to_register.pop_front();
          }
          (void)register_part(job.first);  // (else its units upload it from pageable memory)
          register_blocks(job.second, rpool, -1, true);  // (the units may use them already)
        }
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        reg_err = std::current_exception();
      }
    });
  }
  // 3. Each row part's view once the image holds its rows, ready at once.
  const Partition& P = plan_.partition;
  const eid_t* off = image_->source_offsets();
  bool have = image_->wait_offsets();
  Made made;
  for (std::size_t x = 0; x < order.size() && have && !stop_; ++x) {
    const std::uint32_t a = order[x];
    if (!(have = image_->wait_edges(off[P.bounds[a]], off[P.bounds[a + 1]]))) break;
    if (!build_row_part(a, {}, -1, rec_, &made)) break;  // (the rest is built on demand)
    {
      std::lock_guard<std::mutex> lk(bmu_);
      part_ready_[a] = 1;
    }
    bcv_.notify_all();
    if (direct_) {
      {
        std::lock_guard<std::mutex> lk(mu);
        to_register.emplace_back(a, std::move(made));
      }
      cv.notify_all();
    }
    made.clear();
  }
  if (!have) image_->wait();  // (rethrows the decoding's failure; else it was stopped)
  stop();
  if (reg_err) std::rethrow_exception(reg_err);
}

void HostBlockStore::preload_ended(std::exception_ptr err) {
  {
    std::lock_guard<std::mutex> lk(bmu_);
    preload_error_ = err;
    preload_running_ = false;
  }
  bcv_.notify_all();
  if (on_preloaded_) on_preloaded_();
}

}  // namespace tristream::stream
