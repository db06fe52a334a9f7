// tristream/pipeline.hpp — the double-buffered streaming pipeline (src/stream/, the CPU backend in
// src/backends/). No CUDA types.
//
// For each work unit of a Plan: the chunks it needs are decompressed by a thread pool (the file
// is mmapped by the Reader, never read whole), its blocks are built (sliced, rebased to local
// ids, pruned) in a staging slot, uploaded and counted. Unit u uses slot u % 2, so unit u + 1 is
// prepared and uploaded while unit u is counted. The same driver runs the CPU backend (a worker
// thread around a Counter) and the CUDA backend (cuda/streaming_backend.cu: pinned slots, a copy
// stream, a compute stream, events).
//
// Streamed staging (Plan::streamed_staging(), the in-core unit when its host slot does not fit the
// host budget): the backend allocates device slots only (allocate_streamed) plus a ring of small
// host staging buffers; the driver fills staging buffer k % buffers with bytes
// [k * piece, (k + 1) * piece) of the unit's slot image, calls upload_piece_async for it, and
// waits for that buffer's previous copy (wait_staging) before overwriting it. The unit's
// upload_async then only closes the upload, and count_async starts after the last piece.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/host_memory_policy.hpp"
#include "common/interrupt.hpp"
#include "tristream/budgets.hpp"
#include "tristream/counter.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"
#include "tristream/host_registrar.hpp"
#include "tristream/packed_rows.hpp"
#include "tristream/plan.hpp"
#include "tristream/stats.hpp"
#include "tristream/wedges.hpp"

namespace tristream {

class ThreadPool;  // common/thread_pool.hpp

namespace stream {
class InCoreImage;     // src/stream/in_core_image.hpp
class HostBlockStore;  // src/stream/host_block_store.hpp
class RowClaims;       // src/stream/row_claims.hpp
}  // namespace stream

// Thrown by a backend when device memory runs out; the pipeline re-plans with a smaller budget.
class DeviceOutOfMemory : public Error {
 public:
  DeviceOutOfMemory(const std::string& what, std::uint64_t requested)
      : Error(ErrorKind::Device, what), requested_(requested) {}
  std::uint64_t requested() const { return requested_; }

