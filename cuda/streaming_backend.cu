// cuda/streaming_backend.cu — the CUDA StreamingBackend of the pipeline (tristream/pipeline.hpp):
// ties the slots (stream_slots.hpp), the staging ring (stream_staging.hpp) and the device block
// cache (device_block_cache.hpp) to two streams: uploads on a copy stream, counts on a compute
// stream, the slots' events ordering them (the upload into a slot waits for that slot's previous
// kernel; a kernel waits for its upload), CUDA-event timing on the pipeline's clock, NVTX ranges
// when nvtx3 exists.
//
// Contract: the calls come from one thread, in the order pipeline.hpp states. Device
// out-of-memory (slots, the block cache, packed scratch, kernel scratch) throws
// DeviceOutOfMemory (check.hpp) so the pipeline re-plans with a smaller budget; the pipeline then
// calls release(), which leaves the backend as new.
//
// Three ways to hold a unit's blocks on the device:
//   - two device slots with two pinned host slots (allocate): the unit's slot image is copied
//     from its host slot, plus the direct uploads from registered host memory;
//   - the device block cache (use_device_cache, then allocate): one pool instead of the device
//     slots, one slot per unit in flight (host slots for the first two only; pageable, not
//     pinned, after set_host_slots_pinned(false), when every block is uploaded from where it
//     lies);
//   - streamed staging (allocate_streamed): device slots without host slots, the unit sent in
//     pieces through the staging ring; the first piece of a unit waits for the slot's previous
//     kernel like upload_async.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "check.hpp"
#include "device_block_cache.hpp"
#include "launch.hpp"
#include "stream_slots.hpp"
#include "stream_staging.hpp"
#include "tristream/error.hpp"
#include "tristream/pipeline.hpp"
#include "wait.hpp"

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define TS_HAVE_NVTX 1
#endif
#endif

namespace tristream {

namespace {

struct NvtxRange {
#ifdef TS_HAVE_NVTX
  explicit NvtxRange(const std::string& name) {
    nvtxRangePushA(name.c_str());
  }
  ~NvtxRange() {
    nvtxRangePop();
  }
#else
  explicit NvtxRange(const std::string&) {}
#endif
};

class CudaStreamingBackend final : public StreamingBackend {
 public:
  explicit CudaStreamingBackend(const CounterOptions& o) : opts_(o) {
    int count = 0;
    if (!cuda::cuda_ok(cudaGetDeviceCount(&count)) || count == 0)
      throw Error(ErrorKind::Device,
                  "no usable CUDA device (streaming backend); use --backend cpu");
    if (o.device < 0 || o.device >= count)
      throw Error(ErrorKind::Usage, "--device " + std::to_string(o.device) + ": only " +
                                        std::to_string(count) + " CUDA device(s)");
    TS_CUDA_CHECK(cudaSetDevice(o.device));
    cudaDeviceProp prop;
    TS_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
    device_name_ = prop.name;
    TS_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    TS_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
    clock_.create();
    // The kernels' first-launch costs now, before any timed unit (the count makes the backend on
    // a thread of its own while it opens the file).
    // TRISTREAM_NO_WARMUP=1 leaves them to the first unit (to measure what the warm-up saves).
    const char* no_warm_up = std::getenv("TRISTREAM_NO_WARMUP");
    if (!no_warm_up || std::string(no_warm_up) != "1") cuda::warm_up_kernels(o.kernel, compute_);
  }
  ~CudaStreamingBackend() override {
    release();
    clock_.destroy();
    TS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(copy_));
    TS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(compute_));
  }

  std::string name() const override { return "cuda"; }
  std::string describe() const override {
    return "cuda device " + std::to_string(opts_.device) + " (" + device_name_ + "), kernel " +
           opts_.kernel + ", streamed";
  }
  bool device_is_host() const override { return false; }
  std::uint64_t free_device_bytes() override {
    std::size_t free = 0, total = 0;
    TS_CUDA_CHECK(cudaSetDevice(opts_.device));
    TS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }
  void set_clock_origin(double t) override { clock_.set_origin(t); }

  // ---- direct uploads ----

