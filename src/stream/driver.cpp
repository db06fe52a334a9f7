// stream/driver.cpp — run_plan (tristream/pipeline.hpp): the plan's units through a backend.
//
// Unit u goes to slot u % slots: prepared (UnitPreparer) while earlier units upload and count,
// then uploaded and counted asynchronously; its result is collected (triangles, per-vertex counts
// mapped to global ids, spans) before its slot is reused. With the device block cache more than
// two units are in flight: units are collected in order, the oldest early when the cache lacks
// room for the next unit's blocks; only two host slots exist, taken in turn by the units that
// build into one. SIGINT or SIGTERM stops between units (rep.interrupted), and inside a unit where
// the backend polls the flag (common/interrupt.hpp). The backend is released at the end, also on
// failure. With a UnitFeed (several workers sharing the plan) the units come from the feed in
// the order it gives them: the slots and the units in flight follow that sequence (position k
// of the sequence takes slot k % slots), and no A block is carried between slots; without one
// the sequence is the plan's order itself.
#include <algorithm>
#include <array>
#include <deque>
#include <map>

#include "common/thread_pool.hpp"
#include "common/thread_priority.hpp"
#include "stream/clock.hpp"
#include "stream/row_claims.hpp"
#include "stream/unit_in_core.hpp"
#include "stream/unit_preparer.hpp"

namespace tristream {

namespace {

using stream::in_core_staging;
using stream::InCoreStaging;
using stream::now_s;
using stream::Recorder;
using stream::SlotState;
using stream::Staging;
using stream::UnitPreparer;

// An empty report of the plan's run on the backend.
CountReport new_report(const GraphSource& g, const Plan& plan, const StreamingBackend& backend,
                       bool per_vertex) {
  CountReport rep;
  rep.plan = plan;
  PipelineStats& st = rep.stats;
  st.backend = backend.name();
  st.scheme = scheme_name(plan.partition.scheme);
  st.parts = plan.partition.p;
  st.device_budget = plan.device_budget;
  st.host_budget = plan.host_budget;
  st.slot_bytes = plan.slot_bytes;
  if (per_vertex) rep.per_vertex.assign(g.n(), 0);
  return rep;
}

// Releases the backend when the run ends, also on failure.
struct ReleaseGuard {
  StreamingBackend& b;
  ~ReleaseGuard() {
    try {
      b.release();
    } catch (...) {
    }
  }
};

// The state of one run: the slots, the units in flight and the report.
class Run {
 public:
  Run(const Plan& plan, StreamingBackend& backend, const PipelineOptions& options, CountReport& rep,
      Recorder& rec, ThreadPool& copy_pool)
      : plan_(plan),
        backend_(backend),
        options_(options),
        rep_(rep),
        rec_(rec),
        copy_pool_(copy_pool) {}

  // Sets up the device block cache, the slots and the backend's memory. Throws
  // DeviceOutOfMemory.
  void allocate(UnitPreparer& prep);
  // Prepares, uploads and counts unit u as the k-th of the run's sequence; false when SIGINT
  // stopped it.
  bool launch(std::size_t k, std::size_t u, UnitPreparer& prep);
  // Collects every unit in flight (in unit order), or after SIGINT whatever has finished.
  void drain(bool interrupted);
  // Collects the oldest unit in flight; false when none is.
  bool collect_oldest() {
    if (flying_.empty()) return false;
    collect_through(static_cast<std::int64_t>(flying_.front()));
    return true;
  }

 private:
  int slot_of(std::size_t k) const { return static_cast<int>(k % static_cast<std::size_t>(n_)); }
  void collect(int s);
  void collect_through(std::int64_t k);
  void add_per_vertex(const SlotState& ss, const SlotResult& r);
  void mark_cached(std::size_t u, UnitLayout& L) const;
  bool uses_host_slot(const UnitLayout& L, const unsigned char* h) const;
  void slice(std::size_t u, UnitLayout& L);