 private:
  std::uint64_t requested_;
};

// Where a unit's blocks lie in its slot (byte offsets from the slot's start).
struct SlotBlock {
  std::uint64_t rows = 0, edges = 0, col_space = 0;
  std::uint64_t offsets_at = 0;  // rows + 1 eid_t, offsets[0] == 0
  std::uint64_t cols_at = 0;     // edges vid_t
  // A packed block (packed_rows.hpp) travels as its rows with columns only: its host image
  // (UnitLayout::host_packed) is the packed form, which the backend uploads and expands into the
  // dense offsets at offsets_at before the count. In the host slot the packed image sits at
  // offsets_at (it is smaller than the dense offsets).
  bool packed = false;
  std::uint64_t packed_rows = 0;  // rows with columns
  // The device block cache (device_cache.hpp; backends that keep blocks between units): the
  // block's key (0 = not cached) and the next unit that uses it (kNeverUsed when none).
  std::uint64_t cache_key = 0;
  std::uint64_t next_use = kNeverUsed;
  // Cut by the backend from the unit's block B (pair's A = G_ij out of B = R_i, the rows of part
  // i whole): B's rows with their columns in [cut_lo, cut_hi), as ids column - cut_lo, written
  // as dense offsets and columns (exactly `edges` of them, the census's) before the count. Never
  // uploaded and without host images (cut_rows below is the host's form).
  bool cut = false;
  std::uint64_t cut_lo = 0, cut_hi = 0;
  // The bytes the block costs to upload: its packed image or its dense offsets, and its columns
  // (none when it is cut on the device).
  std::uint64_t image_bytes() const {
    if (cut) return 0;
    return (packed ? packed_bytes(packed_rows) : dense_offsets_bytes(rows)) + edges * sizeof(vid_t);
  }
};

// The rows of a block as its host images give them, dense (offsets) or packed; cols: the
// columns. for_each(x0, x1, f) calls f(u, row's columns, degree) for the rows with columns among
// items [x0, x1) (dense: rows; packed: the image's entries).
struct HostRows {
  std::uint64_t rows = 0;
  const eid_t* offsets = nullptr;
  PackedRows packed;
  const vid_t* cols = nullptr;
  bool valid() const { return (offsets || packed.valid()) && (cols || edges() == 0); }
  std::uint64_t items() const { return offsets ? rows : packed.count; }
  eid_t edges() const { return offsets ? offsets[rows] - offsets[0] : packed.edges(); }
  template <class F>
  void for_each(std::uint64_t x0, std::uint64_t x1, F&& f) const {
    for (std::uint64_t x = x0; x < x1; ++x) {
      const std::uint64_t u = offsets ? x : packed.ids[x];
      const eid_t e0 = offsets ? offsets[x] : packed.offsets[x];
      const eid_t e1 = offsets ? offsets[x + 1] : packed.offsets[x + 1];
      if (e1 > e0) f(u, cols + e0, static_cast<std::uint64_t>(e1 - e0));
    }
  }
  // Row u's columns' count (a binary search when packed).
  std::uint64_t degree(std::uint64_t u) const {
    return offsets ? offsets[u + 1] - offsets[u] : packed.degree(u);
  }
};

// SlotBlock::cut on the host: B's rows with their columns in [lo, hi), ids column - lo, into dense
// offsets out_off (B.rows + 1) and columns out_cols (room for cap). Returns the edges written;
// throws Error(Internal) when they exceed cap.
inline eid_t cut_rows(const HostRows& B, std::uint64_t lo, std::uint64_t hi, eid_t* out_off,
                      vid_t* out_cols, eid_t cap) {
  eid_t e = 0;
  std::uint64_t next = 0;  // the next row whose offset is still to write
  out_off[0] = 0;
  B.for_each(0, B.items(), [&](std::uint64_t u, const vid_t* cols, std::uint64_t deg) {
    for (; next < u; ++next) out_off[next + 1] = e;
    const vid_t *s, *t;
    cut_range(cols, deg, lo, hi, &s, &t);
    TS_CHECK(e + static_cast<eid_t>(t - s) <= cap, "a cut block holds more columns than planned");
    for (; s < t; ++s) out_cols[e++] = static_cast<vid_t>(*s - lo);
    out_off[++next] = e;
  });
  for (; next < B.rows; ++next) out_off[next + 1] = e;
  return e;
}
// A copy from host memory registered with the backend (register_host) straight to byte `at`
// of the slot's device memory: a block of the host block cache uploaded without passing through
// the host slot ("direct upload"); or, for a unit with packed blocks built in the host slot, one
// of that slot's block regions (the slot's whole range would carry the packed images twice).
struct DirectUpload {
  const unsigned char* host = nullptr;
  std::uint64_t at = 0;
  std::uint64_t bytes = 0;
};

struct UnitLayout {
  std::int64_t unit = -1;
  SlotBlock blocks[3];
  int num_blocks = 0;
  int a = 0, b = 0, c = 0;        // roles -> block index
  std::uint64_t upload_from = 0;  // bytes [upload_from, bytes) need uploading (A may be cached)
  std::uint64_t bytes = 0;        // bytes used in the slot
  // Per-vertex: the arrays (rows per space) and the space of each role (u, v, w).
  bool per_vertex = false;
  std::uint64_t space_rows[3] = {0, 0, 0};
  int num_spaces = 0;
  int u_space = 0, v_space = 0, w_space = 0;
  // Streamed staging: the bytes [upload_from, bytes) were already sent with upload_piece_async.
  bool streamed = false;
  // The in-core unit counted in row pieces (StreamingBackend::count_rows_async): its rows
  // [rows_left, rows) were counted already as their bytes arrived; count_async counts the rows
  // [0, rows_left) and ends the unit.
  bool row_pieces = false;
  std::uint64_t rows_left = 0;
  // Direct uploads: the blocks (or parts) copied from registered host memory, besides the host
  // slot's bytes [upload_from, bytes).
  std::vector<DirectUpload> direct;
  // Host images of the blocks (indexed like blocks), for the backend's launch planning, valid
  // until the slot's count has finished: the host slot's copies, or the block cache's blocks
  // (direct uploads, and a reused A that came that way). A streamed unit has no host slot: only
  // A's offsets (the file's, when they start at 0), else null. A packed block has no dense host
  // offsets (null) but host_packed, which is also what the backend uploads for it: from memory
  // registered with the backend (the block cache's) or the host slot, always laid out as one
  // packed image (packed_image: ids, then offsets), so it is uploaded in one copy.
  const eid_t* host_offsets[3] = {nullptr, nullptr, nullptr};
  const vid_t* host_cols[3] = {nullptr, nullptr, nullptr};
  PackedRows host_packed[3];
  // A is already in the device slot (the slot's previous unit had it): neither uploaded nor
  // expanded again.
  bool a_cached = false;
  // A slice (WorkUnit::slices > 1, slice_bounds): the unit counts only the triangles whose
  // middle vertex v, a row of C, lies in [v_begin, v_end); C's other rows count as empty
  // (window_offsets). The blocks are uploaded whole and the slices of a task share them.
  bool sliced = false;
  std::uint64_t v_begin = 0, v_end = 0;
  // Whether block bi is uploaded (and, when packed, expanded) for this unit.
  bool uploads(int bi) const { return !(a_cached && bi == a) && !blocks[bi].cut; }
  // Whether block bi is cut from B by the backend for this unit (SlotBlock::cut).
  bool cuts(int bi) const { return blocks[bi].cut && !(a_cached && bi == a); }
  // Block bi's host images (null offsets and invalid packed rows for a cut block).
  HostRows host_rows(int bi) const {
    return HostRows{blocks[bi].rows, host_offsets[bi], host_packed[bi], host_cols[bi]};
  }
  // Bytes this unit uploads: the host slot's range, the direct copies and the packed blocks.
  std::uint64_t upload_bytes() const {
    std::uint64_t n = streamed ? 0 : bytes - upload_from;
    for (const DirectUpload& d : direct) n += d.bytes;
    for (int bi = 0; bi < num_blocks; ++bi)
      if (blocks[bi].packed && uploads(bi)) n += packed_bytes(blocks[bi].packed_rows);
    return n;
  }
};

// The device block cache's requests for a unit's blocks (keys, device bytes, next uses), as a
// backend that keeps blocks admits them; req holds layout.num_blocks entries. Throws
// Error(Internal) for a block without a cache key.
inline void device_cache_requests(const UnitLayout& layout, DeviceBlockCache::Request* req) {
  for (int bi = 0; bi < layout.num_blocks; ++bi) {
    const SlotBlock& b = layout.blocks[bi];
    if (b.cache_key == 0) throw Error(ErrorKind::Internal, "a block without a cache key");
    req[bi] = {b.cache_key, device_block_bytes(b.rows, b.edges), b.next_use};
  }
}

// The slices of a unit (WorkUnit::slices): slices + 1 boundaries over C's rows (the middle
// vertices v), from 0 to C's rows, cut so that every slice holds about the same estimated work,
// |C(v)| + sum over the edges u -> v of A of (|B(u)| + 1), from the layout's host images of A,
// B and C (host_offsets or host_packed, host_cols). Exact integers: the same boundaries for any
// pool (workers that count the slices of one unit each compute them). pool: the threads of its
// two passes over A (null: the calling thread). Throws Error(Internal) when one is missing.
std::vector<std::uint64_t> slice_bounds(const UnitLayout& layout, std::uint32_t slices,
                                        ThreadPool* pool = nullptr);
// C's offsets with the rows outside [v0, v1) empty: out[v] = off[clamp(v, v0, v1)] for v in
// [0, rows] (a CSR view over C's columns in which only the slice's rows have columns).
inline void window_offsets(const eid_t* off, std::uint64_t rows, std::uint64_t v0, std::uint64_t v1,
                           eid_t* out) {
  for (std::uint64_t v = 0; v <= rows; ++v) out[v] = off[v < v0 ? v0 : (v > v1 ? v1 : v)];
}
// C as the unit counts it on the host: the whole view, or for a slice its window (offsets in
// `window`, which must outlive the returned view).
inline CsrView counted_c(const UnitLayout& layout, CsrView c, std::vector<eid_t>& window) {
  if (!layout.sliced) return c;
  window.resize(c.rows + 1);
  window_offsets(c.offsets, c.rows, layout.v_begin, layout.v_end, window.data());
  c.offsets = window.data();
  return c;
}

// One host -> device copy of a streamed unit (times on the pipeline's clock).
struct UploadPiece {
  double start = -1, end = -1;
  std::uint64_t bytes = 0;
};

struct SlotResult {
  count_t triangles = 0;
  // Per-vertex counts per space (space_rows entries each), when requested.
  const count_t* per_vertex[3] = {nullptr, nullptr, nullptr};
  // Times in seconds on the pipeline's clock (seconds since PipelineClock start); < 0 if unknown.
  double upload_start = -1, upload_end = -1, kernel_start = -1, kernel_end = -1;
  // Streamed staging: every piece's copy (then upload_start/end span them all, gaps included).
  std::vector<UploadPiece> upload_pieces;
  // Row pieces (UnitLayout::row_pieces): each count's kernels (then kernel_start/end span them
  // all, the waits for their bytes included).
  std::vector<UploadPiece> kernel_pieces;
  // With the device block cache: the bytes the unit really uploaded (< 0: the layout's
  // upload_bytes()) and those it found on the device already.
  std::int64_t uploaded_bytes = -1;
  std::uint64_t cache_hit_bytes = 0;
};

// A backend seen by the pipeline. Calls come from one thread. Slots are 0 .. slots - 1 (as
// allocated): a slot holds one unit in flight.
class StreamingBackend : public HostRegistrar {
 public:
  virtual ~StreamingBackend() = default;
  virtual std::string name() const = 0;  // "cpu" or "cuda"
  virtual std::string describe() const = 0;
  // True when staging slots are the device memory itself (CPU): no separate device budget.
  virtual bool device_is_host() const = 0;
  // Free device memory in bytes (0 = no limit known).
  virtual std::uint64_t free_device_bytes() = 0;
  // Sets the start of the run's clock (a steady_clock time in seconds) for the result times.
  virtual void set_clock_origin(double steady_seconds) { (void)steady_seconds; }
  // Allocates `slots` (1 or 2) slots of slot_bytes (pinned host + device on CUDA, plain on CPU)
  // and per-vertex arrays of up to per_vertex_rows entries per slot (all spaces together).
  // With the device block cache (use_device_cache returned true) `slots` is the plan's units in
  // flight (up to 31): the device memory is the cache, and only slots 0 and 1 have host slots
  // (host_slot is null for the others). Throws DeviceOutOfMemory.
  virtual void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t per_vertex_rows) = 0;
  // The host staging buffer of a slot (slot_bytes bytes, aligned to 256).
  virtual unsigned char* host_slot(int slot) = 0;
  // Called before allocate(): false when the host slots are a fallback only, because every
  // block of the plan is uploaded from where it lies (pair's views of the in-core image): the
  // backend may then leave them pageable, not pinned (on CUDA their uploads are then synchronous
  // and slower, and allocating them costs nothing). Default: ignored.
  virtual void set_host_slots_pinned(bool pinned) { (void)pinned; }
  // Called before allocate(): with capacity > 0 the backend may keep blocks on the device
  // between units (device_cache.hpp) in one pool of `capacity` bytes instead of two device
  // slots. It then uploads a block of a unit (from the layout's host images: host_offsets and
  // host_cols, or host_packed) only when the block (SlotBlock::cache_key) is not on the device
  // already, evicting by SlotBlock::next_use; layout.upload_from and layout.direct are then
  // not used. Returns whether it does (false: the slots as usual; the CPU backend, whose slots
  // are its device). 0 turns it off.
  virtual bool use_device_cache(std::uint64_t capacity) {
    (void)capacity;
    return false;
  }
  // With the device block cache: whether the unit's blocks find room now beside the blocks of
  // the units in flight (DeviceBlockCache::fits); when not, the pipeline collects the oldest
  // unit in flight and asks again.
  virtual bool device_cache_fits(const UnitLayout& layout) {
    (void)layout;
    return true;
  }