  // A registration holds the driver for its whole length (about 10 GB/s on the H100 machine):
  // the pipeline's launches and copies waited behind the in-core image's row parts (Kronecker
  // 26's first kernel ran 8x its time). So memory is registered in pieces of 32 MiB, each after
  // this backend's driver thread's current upload or launch (driver_calls_; with several GPUs
  // the others' calls may wait behind a piece), and copies are split at the pieces' edges
  // (HostRegistrations::copy; the registry is the process's, so that every worker's copies are
  // split where any backend registered). TRISTREAM_REGISTER_PIECE_BYTES (bytes, rounded down to
  // whole pages) sets another size: the tests' small graphs cross pieces only with small ones.
  static std::uint64_t register_piece_bytes() {
    constexpr std::uint64_t kPage = 4096;
    const char* env = std::getenv("TRISTREAM_REGISTER_PIECE_BYTES");
    const std::uint64_t b = env ? std::strtoull(env, nullptr, 10) : std::uint64_t{32} << 20;
    return std::max(kPage, b / kPage * kPage);
  }
  bool register_host(void* p, std::uint64_t bytes) override {
    if (!cuda::cuda_ok(cudaSetDevice(opts_.device))) return false;
    auto* base = static_cast<unsigned char*>(p);
    const std::uint64_t piece = register_piece_bytes();
    for (std::uint64_t at = 0; at < bytes; at += piece) {
      const std::uint64_t n = std::min(piece, bytes - at);
      while (driver_calls_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
      if (!cuda::cuda_ok(cudaHostRegister(base + at, n, cudaHostRegisterPortable))) {
        // Undo this call's pieces only: the same pointer may be registered already (another
        // worker's registration of it, which stays).
        for (std::uint64_t done = 0; done < at; done += piece) {
          regs_.remove(base + done);
          TS_CUDA_CHECK_NOTHROW(cudaHostUnregister(base + done));
        }
        return false;
      }
      regs_.add(base + at, n, p);
    }
    return true;
  }
  void unregister_host(void* p) noexcept override {
    for (void* piece : regs_.take(p)) TS_CUDA_CHECK_NOTHROW(cudaHostUnregister(piece));
  }
  // The driver thread's uploads and launches, during which no registration piece starts.
  struct DriverCall {
    explicit DriverCall(std::atomic<int>& n) : n_(n) { n_.fetch_add(1, std::memory_order_acq_rel); }
    ~DriverCall() { n_.fetch_sub(1, std::memory_order_acq_rel); }
    DriverCall(const DriverCall&) = delete;
    DriverCall& operator=(const DriverCall&) = delete;
    std::atomic<int>& n_;
  };

  // ---- allocation ----

  bool use_device_cache(std::uint64_t capacity) override {
    cache_capacity_ = capacity;
    return capacity > 0;
  }

  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    allocate_slots(slots, slot_bytes, pv_rows, true, 0, 0);
  }

  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    if (buffers < 1 || piece_bytes == 0)
      throw Error(ErrorKind::Internal, "streamed staging needs at least one staging buffer");
    allocate_slots(slots, slot_bytes, pv_rows, false, buffers, piece_bytes);
  }

  void allocate_without_host_slots(int slots, std::uint64_t slot_bytes,
                                   std::uint64_t pv_rows) override {
    allocate_slots(slots, slot_bytes, pv_rows, false, 0, 0);
  }

  unsigned char* host_slot(int s) override { return slots_.at(s).host; }
  void set_host_slots_pinned(bool pinned) override { pageable_host_slots_ = !pinned; }

  // ---- streamed staging ----

  unsigned char* staging_buffer(int b) override { return staging_.buffer(b); }

  void wait_staging(int b) override {
    select();
    int slot = 0;
    UploadPiece piece;
    if (staging_.wait(b, clock_, &slot, &piece)) slots_[slot].pieces.push_back(piece);
  }

  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    select();
    cuda::UnitSlot& sl = slots_[s];
    (void)staging_.buffer(b);  // an unknown buffer throws before anything is enqueued
    if (at + bytes > slot_bytes_ || bytes > staging_.piece_bytes())
      throw Error(ErrorKind::Internal, "a staging piece lies outside its slot");
    wait_staging(b);  // at once unless the host broke the contract; keeps the timing right
    if (!sl.upload_open) cuda::open_upload(sl, copy_);
    staging_.send(b, s, sl.dev + at, bytes, copy_);
  }

  // ---- the in-core unit in row pieces ----

  bool counts_row_pieces(const eid_t* offsets, std::uint64_t rows) override {
    const std::string k = rows_kernel(offsets, rows);
    if (k == "trust:in") return true;
    // `trust` and `trust:lite` walk each row's own work wherever the rows are cut. `auto` picks
    // `gui` instead for a mesh-like graph, which it tells from the columns (not decoded yet):
    // only where the mean out-degree (above 8) rules that out.
    if (k != "trust:lite" && k != "trust") return false;
    return opts_.kernel != "auto" || (rows > 0 && offsets[rows] - offsets[0] > 8 * rows);
  }

  void count_rows_async(int s, const UnitLayout& L, std::uint64_t r0, std::uint64_t r1) override {
    select();
    cuda::UnitSlot& sl = slots_.at(s);
    if (!L.row_pieces || !L.streamed || r0 >= r1 || r1 > L.blocks[L.a].rows)
      throw Error(ErrorKind::Internal, "row pieces of a unit that is not streamed in them");
    NvtxRange r("count rows " + std::to_string(r0) + "-" + std::to_string(r1));
    if (!sl.rows_open) open_rows(sl, L);
    // after every piece sent so far (the rows' offsets and columns among them)
    TS_CUDA_CHECK(cudaEventRecord(sl.rows_sent, copy_));
    TS_CUDA_CHECK(cudaStreamWaitEvent(compute_, sl.rows_sent, 0));
    enqueue_rows(sl, L, r0, r1);
  }

  bool rows_busy(int s) override {
    select();
    const cuda::UnitSlot& sl = slots_.at(s);
    if (sl.rows_used == 0) return false;
    const cudaError_t e = cudaEventQuery(sl.row_events[2 * sl.rows_used - 1]);
    if (e == cudaErrorNotReady) return true;
    TS_CUDA_CHECK(e);
    return false;
  }

  // ---- a unit: upload, count, wait ----

  bool device_cache_fits(const UnitLayout& L) override {
    select();
    if (!cache_on_) return true;
    return cache_.fits(L);
  }

  void upload_async(int s, const UnitLayout& L) override {
    DriverCall call(driver_calls_);
    select();
    cuda::UnitSlot& sl = slots_[s];
    NvtxRange r("upload u" + std::to_string(L.unit));
    // The device slot is free once its previous kernel has finished (streamed: the pieces are
    // on the copy stream already, after that wait).
    if (!sl.upload_open) cuda::open_upload(sl, copy_);
    sl.upload_open = false;
    bool send[3] = {false, false, false};
    if (cache_on_) {
      cache_.place(L, s, sl, send, copy_);
    } else {
      for (int bi = 0; bi < L.num_blocks; ++bi) {
        sl.block_off[bi] = sl.dev + L.blocks[bi].offsets_at;
        sl.block_cols[bi] = sl.dev + L.blocks[bi].cols_at;
      }
      if (!L.streamed && L.bytes > L.upload_from)
        TS_CUDA_CHECK(cudaMemcpyAsync(sl.dev + L.upload_from, sl.host + L.upload_from,
                                      L.bytes - L.upload_from, cudaMemcpyHostToDevice, copy_));
      for (const DirectUpload& d : L.direct) regs_.copy(sl.dev + d.at, d.host, d.bytes, copy_);
      for (int bi = 0; bi < L.num_blocks; ++bi) {
        send[bi] = L.uploads(bi);
        sl.cut[bi] = L.cuts(bi);
      }
    }
    cuda::upload_packed(sl, L, send, copy_, regs_);
    TS_CUDA_CHECK(cudaEventRecord(sl.up_end, copy_));
  }

  void count_async(int s, const UnitLayout& L) override {
    DriverCall call(driver_calls_);
    select();
    cuda::UnitSlot& sl = slots_[s];
    NvtxRange r("count u" + std::to_string(L.unit));
    sl.layout = L;
    if (L.row_pieces) return finish_rows(sl, L);
    // 1. After the unit's upload: its packed blocks expanded, its cut blocks cut from B, its
    // per-vertex arrays zeroed.
    TS_CUDA_CHECK(cudaStreamWaitEvent(compute_, sl.up_end, 0));
    TS_CUDA_CHECK(cudaEventRecord(sl.k_start, compute_));
    cuda::expand_packed_blocks(sl, compute_);
    cuda::cut_blocks(sl, L, compute_);
    cuda::DeviceCount job;
    std::uint64_t pv_total = 0;
    count_t* spaces[3] = {nullptr, nullptr, nullptr};
    if (L.per_vertex) {
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = sl.d_pv + pv_total;
        pv_total += L.space_rows[x];
      }
      if (pv_total)
        TS_CUDA_CHECK(cudaMemsetAsync(sl.d_pv, 0, pv_total * sizeof(count_t), compute_));
      job.per_vertex = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    // 2. The count through the one entry, with the layout's host images of the blocks for launch
    // planning and `auto` (a slice plans as its whole unit).
    auto view = [&](int bi) {
      const SlotBlock& b = L.blocks[bi];
      return CsrView{b.rows, reinterpret_cast<const eid_t*>(sl.block_off[bi]),
                     reinterpret_cast<const vid_t*>(sl.block_cols[bi]), b.col_space};
    };
    job.A = view(L.a);
    job.B = view(L.b);
    job.C = view(L.c);
    job.host_offsets_A = L.host_offsets[L.a];
    job.host.a_cols = L.host_cols[L.a];
    job.host.b_offsets = L.host_offsets[L.b];
    job.host.c_offsets = L.host_offsets[L.c];
    job.host.b_cols = L.host_cols[L.b];
    job.host.c_cols = L.host_cols[L.c];
    job.host.a_packed = L.host_packed[L.a];
    job.host.b_packed = L.host_packed[L.b];
    job.host.c_packed = L.host_packed[L.c];
    if (L.blocks[L.a].cut) {  // (no host image: `auto` samples it through B's)
      job.host.a_cut = true;
      job.host.a_cut_lo = L.blocks[L.a].cut_lo;
      job.host.a_cut_hi = L.blocks[L.a].cut_hi;
      job.host.a_edges = L.blocks[L.a].edges;
    }
    if (L.sliced) {
      job.sliced = true;
      job.host.v_begin = L.v_begin;
      job.host.v_end = L.v_end;
    }
    cuda::enqueue_device_count(job, opts_.kernel, sl.d_total, sl.h_total, compute_);
    // 3. The per-vertex counts back; the end of the unit's kernels.
    if (pv_total)
      TS_CUDA_CHECK(cudaMemcpyAsync(sl.h_pv, sl.d_pv, pv_total * sizeof(count_t),
                                    cudaMemcpyDeviceToHost, compute_));
    TS_CUDA_CHECK(cudaEventRecord(sl.k_end, compute_));
    sl.pending = true;
    sl.used = true;
    sl.pv_spaces_at[0] = 0;
    for (int x = 1; x < 3; ++x)
      sl.pv_spaces_at[x] =
          sl.pv_spaces_at[x - 1] + (x - 1 < L.num_spaces ? L.space_rows[x - 1] : 0);
  }

  SlotResult wait(int s) override {
    select();
    cuda::UnitSlot& sl = slots_[s];
    SlotResult r;
    if (!sl.pending) return r;
    {
      NvtxRange n("wait u" + std::to_string(sl.layout.unit));
      sl.pending = false;
      cuda::wait_event(sl.k_end);  // SIGINT/SIGTERM: Error(Interrupted); release() drains
    }
    if (cache_on_) {  // the unit's blocks may now be evicted for later units
      cache_.release(s);
      r.uploaded_bytes = static_cast<std::int64_t>(sl.uploaded);
      r.cache_hit_bytes = sl.cache_hits;
    }
    r.triangles = *sl.h_total;
    if (sl.layout.per_vertex)
      for (int x = 0; x < sl.layout.num_spaces; ++x) r.per_vertex[x] = sl.h_pv + sl.pv_spaces_at[x];
    // Streamed staging: the unit's pieces still in their buffers have finished (the kernel ran
    // after them on the copy stream's order).
    staging_.collect(s, clock_, sl.pieces);
    r.upload_pieces.swap(sl.pieces);
    sl.pieces.clear();
    for (std::size_t i = 0; i < sl.rows_used; ++i)
      r.kernel_pieces.push_back(UploadPiece{clock_.at(sl.row_events[2 * i]),
                                            clock_.at(sl.row_events[2 * i + 1]), sl.row_bytes[i]});
    sl.rows_used = 0;
    r.upload_start = clock_.at(sl.up_start);
    r.upload_end = clock_.at(sl.up_end);
    r.kernel_start = clock_.at(sl.k_start);
    r.kernel_end = clock_.at(sl.k_end);
    return r;
  }

  void release() override {
    TS_CUDA_CHECK_NOTHROW(cudaSetDevice(opts_.device));
    // 1. Nothing runs any more; a failure of what ran was reported (or is sticky).
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy_));
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(compute_));
    (void)cudaGetLastError();
    // 2. Stream-ordered memory back to its pools: the cached blocks, then the packed scratch of
    // an upload whose count never came; then the pool itself.
    cache_.free_blocks(copy_);
    slots_.free_packed_scratch(copy_);
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy_));
    cache_.close();
    cache_on_ = false;
    // 3. The slots and the staging ring.
    slots_.release();
    staging_.release();
    slot_bytes_ = 0;
  }

 private:
  // The kernel of the in-core unit (A = B = C; `auto` decides from its offsets alone, as
  // choose_kernel does without the columns), and so of each of its row pieces.
  std::string rows_kernel(const eid_t* offsets, std::uint64_t rows) const {
    if (opts_.kernel != "auto") return opts_.kernel;
    const CsrView whole{rows, offsets, nullptr, rows};  // (only compared: one view)
    return cuda::choose_kernel(whole, whole, whole, offsets);
  }

  // Opens the row pieces' count of the slot's unit: its kernel, the total and per-vertex arrays
  // zeroed (the compute stream runs after the slot's previous kernel).
  void open_rows(cuda::UnitSlot& sl, const UnitLayout& L) {
    if (!sl.rows_sent_made) {
      TS_CUDA_CHECK(cudaEventCreate(&sl.rows_sent));
      sl.rows_sent_made = true;
    }
    sl.rows_kernel = rows_kernel(L.host_offsets[L.a], L.blocks[L.a].rows);
    sl.rows_used = 0;
    TS_CUDA_CHECK(cudaEventRecord(sl.k_start, compute_));
    TS_CUDA_CHECK(cudaMemsetAsync(sl.d_total, 0, sizeof(unsigned long long), compute_));
    if (L.per_vertex && sl.d_pv)
      TS_CUDA_CHECK(cudaMemsetAsync(sl.d_pv, 0, L.blocks[L.a].rows * sizeof(count_t), compute_));
    sl.rows_open = true;
  }

  // Enqueues the count of rows [r0, r1) of the in-core unit (A = B = those rows, C = all of
  // them) on the compute stream, between two events of its own.
  void enqueue_rows(cuda::UnitSlot& sl, const UnitLayout& L, std::uint64_t r0, std::uint64_t r1) {
    const SlotBlock& b = L.blocks[L.a];
    const auto* off = reinterpret_cast<const eid_t*>(sl.dev + b.offsets_at);
    const auto* cols = reinterpret_cast<const vid_t*>(sl.dev + b.cols_at);
    const CsrView rows{r1 - r0, off + r0, cols, b.col_space};
    const CsrView all{b.rows, off, cols, b.col_space};
    cuda::HostViews host;
    host.rows_of_oriented_c = true;
    PerVertexOut pv;
    if (L.per_vertex && sl.d_pv) pv = PerVertexOut{sl.d_pv + r0, sl.d_pv, sl.d_pv};
    const eid_t* h_off = L.host_offsets[L.a];
    if (2 * sl.rows_used + 2 > sl.row_events.size()) {
      for (int k = 0; k < 2; ++k) {
        cudaEvent_t ev{};
        TS_CUDA_CHECK(cudaEventCreate(&ev));
        sl.row_events.push_back(ev);
      }
    }
    sl.row_bytes.resize(sl.rows_used + 1);
    sl.row_bytes[sl.rows_used] =
        (r1 - r0) * sizeof(eid_t) + (h_off ? (h_off[r1] - h_off[r0]) * sizeof(vid_t) : 0);
    const std::size_t e = 2 * sl.rows_used++;
    TS_CUDA_CHECK(cudaEventRecord(sl.row_events[e], compute_));
    cuda::enqueue_count(rows, rows, all, sl.rows_kernel, sl.d_total, pv, compute_,
                        h_off ? h_off + r0 : nullptr, host);
    TS_CUDA_CHECK(cudaEventRecord(sl.row_events[e + 1], compute_));
  }

  // Ends the row pieces' count of the slot's unit: after its whole upload, the rows left, the
  // total and per-vertex counts back to the host.
  void finish_rows(cuda::UnitSlot& sl, const UnitLayout& L) {
    if (!sl.rows_open) open_rows(sl, L);
    TS_CUDA_CHECK(cudaStreamWaitEvent(compute_, sl.up_end, 0));
    if (L.rows_left > 0) enqueue_rows(sl, L, 0, L.rows_left);
    TS_CUDA_CHECK(cudaMemcpyAsync(sl.h_total, sl.d_total, sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost, compute_));
    if (L.per_vertex && sl.d_pv)
      TS_CUDA_CHECK(cudaMemcpyAsync(sl.h_pv, sl.d_pv, L.blocks[L.a].rows * sizeof(count_t),
                                    cudaMemcpyDeviceToHost, compute_));
    TS_CUDA_CHECK(cudaEventRecord(sl.k_end, compute_));
    sl.rows_open = false;
    sl.pending = true;
    sl.used = true;
    sl.pv_spaces_at[0] = sl.pv_spaces_at[1] = sl.pv_spaces_at[2] = 0;
  }

  // The CUDA device is a property of the calling host thread: several workers (one backend per
  // device) drive their backends from threads of their own, so every call path selects it.
  void select() const { TS_CUDA_CHECK(cudaSetDevice(opts_.device)); }
  // Device slots (and per-vertex arrays) for `slots` units, with pinned host slots (host_slots)
  // or with `buffers` pinned staging buffers of piece_bytes (streamed staging).
  void allocate_slots(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, bool host_slots,
                      int buffers, std::uint64_t piece_bytes) {
    release();
    TS_CUDA_CHECK(cudaSetDevice(opts_.device));
    NvtxRange r("allocate slots");
    try {
      slot_bytes_ = slot_bytes;
      staging_.allocate(buffers, piece_bytes);
      // The device block cache replaces the device slots (full host slots only).
      cache_on_ = cache_capacity_ > 0 && host_slots;
      // Two slots, or with the cache one per unit in flight (the cache's owners), of which only
      // the first two get host slots (the pipeline builds into those two only).
      if (slots < 1 || slots > (cache_on_ ? 31 : 2))
        throw Error(ErrorKind::Internal, std::to_string(slots) + " slots requested");
      // The pool's memory first: a capacity the device cannot give fails before any unit, and
      // the pipeline re-plans.
      if (cache_on_) cache_.open(opts_.device, cache_capacity_, copy_, &regs_);
      slots_.allocate(slots, slot_bytes, pv_rows, host_slots ? 2 : 0, cache_on_,
                      pageable_host_slots_);
    } catch (...) {
      release();
      throw;
    }
    // The clock reference: an event on the compute stream at a known host time.
    clock_.reset(compute_);
  }

  CounterOptions opts_;
  std::string device_name_;
  cudaStream_t copy_{}, compute_{};
  cuda::DeviceClock clock_;
  cuda::UnitSlots slots_;
  cuda::StagingRing staging_;
  std::uint64_t slot_bytes_ = 0;
  // The device block cache: its capacity (use_device_cache), whether this allocation uses it.
  std::uint64_t cache_capacity_ = 0;
  bool cache_on_ = false;
  bool pageable_host_slots_ = false;  // set_host_slots_pinned(false): a fallback only
  // what the process's backends registered: direct copies split where they cross registrations
  cuda::HostRegistrations& regs_ = cuda::host_registrations();
  std::atomic<int> driver_calls_{0};  // uploads and launches under way (register_host waits)
  cuda::DeviceCacheMemory cache_;
};

}  // namespace

std::unique_ptr<StreamingBackend> make_cuda_streaming_backend(const CounterOptions& options) {
  return std::make_unique<CudaStreamingBackend>(options);
}

}  // namespace tristream