  const Plan& plan_;
  StreamingBackend& backend_;
  const PipelineOptions& options_;
  CountReport& rep_;
  Recorder& rec_;
  ThreadPool& copy_pool_;
  bool streamed_ = false, device_cache_ = false;
  stream::InCoreImage* image_ = nullptr;  // the in-core unit's image, when it is used
  InCoreStaging staging_;  // streamed: the ring of pieces (the plan's, or the in-core unit's)
  int n_ = 2;              // units in flight
  std::vector<SlotState> slots_;
  std::vector<std::uint64_t> next_use_;
  std::deque<std::size_t> flying_;  // positions in the sequence
  std::size_t launched_ = 0;
  std::int64_t host_user_[2] = {-1, -1};
  int next_host_ = 0;
  // the slice boundaries of each sliced task (slice_bounds), from its first slice to its last
  std::map<std::array<std::uint32_t, 4>, std::vector<std::uint64_t>> slice_cache_;
};

void Run::allocate(UnitPreparer& prep) {
  staging_ = in_core_staging(plan_, prep.graph(), resolve_threads(options_.threads),
                             backend_.device_is_host());
  streamed_ = staging_.piece_bytes > 0;
  TS_CHECK(!streamed_ || (plan_.partition.p <= 1 && staging_.buffers >= 1),
           "streamed staging is planned for the in-core unit only");
  const std::uint64_t pv_rows = options_.per_vertex ? plan_.per_vertex_rows : 0;
  // The device block cache (when the plan has one and the backend keeps blocks): every block
  // travels with its key and its next use; up to the plan's lanes are in flight.
  device_cache_ = backend_.use_device_cache(streamed_ ? 0 : plan_.device_cache_bytes) && !streamed_;
  n_ = device_cache_ ? std::max(plan_.slots, plan_.in_flight) : plan_.slots;
  TS_CHECK(n_ >= 1 && n_ <= 31, "units in flight out of range");
  slots_.assign(static_cast<std::size_t>(n_), SlotState{});
  prep.set_slots(options_.feed ? 0 : n_);  // a feed: no A carried between slots
  if (device_cache_) next_use_ = device_cache_next_uses(plan_);
  // The in-core image decoded while the device started (stream/in_core_image.hpp): the in-core
  // unit's slot image already, uploaded from where it is, so no host slot is pinned (also for
  // the slices of the in-core unit that several workers share: slice_in_core).
  stream::InCoreImage* image = options_.in_core_image.get();
  if (image && !streamed_ && !device_cache_ && !backend_.device_is_host() &&
      plan_.partition.p <= 1 && image->n() == prep.graph().n() && image->m() == prep.graph().m() &&
      image->bytes() <= plan_.slot_bytes)
    image_ = image;
  // An unregistered image of the one in-core unit is streamed in row pieces, each counted as it
  // arrives (InCoreUnitBuilder::build_from_image) where the backend can; so is each slice of it
  // that several GPUs share by claiming its rows (options_.row_claims: the slice is only a turn,
  // the claims say which rows it counts); otherwise it is registered now for its whole upload.
  stream::RowClaims* claims = image_ ? options_.row_claims.get() : nullptr;
  if (image_ && !image_->registered()) {
    const bool whole = plan_.units.size() == 1 && plan_.units[0].slices <= 1;
    if ((whole || claims) &&
        stream::image_in_row_pieces(*image_, backend_, options_.row_pieces_from)) {
      staging_ = stream::row_piece_staging(*image_);
      streamed_ = true;
    } else {
      // (traced: the wait for the image's decoding, then its registration, which another
      // worker's may hold; neither is a unit's)
      const double t0 = now_s();
      image_->wait();
      const double t1 = now_s();
      rec_.span("wait", -1, t0, t1, 0);
      image_->register_with(backend_);
      rec_.span("register", -1, t1, now_s(), image_->bytes());
    }
  }
  TS_CHECK(!options_.row_claims || streamed_,
           "the in-core unit's rows are claimed by GPUs that do not stream it in row pieces");
  prep.use_in_core_image(image_, claims);
  // Out of core the image serves pair's suffix blocks (whole rows: its own columns).
  if (image && plan_.partition.p > 1 && image->n() == prep.graph().n() &&
      image->m() == prep.graph().m())
    prep.use_image_for_blocks(image, options_.view_copy_bytes_per_s);
  // (then no unit goes through a host slot: they are a fallback, not pinned, costing nothing)
  backend_.set_host_slots_pinned(!(device_cache_ && prep.uploads_in_place()));
  if (streamed_)
    backend_.allocate_streamed(n_, plan_.slot_bytes, pv_rows, staging_.buffers,
                               staging_.piece_bytes);
  else if (image_)
    backend_.allocate_without_host_slots(n_, plan_.slot_bytes, pv_rows);
  else
    backend_.allocate(n_, plan_.slot_bytes, pv_rows);
}

bool Run::launch(std::size_t k, std::size_t u, UnitPreparer& prep) {
  const int s = slot_of(k);
  // 1. The slot's previous unit (k - n) has finished before its memory is reused; with more
  // than two slots, so has the last user of the host slot whose turn it is.
  collect_through(static_cast<std::int64_t>(k) - n_);
  const int h = n_ > 2 ? next_host_ : s;
  if (n_ > 2) collect_through(host_user_[h]);
  // 2. Build the unit (streamed: and send its pieces).
  if (streamed_) {
    Staging sg;
    sg.backend = &backend_;
    sg.slot = s;
    sg.buffers = staging_.buffers;
    sg.piece_bytes = staging_.piece_bytes;
    if (!prep.prepare(u, nullptr, slots_[s], &sg)) return false;  // SIGINT between two pieces
  } else {
    prep.prepare(u, image_ ? image_->data() : backend_.host_slot(h), slots_[s]);
  }
  UnitLayout& L = slots_[s].layout;
  // 3. A slice: its middle vertices; the host slot's turn; the device cache's keys and room.
  if (plan_.units[u].slices > 1 && !options_.row_claims) slice(u, L);
  if (n_ > 2 && uses_host_slot(L, backend_.host_slot(h))) {
    host_user_[h] = static_cast<std::int64_t>(k);
    next_host_ ^= 1;
  }
  if (device_cache_) {
    mark_cached(u, L);
    while (!flying_.empty() && !backend_.device_cache_fits(L))
      collect_through(static_cast<std::int64_t>(flying_.front()));
  }
  // 4. Upload and count, asynchronously.
  backend_.upload_async(s, L);
  backend_.count_async(s, L);
  flying_.push_back(k);
  launched_ = k + 1;
  return true;
}

void Run::drain(bool interrupted) {
  if (!interrupted) {
    collect_through(static_cast<std::int64_t>(launched_));
    return;
  }
  for (int s = 0; s < n_; ++s) {
    try {
      collect(s);
    } catch (...) {
    }
  }
}

void Run::collect_through(std::int64_t k) {
  while (!flying_.empty() && static_cast<std::int64_t>(flying_.front()) <= k) {
    collect(slot_of(flying_.front()));
    flying_.pop_front();
  }
}

void Run::collect(int s) {
  SlotState& ss = slots_[s];
  if (ss.unit < 0) return;
  const double origin = rec_.origin();
  const double w0 = now_s();
  SlotResult r = backend_.wait(s);
  rec_.span("wait", ss.unit, w0, now_s(), 0);
  rep_.triangles += r.triangles;
  const UnitLayout& L = ss.layout;
  if (!r.upload_pieces.empty()) {  // streamed staging: a span per piece
    for (const UploadPiece& piece : r.upload_pieces)
      rec_.span("upload", ss.unit, origin + piece.start, origin + piece.end, piece.bytes);
  } else if (r.upload_start >= 0) {
    const std::uint64_t up =
        r.uploaded_bytes >= 0 ? static_cast<std::uint64_t>(r.uploaded_bytes) : L.upload_bytes();
    rec_.span("upload", ss.unit, origin + r.upload_start, origin + r.upload_end, up);
  }
  rep_.stats.device_cache_hit_bytes += r.cache_hit_bytes;
  if (!r.kernel_pieces.empty()) {  // row pieces: a span per count
    for (const UploadPiece& piece : r.kernel_pieces)
      rec_.span("kernel", ss.unit, origin + piece.start, origin + piece.end, piece.bytes);
  } else if (r.kernel_start >= 0) {
    rec_.span("kernel", ss.unit, origin + r.kernel_start, origin + r.kernel_end, L.bytes);
  }
  if (options_.per_vertex) add_per_vertex(ss, r);
  ++rep_.stats.units;
  if (options_.feed) options_.feed->done(static_cast<std::size_t>(ss.unit), now_s() - origin);
  ss.unit = -1;
  if (options_.on_unit_done)
    options_.on_unit_done(rep_.stats.units, plan_.units.size(), now_s() - origin);
}

// Each space maps its rows to distinct vertices, so its rows are added in parallel pieces;
// spaces one after another (a vertex scheme's proxies may include its own rows).
void Run::add_per_vertex(const SlotState& ss, const SlotResult& r) {
  const Partition& P = plan_.partition;
  const UnitLayout& L = ss.layout;
  std::vector<count_t>& out = rep_.per_vertex;
  for (int x = 0; x < L.num_spaces; ++x) {
    const count_t* c = r.per_vertex[x];
    if (!c) continue;
    copy_pool_.parallel_for(L.space_rows[x], 65536, [&](std::uint64_t l0, std::uint64_t l1) {
      if (P.p <= 1) {
        for (std::uint64_t l = l0; l < l1; ++l) out[l] += c[l];
      } else if (P.scheme == Scheme::Vertex) {
        if (x == 0)
          for (std::uint64_t l = l0; l < l1; ++l) out[ss.row0 + l] += c[l];
        else
          for (std::uint64_t l = l0; l < l1; ++l) out[ss.proxies[l]] += c[l];
      } else {
        const std::uint32_t part = ss.space_part[x];
        for (std::uint64_t l = l0; l < l1; ++l) out[P.global_of(part, l)] += c[l];
      }
    });
  }
}

void Run::mark_cached(std::size_t u, UnitLayout& L) const {
  const WorkUnit& w = plan_.units[u];
  const BlockInfo* roles[3] = {&w.a, &w.b, &w.c};
  const int index[3] = {L.a, L.b, L.c};
  for (int r = 0; r < 3; ++r) {
    L.blocks[index[r]].cache_key = device_cache_key(plan_, *roles[r]);
    L.blocks[index[r]].next_use = next_use_[3 * u + static_cast<std::size_t>(r)];
  }
}

// Whether the unit reads host slot h (its range, a direct copy or a host image lies in it).
bool Run::uses_host_slot(const UnitLayout& L, const unsigned char* h) const {
  if (!h) return false;
  auto in = [&](const void* q) {
    const auto* c = static_cast<const unsigned char*>(q);
    return c && c >= h && c < h + plan_.slot_bytes;
  };
  if (L.upload_from < L.bytes) return true;
  for (const DirectUpload& d : L.direct)
    if (in(d.host)) return true;
  for (int bi = 0; bi < L.num_blocks; ++bi)
    if (in(L.host_offsets[bi]) || in(L.host_packed[bi].ids) ||
        (L.blocks[bi].edges && in(L.host_cols[bi])))
      return true;
  return false;
}

// A slice: its middle vertices, cut once per task (at its first slice).
void Run::slice(std::size_t u, UnitLayout& L) {
  const WorkUnit& w = plan_.units[u];
  const std::array<std::uint32_t, 4> key{w.i, w.j, w.k, w.slices};
  auto it = slice_cache_.find(key);
  if (it == slice_cache_.end())
    it = slice_cache_.emplace(key, slice_bounds(L, w.slices, &copy_pool_)).first;
  L.sliced = true;
  L.v_begin = it->second.at(w.slice);
  L.v_end = it->second.at(w.slice + 1);
  if (w.slice + 1 == w.slices) slice_cache_.erase(it);  // the task's last slice
}

}  // namespace

CountReport run_plan(const GraphSource& g, const Plan& plan, StreamingBackend& backend,
                     const PipelineOptions& options) {
  // 1. The report and the run's clock.
  CountReport rep = new_report(g, plan, backend, options.per_vertex);
  PipelineStats& st = rep.stats;
  const double origin = now_s();
  Recorder rec(origin, st, !options.trace_path.empty() || options.chunk_spans);
  backend.set_clock_origin(origin);
  // A worker of several takes its first unit before anything is allocated, so that one that
  // gets none (the CPU beside GPUs that count everything) costs nothing. (Nothing is in flight
  // yet: never kCollectFirst.)
  const std::int64_t first = options.feed && !plan.units.empty() ? options.feed->next() : 0;
  if (plan.units.empty() || first < 0) {
    if (options.feed && options.feed->preload()) options.feed->preloaded();  // (none started)
    rep.interrupted = first < 0 && interrupt_requested();
    st.wall_s = now_s() - origin;
    st.finish_from_spans();
    return rep;
  }
  // (the run's memory is given back when this scope ends: the backend's release, the host
  // blocks' unregistration and freeing, timed as release_s)
  double release0 = 0;
  {
    // 2. Threads: this one drives the GPU (raised); the copy pool works for it; the pool builds
    // blocks (the preload's builder, or this thread's own prepares) below it.
    const unsigned threads =
        options.budgets ? options.budgets->threads : resolve_threads(options.threads);
    PriorityBoost boost(stream::kDriverBoost);
    ThreadPool pool(threads, boost.base() + stream::kBuilderDrop);
    ThreadPool copy_pool(threads);
    // 3. The unit preparer and the backend's memory.
    UnitPreparer prep(g, plan, pool, copy_pool, rec, options.per_vertex,
                      stream::preload_spare(plan), backend.device_is_host() ? nullptr : &backend,
                      options.feed ? options.feed->shared_store() : nullptr);
    ReleaseGuard guard{backend};
    Run run(plan, backend, options, rep, rec, copy_pool);
    run.allocate(prep);
    // 4. Every unit in order (or as the feed gives them), until SIGINT.
    UnitFeed* feed = options.feed;
    if (!feed) {
      if (options.preload) prep.start_preload(boost.base());
    } else if (feed->preload()) {
      prep.start_preload(
          boost.base(), [feed] { feed->preloaded(); }, feed->preload_units());
    } else {
      feed->preloaded();
    }
    for (std::size_t k = 0; !rep.interrupted; ++k) {
      if (!options.feed && k == plan.units.size()) break;
      try {
        if (interrupt_requested()) {
          rep.interrupted = true;
          break;
        }
        std::int64_t u = !options.feed ? static_cast<std::int64_t>(k)
                         : k == 0      ? first
                                       : options.feed->next();
        while (u == UnitFeed::kCollectFirst) {
          TS_CHECK(run.collect_oldest(), "the scheduler waits for a unit that is not in flight");
          u = options.feed->next();
        }
        if (u < 0) break;
        rep.interrupted = !run.launch(k, static_cast<std::size_t>(u), prep);
      } catch (const Error& e) {  // the backend saw the signal before launching the unit
        if (e.kind() != ErrorKind::Interrupted) throw;
        rep.interrupted = true;
      }
    }
    // A signal during the last unit (the only one, in core): the backend abandons it (its wait
    // throws Error(Interrupted)), which the interrupted drain discards.
    rep.interrupted = rep.interrupted || interrupt_requested();
    // 5. Drain, and end the preload (rethrowing its failure).
    run.drain(rep.interrupted);
    if (rep.interrupted)
      prep.stop_preload();
    else
      prep.finish_preload();
    st.chunk_cache_peak_bytes = prep.chunk_cache_peak_bytes();
    st.wall_s = now_s() - origin;
    release0 = now_s();
  }
  st.release_s = now_s() - release0;
  st.finish_from_spans();
  return rep;
}

}  // namespace tristream