  // Instead of allocate(), for a unit whose bytes all travel as direct uploads (the in-core
  // image, PipelineOptions::in_core_image): the device slots and per-vertex arrays only, no host
  // slots (host_slot() is then null). The default is allocate().
  virtual void allocate_without_host_slots(int slots, std::uint64_t slot_bytes,
                                           std::uint64_t per_vertex_rows) {
    allocate(slots, slot_bytes, per_vertex_rows);
  }

  // ---- streamed staging ----
  // Instead of allocate(): the device slots (and per-vertex arrays) as allocate() makes them,
  // but no full host slots (on CUDA host_slot() is then null; the CPU backend's slots are its
  // "device" and stay in host memory), plus `buffers` (>= 1) host staging buffers of
  // piece_bytes each (pinned on CUDA). Throws DeviceOutOfMemory.
  virtual void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t per_vertex_rows,
                                 int buffers, std::uint64_t piece_bytes) = 0;
  // Staging buffer b (piece_bytes bytes, aligned to 256).
  virtual unsigned char* staging_buffer(int buffer) = 0;
  // Returns when the last copy out of staging buffer b has finished (the host may then
  // overwrite it); at once when none is pending.
  virtual void wait_staging(int buffer) = 0;
  // Copies `bytes` bytes from the start of staging buffer b to byte device_offset of the slot's
  // device memory; the first piece of a unit is ordered after the slot's previous kernel.
  // Returns at once; the buffer must not be written before wait_staging(b) returns.
  virtual void upload_piece_async(int slot, std::uint64_t device_offset, int buffer,
                                  std::uint64_t bytes) = 0;
  // ---- the in-core unit counted in row pieces (streamed from the in-core image) ----
  // Whether the backend counts the in-core unit (A = B = C: `rows` rows, their offsets on the
  // host) in row pieces as fast as whole: CUDA when the unit's kernel is `trust:in`, whose work
  // is the wedges of each row wherever its rows are cut. Default: no.
  virtual bool counts_row_pieces(const eid_t* offsets, std::uint64_t rows) {
    (void)offsets;
    (void)rows;
    return false;
  }
  // Streamed staging of the in-core unit (layout.row_pieces): enqueues the count of its rows
  // [r0, r1) (A = B = those rows, C = the whole unit) ordered after every piece sent so far,
  // which must hold the offsets and the columns of rows r0 and above. The triangles and the
  // per-vertex counts add up to the unit's (the first call opens its count); count_async ends
  // it. Returns at once. Only where counts_row_pieces says yes.
  virtual void count_rows_async(int slot, const UnitLayout& layout, std::uint64_t r0,
                                std::uint64_t r1) {
    (void)slot;
    (void)layout;
    (void)r0;
    (void)r1;
    throw Error(ErrorKind::Internal, "this backend does not count row pieces");
  }
  // Whether a row count of the slot (count_rows_async) is still running: the driver counts the
  // rows that have arrived when none is, so that the device is never idle and the counts are
  // few. Default: no.
  virtual bool rows_busy(int slot) {
    (void)slot;
    return false;
  }
  // Copies bytes [layout.upload_from, layout.bytes) of the host slot and every layout.direct
  // range to the device, ordered after the slot's previous kernel. Returns at once. With
  // layout.streamed the pieces were sent already: it only closes the unit's upload (the count
  // is ordered after every piece).
  virtual void upload_async(int slot, const UnitLayout& layout) = 0;

  // ---- direct uploads (the host block cache): register_host / unregister_host ----
  // (HostRegistrar, tristream/host_registrar.hpp.) A backend that returns false from
  // register_host (the CPU backend, whose slots are its device) has those blocks copied through
  // the host slot.
  // Counts the unit in the slot after its upload. Returns at once.
  virtual void count_async(int slot, const UnitLayout& layout) = 0;
  // Waits for the slot's count and returns it (per-vertex pointers valid until the next
  // count_async on that slot). Rethrows a failure of the count. Throws Error(Interrupted) when
  // SIGINT/SIGTERM (common/interrupt.hpp) comes before the count has finished; release() then
  // waits for the work still running.
  virtual SlotResult wait(int slot) = 0;
  // Frees the slots (pinned and device memory). Safe to call twice.
  virtual void release() = 0;
};

struct CpuBackendOptions {
  CounterOptions counter;
};
// The CPU backend around a Counter (make_cpu_counter when null).
std::unique_ptr<StreamingBackend> make_cpu_streaming_backend(std::unique_ptr<Counter> counter,
                                                             const CpuBackendOptions& options = {});
// The CUDA backend (cuda/streaming_backend.cu); throws Error(Usage) in a build without CUDA.
std::unique_ptr<StreamingBackend> make_cuda_streaming_backend(const CounterOptions& options);

// Where a worker's units come from when several workers share one plan (stream/workers.hpp):
// next() returns the plan index of the worker's next unit, -1 when none is left for it, or
// kCollectFirst: collect the oldest unit in flight (reporting it with done()) and ask again (the
// scheduler needs the worker's progress to decide; it may also block). done() reports a unit
// whose count was collected, with the seconds since the worker's run started. Called on the
// worker's driving thread only.
class UnitFeed {
 public:
  static constexpr std::int64_t kCollectFirst = -2;
  virtual ~UnitFeed() = default;
  virtual std::int64_t next() = 0;
  virtual void done(std::size_t unit, double seconds) = 0;
  // Whether the worker's host block store preloads row parts in plan order (a worker that takes
  // units from the far end of the order would wait for the whole preload).
  virtual bool preload() const { return true; }
  // The units (plan indices) the worker will take, when they are known before the count (an MPI
  // rank's static share of the plan): its store then preloads their row parts only. Null: any
  // unit of the plan.
  virtual const std::vector<std::size_t>* preload_units() const { return nullptr; }
  // A host block store shared by the workers of the process, preloaded by its owner
  // (stream/shared_blocks.hpp), or null: the worker keeps a store of its own.
  virtual stream::HostBlockStore* shared_store() const { return nullptr; }
  // Called once by the worker when its own host block store's preload has ended (at once when
  // it starts none): its host preparation no longer needs the cores.
  virtual void preloaded() {}
};

// A plan made ahead (count_file's, while the device starts): the options it was made with, the
// plan and its census (ok = false: the planner failed; the count plans again and reports it).
struct ReadyPlan {
  PlanOptions options;
  Plan plan;
  Census census;
  bool ok = false;
  double census_s = 0, plan_s = 0;  // the census's and the planner's own seconds
};
// Whether a ready plan made with `made` serves a count planning with `now`: every option equal
// but the host budget, which may be smaller than now's (the plan then holds less than it may).
bool ready_plan_serves(const PlanOptions& made, const PlanOptions& now);

struct PipelineOptions {
  std::string backend = "auto";  // cpu | cuda | auto
  CounterOptions counter;
  Scheme scheme = Scheme::Auto;
  std::uint32_t parts = 0;        // --parts; 0 = choose
  std::uint64_t gpu_memory = 0;   // --gpu-memory; 0 = measured free memory minus a reserve
  std::uint64_t host_memory = 0;  // --host-memory; 0 = a share of the available memory
  unsigned threads = 0;           // decompression threads; 0 = hardware concurrency
  // The budgets, resolved once per command (resolve_budgets) from the three flags above and the
  // machine; none: count_with_backend resolves them from the flags.
  std::optional<Budgets> budgets;
  bool per_vertex = false;
  std::string trace_path;  // --trace FILE: a Chrome trace of the run
  // Keep the chunks' read and decompress spans in the stats (PipelineStats::spans) without a
  // trace_path too; otherwise they are kept only for a trace (their totals always).
  bool chunk_spans = false;
  bool handle_sigint = true;  // install the SIGINT handler for the run
  int max_replans = 4;
  // Progress: called on the driving thread after each unit's count has been collected, with the
  // units done, the units planned and the seconds since the run started. Must not throw.
  std::function<void(std::uint64_t done, std::uint64_t total, double seconds)> on_unit_done;
  // Several workers (stream/workers.hpp): this worker's units; null = every unit in plan order.
  // With a feed the slots carry no A block between units (WorkUnit::reuse_a assumes plan order).
  UnitFeed* feed = nullptr;
  // Several processes (mpirun): how they share the units: "auto" (the planner's estimate),
  // "static" (contiguous runs of about equal work) or "dynamic" (batches from a shared counter).
  std::string rank_split = "auto";
  // --hybrid: the CPU's first probe only while the GPUs have at least this many seconds of
  // estimated work left (UnitQueue::set_min_probe_seconds); the tests of the cut-off with slow
  // fake GPUs set 0.
  double cutoff_min_probe_s = 2.0;
  // --hybrid: the CPU runs only where its estimated share of the work (the plan's rates for the
  // GPUs, stream::kCpuWorkPerThreadS for the CPU) reaches this fraction: below, what it could
  // take does not pay for its probes and the room it holds (stream/worker_plan.hpp). 0: no bound
  // (the tests of the cut-off beside a real GPU).
  double cutoff_min_share = 0.02;
  // In core, GPUs of different devices in one process cut the one unit into a slice each (every
  // GPU uploads the whole graph and counts its slice). False (the default): one GPU counts the
  // whole unit, the others take none; measured on four H200s the slices were 2-3x slower than
  // one GPU (docs/scale-out.md). TRISTREAM_IN_CORE_SLICES=1 sets it for `count`.
  bool in_core_gpu_slices = false;
  // Several GPUs of one process, the planner choosing the parts: an in-core plan whose kernel
  // the plan's rates estimate at this many seconds or more is made again at 1/GPUs of its
  // device bytes (out of core), so that the GPUs share its units instead of one GPU counting it
  // all (stream/worker_plan.cpp). Negative: never. TRISTREAM_IN_CORE_SPLIT=0 sets it negative for
  // `count`, =S sets S.
  double split_in_core_s = 0.5;
  // Several GPUs of one process and such an in-core plan, its image streamed in row pieces
  // (row_pieces_from): 1 (the default), the GPUs each stream the whole image and count the rows
  // they claim (stream/row_claims.hpp) instead of the split above; 2, also workers that share a
  // device (`--devices 0,0`: no faster, they share its cores; for measuring the claims on one
  // GPU); 0, never. TRISTREAM_IN_CORE_CLAIMS=N sets it for `count`.
  int in_core_row_claims = 1;
  // Out of core, the host block store's background preload (stream/host_block_store.hpp) builds
  // every row part ahead of the units when they all fit the block cache. False: no preload, each
  // unit's blocks are built when it needs them (as MPI ranks with the dynamic split do).
  // TRISTREAM_NO_PRELOAD=1 sets it false for `count`.
  bool preload = true;
  // The in-core unit's host image, decoded while the device started (count_file's, internal:
  // stream/in_core_image.hpp); used when the plan is in core on a device backend, else ignored.
  std::shared_ptr<stream::InCoreImage> in_core_image;
  // An unregistered image of at least this many bytes is streamed in row pieces, each counted
  // as soon as its rows are on the device (stream::image_in_row_pieces), where the backend
  // counts row pieces; a smaller one is registered and uploaded whole. ~0: never.
  std::uint64_t row_pieces_from = std::uint64_t{2} << 30;
  // Several GPUs sharing the in-core unit in row pieces (count_with_workers sets it, internal:
  // stream/row_claims.hpp): each GPU streams the image and counts the rows it claims here.
  std::shared_ptr<stream::RowClaims> row_claims;
  // Out of core with the image (pair's row parts view its columns, each part's columns
  // registered as soon as the image holds them): before its row parts are registered, a unit
  // whose estimated kernel seconds (the plan's rates) are at least the time its blocks take at
  // this rate uploads them from the image's pageable memory and runs; the others wait for the
  // registration. 0 (the default): every unit waits (a part's registration takes about as long
  // as its pageable upload, which does not overlap the kernels as well); infinity: none does.
  double view_copy_bytes_per_s = 0;
  // A plan made while the device started (count_file's, internal): count_with_backend's first
  // plan when ready_plan_serves its options, else ignored; waited for when still being made.
  std::shared_future<ReadyPlan> ready_plan;
  // Several GPUs of one process: the in-core split's plan made while the devices started
  // (count_file's, internal; stream/worker_plan.hpp, split_in_core), taken like ready_plan.
  std::shared_future<ReadyPlan> ready_split_plan;
};

struct CountReport {
  count_t triangles = 0;
  std::vector<count_t> per_vertex;  // n entries (new ids, rank order) when requested
  bool interrupted = false;         // SIGINT: the count is incomplete; exit with 130
  Plan plan;
  PipelineStats stats;
  // Where the plan's block census came from: "none" (the in-core plan needs none), "stored" (the
  // file's census extension) or "pass" (a pass over the graph, take_census).
  std::string census = "none";
};

// The whole streamed count of a graph (p = 1 in-core included): plans, streams, counts, maps
// per-vertex counts from local to global ids. A corrupt chunk throws the Reader's Error(Input).
// `backend` may be given (made beforehand with make_streaming_backend, e.g. to fail fast before
// reading the graph); otherwise one is made from options.backend.
CountReport count_file(const tcsr::Reader& reader, const PipelineOptions& options,
                       StreamingBackend* backend = nullptr);
CountReport count_source(const GraphSource& g, const PipelineOptions& options,
                         StreamingBackend* backend = nullptr);
// The backend options.backend names: cpu, cuda, or auto (CUDA when a device exists, else CPU).
// Throws Error(Usage) for an unknown name, Error(Device) when CUDA has no usable device.
std::unique_ptr<StreamingBackend> make_streaming_backend(const PipelineOptions& options);
// The same with a given backend (tests); the backend is released at the end.
CountReport count_with_backend(const GraphSource& g, const PipelineOptions& options,
                               StreamingBackend& backend);

// The budget flags of the options (gpu_memory, host_memory, threads).
BudgetFlags budget_flags(const PipelineOptions& options);
// The planner's options for a run with these budgets (the scheme, parts and per-vertex choice of
// the options; the budgets as they are). backend may be null (device_is_host then).
PlanOptions plan_options(const PipelineOptions& options, const Budgets& budgets,
                         const StreamingBackend* backend);
// plan_options with options.budgets, or budgets resolved now (resolve_budgets) when it has none:
// --gpu-memory, or the backend's free device memory minus a reserve (device_budget_of_free);
// --host-memory, or default_host_budget(). backend may be null (no device limit).
PlanOptions resolve_plan_options(const PipelineOptions& options, StreamingBackend* backend);
// The first try of a count (replans == 0) takes options.ready_plan when it serves `po`
// (ready_plan_serves; waits while it is still being made): *plan and *census from it (the
// census's seconds 0: spent before), *ahead_s its census and planner seconds. False otherwise.
bool take_ready_plan(const PipelineOptions& options, const PlanOptions& po, std::uint64_t replans,
                     Plan* plan, Census* census, double* ahead_s);
// The same with the plan made ahead in `ready` (any try): false when it is not valid.
bool take_ready_plan(const std::shared_future<ReadyPlan>& ready, const PlanOptions& po, Plan* plan,
                     Census* census, double* ahead_s);

// Runs one plan on a backend (no re-planning). Used by count_with_backend.
CountReport run_plan(const GraphSource& g, const Plan& plan, StreamingBackend& backend,
                     const PipelineOptions& options);

// Undirected degrees (out + in) of every vertex, streamed chunk by chunk on `threads` threads
// (for transitivity and clustering without loading the graph); with max_bytes, on fewer threads
// when n degrees and a chunk per thread would exceed it (one at least).
std::vector<eid_t> streamed_degrees(const GraphSource& g, unsigned threads = 0,
                                    std::uint64_t max_bytes = 0);
// The wedges of the undirected graph (wedge_sum of streamed_degrees, exact) with the in-degrees
// held in 32 bits instead of n 64-bit degrees: half the bytes, for a transitivity without
// per-vertex figures. Threads and max_bytes as in streamed_degrees.
WedgeSum streamed_wedges(const GraphSource& g, unsigned threads = 0, std::uint64_t max_bytes = 0);
// The host bytes streamed_degrees holds at its peak: the degrees and one chunk per thread.
std::uint64_t streamed_degrees_bytes(const GraphSource& g, unsigned threads = 0);

}  // namespace tristream
