// streaming_backend.cu — the CUDA StreamingBackend of the pipeline (tristream/pipeline.hpp):
// two pinned host slots and two device slots, uploads on a copy stream, counts on a compute
// stream, events ordering the slots (the upload into a slot waits for that slot's previous
// kernel; a kernel waits for its upload), CUDA-event timing, NVTX ranges when nvtx3 exists.
// Device out-of-memory (allocation or kernel scratch) throws DeviceOutOfMemory so the pipeline
// re-plans with a smaller budget.
//
// The device block cache (use_device_cache, device_cache.hpp): instead of two device slots, one
// stream-ordered memory pool of the two slots' bytes holds blocks between units; a unit's blocks
// already there are used in place, the others are allocated from the pool (evicting blocks no
// unit in flight uses, furthest next use first) and copied from the layout's host images. The
// slots are then the units in flight (Plan::in_flight, up to 31, host slots for two only), so the
// copy stream runs several units ahead of the compute stream.
//
// Streamed staging (allocate_streamed): device slots without pinned host slots, plus a ring of
// pinned staging buffers; every piece is a cudaMemcpyAsync on the copy stream between two events
// of its buffer (the second tells the host when it may overwrite the buffer, and both time the
// piece); the first piece of a unit waits for the slot's previous kernel like upload_async.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "check.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"
#include "tristream/host_memory.hpp"
#include "tristream/pipeline.hpp"

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

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr std::uint64_t kPage = 4096;

// Pinned host memory for `what`, or Error(Internal) naming the size (not a device OOM: the
// host budget, not the device budget, is what to lower). Memory from alloc_pinnable is first
// touched by several threads at once and then registered (cudaHostRegister): about 10 GB/s on the
// H100 machine against 1.7 GB/s for cudaMallocHost, which zeroes and maps the pages on one thread
// (1.4 s less for the 2.2 GB in-core slot of Kronecker 25). Freed with unpin().
unsigned char* pin(std::uint64_t bytes, const char* what) {
  std::uint64_t size = 0;
  unsigned char* const p = alloc_pinnable(bytes, &size);
  if (!p)
    throw Error(ErrorKind::Internal,
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory for " + what);
  const std::uint64_t pieces = std::min<std::uint64_t>(
      std::max(1u, std::thread::hardware_concurrency()), size / (64ull << 20) + 1);
  if (pieces <= 1) {
    std::memset(p, 0, size);
  } else {
    std::vector<std::thread> touch;
    for (std::uint64_t x = 0; x < pieces; ++x)
      touch.emplace_back([=] {
        const std::uint64_t lo = size * x / pieces / kPage * kPage;
        const std::uint64_t hi = x + 1 == pieces ? size : size * (x + 1) / pieces / kPage * kPage;
        std::memset(p + lo, 0, hi - lo);
      });
    for (auto& t : touch) t.join();
  }
  const cudaError_t e = cudaHostRegister(p, size, cudaHostRegisterPortable);
  if (!cuda::cuda_ok(e)) {
    std::free(p);
    throw Error(ErrorKind::Internal,
                "cannot pin " + std::to_string(bytes) + " bytes of host memory for " + what + ": " +
                    cuda::cuda_failure(e, "cudaHostRegister", __FILE__, __LINE__));
  }
  return p;
}

void unpin(unsigned char* p) {
  if (!p) return;
  TS_CUDA_CHECK_NOTHROW(cudaHostUnregister(p));
  std::free(p);
}

class CudaStreamingBackend final : public StreamingBackend {
  struct Slot;
  struct Staging;

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
    TS_CUDA_CHECK(cudaEventCreate(&ref_));
  }
  ~CudaStreamingBackend() override {
    release();
    TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(ref_));
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
  void set_clock_origin(double t) override { origin_ = t; }

  bool register_host(void* p, std::uint64_t bytes) override {
    return cuda::cuda_ok(cudaSetDevice(opts_.device)) &&
           cuda::cuda_ok(cudaHostRegister(p, bytes, cudaHostRegisterPortable));
  }
  void unregister_host(void* p) noexcept override { TS_CUDA_CHECK_NOTHROW(cudaHostUnregister(p)); }

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

  unsigned char* staging_buffer(int b) override { return staging_.at(b).host; }

  void wait_staging(int b) override {
    Staging& st = staging_.at(b);
    if (!st.pending) return;
    st.pending = false;
    TS_CUDA_CHECK(cudaEventSynchronize(st.end));
    harvest(st);
  }

  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    Slot& sl = slot_[s];
    Staging& st = staging_.at(b);
    if (at + bytes > slot_bytes_ || bytes > piece_bytes_)
      throw Error(ErrorKind::Internal, "a staging piece lies outside its slot");
    if (st.pending) wait_staging(b);  // the host broke the contract; keep the timing right
    if (!sl.upload_open) open_upload(sl);
    TS_CUDA_CHECK(cudaEventRecord(st.start, copy_));
    TS_CUDA_CHECK(cudaMemcpyAsync(sl.dev + at, st.host, bytes, cudaMemcpyHostToDevice, copy_));
    TS_CUDA_CHECK(cudaEventRecord(st.end, copy_));
    st.pending = true;
    st.slot = s;
    st.bytes = bytes;
  }

 private:
  // Device slots (and per-vertex arrays) for `slots` units, with pinned host slots (host_slots)
  // or with `buffers` pinned staging buffers of piece_bytes (streamed staging).
  void allocate_slots(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, bool host_slots,
                      int buffers, std::uint64_t piece_bytes) {
    release();
    TS_CUDA_CHECK(cudaSetDevice(opts_.device));
    NvtxRange r("allocate slots");
    try {
      slot_bytes_ = slot_bytes;
      piece_bytes_ = piece_bytes;
      for (int b = 0; b < buffers; ++b) {
        staging_.emplace_back();
        Staging& st = staging_.back();
        TS_CUDA_CHECK(cudaEventCreate(&st.start));
        TS_CUDA_CHECK(cudaEventCreate(&st.end));
        st.events = true;
        st.host = pin(piece_bytes, "a staging buffer");
      }
      // The device block cache replaces the device slots (full host slots only).
      cache_on_ = cache_capacity_ > 0 && host_slots;
      // Two slots, or with the cache one per unit in flight (the cache's owners), of which only
      // the first two get host slots (the pipeline builds into those two only).
      if (slots < 1 || slots > (cache_on_ ? 31 : 2))
        throw Error(ErrorKind::Internal, std::to_string(slots) + " slots requested");
      slot_.resize(static_cast<std::size_t>(slots));
      for (Slot& sl : slot_) {
        TS_CUDA_CHECK(cudaEventCreate(&sl.up_start));
        TS_CUDA_CHECK(cudaEventCreate(&sl.up_end));
        TS_CUDA_CHECK(cudaEventCreate(&sl.k_start));
        TS_CUDA_CHECK(cudaEventCreate(&sl.k_end));
        sl.events = true;
      }
      if (cache_on_) {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = opts_.device;
        TS_CUDA_CHECK(cudaMemPoolCreate(&cache_pool_, &props));
        cache_pool_made_ = true;
        std::uint64_t keep = ~std::uint64_t{0};  // evicted blocks' memory stays for the next
        TS_CUDA_CHECK(cudaMemPoolSetAttribute(cache_pool_, cudaMemPoolAttrReleaseThreshold, &keep));
        // The pool's memory mapped now, once: growing it under the first uploads held them up
        // (Kronecker 25 at a quarter: the first unit's 20 MB took 14 ms). A capacity the device
        // cannot give fails here, before any unit, and the pipeline re-plans.
        void* warm = nullptr;
        TS_CUDA_CHECK_ALLOC(cudaMallocFromPoolAsync(&warm, cache_capacity_, cache_pool_, copy_),
                            cache_capacity_);
        TS_CUDA_CHECK(cudaFreeAsync(warm, copy_));
        TS_CUDA_CHECK(cudaStreamSynchronize(copy_));
        cache_ = DeviceBlockCache(cache_capacity_);
      }
      for (int s = 0; s < slots; ++s) {
        Slot& sl = slot_[s];
        const std::uint64_t b = slot_bytes ? slot_bytes : 256;
        if (host_slots && s < 2) sl.host = pin(b, "a staging slot");
        if (!cache_on_) TS_CUDA_CHECK_ALLOC(cudaMalloc(reinterpret_cast<void**>(&sl.dev), b), b);
        TS_CUDA_CHECK_ALLOC(
            cudaMalloc(reinterpret_cast<void**>(&sl.d_total), sizeof(unsigned long long)), 8);
        TS_CUDA_CHECK_ALLOC(
            cudaMallocHost(reinterpret_cast<void**>(&sl.h_total), sizeof(unsigned long long)), 8);
        if (pv_rows) {
          TS_CUDA_CHECK_ALLOC(
              cudaMalloc(reinterpret_cast<void**>(&sl.d_pv), pv_rows * sizeof(count_t)),
              pv_rows * sizeof(count_t));
          sl.h_pv = reinterpret_cast<count_t*>(pin(pv_rows * sizeof(count_t), "per-vertex counts"));
        }
        sl.pending = false;
      }
    } catch (...) {
      release();
      throw;
    }
    // The clock reference: an event on the compute stream at a known host time.
    TS_CUDA_CHECK(cudaEventRecord(ref_, compute_));
    TS_CUDA_CHECK(cudaEventSynchronize(ref_));
    ref_host_ = now_s() - origin_;
  }

  // The first copy of a unit into a slot: after the slot's previous kernel, timed from here.
  void open_upload(Slot& sl) {
    if (sl.used) TS_CUDA_CHECK(cudaStreamWaitEvent(copy_, sl.k_end, 0));
    TS_CUDA_CHECK(cudaEventRecord(sl.up_start, copy_));
    sl.upload_open = true;
  }

  // Pipeline-clock seconds of a finished event (< 0 when unknown).
  double at(cudaEvent_t ev) {
    float ms = 0;
    if (!cuda::cuda_ok(cudaEventElapsedTime(&ms, ref_, ev))) return -1.0;
    return ref_host_ + ms / 1000.0;
  }

  // Records the finished piece of a staging buffer with its slot's unit.
  void harvest(const Staging& st) {
    UploadPiece p;
    p.start = at(st.start);
    p.end = at(st.end);
    p.bytes = st.bytes;
    slot_[st.slot].pieces.push_back(p);
  }

 public:
  unsigned char* host_slot(int s) override { return slot_.at(static_cast<std::size_t>(s)).host; }

  bool device_cache_fits(const UnitLayout& L) override {
    if (!cache_on_) return true;
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    return cache_.fits(req, L.num_blocks);
  }

  void upload_async(int s, const UnitLayout& L) override {
    Slot& sl = slot_[s];
    NvtxRange r("upload u" + std::to_string(L.unit));
    // The device slot is free once its previous kernel has finished (streamed: the pieces are
    // on the copy stream already, after that wait).
    if (!sl.upload_open) open_upload(sl);
    sl.upload_open = false;
    if (cache_on_) {
      upload_cached(s, sl, L);
      TS_CUDA_CHECK(cudaEventRecord(sl.up_end, copy_));
      return;
    }
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      sl.block_off[bi] = sl.dev + L.blocks[bi].offsets_at;
      sl.block_cols[bi] = sl.dev + L.blocks[bi].cols_at;
    }
    if (!L.streamed && L.bytes > L.upload_from)
      TS_CUDA_CHECK(cudaMemcpyAsync(sl.dev + L.upload_from, sl.host + L.upload_from,
                                    L.bytes - L.upload_from, cudaMemcpyHostToDevice, copy_));
    for (const DirectUpload& d : L.direct)
      TS_CUDA_CHECK(cudaMemcpyAsync(sl.dev + d.at, d.host, d.bytes, cudaMemcpyHostToDevice, copy_));
    bool send[3] = {false, false, false};
    for (int bi = 0; bi < L.num_blocks; ++bi) send[bi] = L.uploads(bi);
    upload_packed(sl, L, send);
    TS_CUDA_CHECK(cudaEventRecord(sl.up_end, copy_));
  }

  // The unit's blocks through the device block cache (DeviceBlockCache::admit): those on the
  // device already are used in place; the evicted blocks' memory goes back to the pool (no unit
  // in flight reads them: a block is evictable only once every unit holding it was collected);
  // the others get pool memory and are copied from their host images, packed ones by
  // upload_packed.
  void upload_cached(int s, Slot& sl, const UnitLayout& L) {
    if (sl.pending)
      throw Error(ErrorKind::Internal, "a slot reused before its previous count was collected");
    DeviceBlockCache::Request req[3];
    device_cache_requests(L, req);
    bool hit[3] = {false, false, false};
    for (const std::uint64_t victim : cache_.admit(req, L.num_blocks, s, hit)) {
      TS_CUDA_CHECK(cudaFreeAsync(cache_mem_.at(victim), copy_));
      cache_mem_.erase(victim);
    }
    sl.uploaded = sl.cache_hits = 0;
    bool send[3] = {false, false, false};
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      (hit[bi] ? sl.cache_hits : sl.uploaded) += b.image_bytes();
      if (!hit[bi]) {
        void* d = nullptr;
        TS_CUDA_CHECK_ALLOC(cudaMallocFromPoolAsync(&d, req[bi].bytes, cache_pool_, copy_),
                            req[bi].bytes);
        cache_mem_[b.cache_key] = static_cast<unsigned char*>(d);
      }
      unsigned char* base = cache_mem_.at(b.cache_key);
      sl.block_off[bi] = base;
      sl.block_cols[bi] = base + (b.cols_at - b.offsets_at);
      if (hit[bi]) continue;
      send[bi] = true;
      if (!b.packed) {
        if (!L.host_offsets[bi]) throw Error(ErrorKind::Internal, "a block without its offsets");
        TS_CUDA_CHECK(cudaMemcpyAsync(base, L.host_offsets[bi], dense_offsets_bytes(b.rows),
                                      cudaMemcpyHostToDevice, copy_));
      }
      if (b.edges) {
        if (!L.host_cols[bi]) throw Error(ErrorKind::Internal, "a block without its columns");
        TS_CUDA_CHECK(cudaMemcpyAsync(sl.block_cols[bi], L.host_cols[bi], b.edges * sizeof(vid_t),
                                      cudaMemcpyHostToDevice, copy_));
      }
    }
    upload_packed(sl, L, send);
  }

  // A packed block's host image (one packed_image: ids, then offsets), checked.
  static const unsigned char* packed_image_of(const UnitLayout& L, int bi) {
    const SlotBlock& b = L.blocks[bi];
    const PackedRows& hp = L.host_packed[bi];
    const auto* image = reinterpret_cast<const unsigned char*>(hp.ids);
    if (!hp.valid() || hp.count != b.packed_rows ||
        hp.offsets != packed_offsets_at(image, hp.count))
      throw Error(ErrorKind::Internal, "a packed block without its host image");
    return image;
  }

  // Packed blocks among those sent (send[bi]): their packed images go to stream-ordered scratch
  // on the copy stream; the unit's count (count_async) first expands them into the blocks' dense
  // offsets (sl.block_off) on the compute stream and frees the scratch there. The expansion is
  // work on the multiprocessors: on the copy stream it waited for the other units' kernels to
  // leave room (they fill the device), which held the copy stream's later uploads behind it.
  void upload_packed(Slot& sl, const UnitLayout& L, const bool* send) {
    std::uint64_t scratch = 0;
    for (int bi = 0; bi < L.num_blocks; ++bi)
      if (L.blocks[bi].packed && send[bi]) scratch += packed_bytes(L.blocks[bi].packed_rows);
    if (scratch == 0) return;
    if (sl.expand_scratch)
      throw Error(ErrorKind::Internal, "a slot's packed blocks uploaded before its last count");
    void* d = nullptr;
    TS_CUDA_CHECK_ALLOC(cudaMallocAsync(&d, scratch, copy_), scratch);
    sl.expand_scratch = d;
    auto* base = static_cast<unsigned char*>(d);
    std::uint64_t at = 0;
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (!b.packed || !send[bi]) continue;
      const unsigned char* image = packed_image_of(L, bi);
      TS_CUDA_CHECK(cudaMemcpyAsync(base + at, image, packed_bytes(b.packed_rows),
                                    cudaMemcpyHostToDevice, copy_));
      sl.expand.push_back({base + at, b.rows, b.packed_rows, sl.block_off[bi]});
      at += packed_bytes(b.packed_rows);
    }
  }

  // The unit's packed blocks expanded on the compute stream (after its upload), and their
  // scratch freed there.
  void expand_packed_blocks(Slot& sl) {
    if (!sl.expand_scratch) return;
    for (const Expansion& x : sl.expand)
      cuda::enqueue_expand_packed(x.rows, x.count, packed_ids_at(x.image),
                                  packed_offsets_at(x.image, x.count),
                                  reinterpret_cast<eid_t*>(x.out), compute_);
    sl.expand.clear();
    void* scratch = sl.expand_scratch;
    sl.expand_scratch = nullptr;
    TS_CUDA_CHECK(cudaFreeAsync(scratch, compute_));
  }

  void count_async(int s, const UnitLayout& L) override {
    Slot& sl = slot_[s];
    NvtxRange r("count u" + std::to_string(L.unit));
    sl.layout = L;
    TS_CUDA_CHECK(cudaStreamWaitEvent(compute_, sl.up_end, 0));
    TS_CUDA_CHECK(cudaEventRecord(sl.k_start, compute_));
    TS_CUDA_CHECK(cudaMemsetAsync(sl.d_total, 0, sizeof(unsigned long long), compute_));
    expand_packed_blocks(sl);
    auto view = [&](int bi) {
      const SlotBlock& b = L.blocks[bi];
      return CsrView{b.rows, reinterpret_cast<const eid_t*>(sl.block_off[bi]),
                     reinterpret_cast<const vid_t*>(sl.block_cols[bi]), b.col_space};
    };
    PerVertexOut pv;
    std::uint64_t pv_total = 0;
    count_t* spaces[3] = {nullptr, nullptr, nullptr};
    if (L.per_vertex) {
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = sl.d_pv + pv_total;
        pv_total += L.space_rows[x];
      }
      if (pv_total)
        TS_CUDA_CHECK(cudaMemsetAsync(sl.d_pv, 0, pv_total * sizeof(count_t), compute_));
      pv = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    const CsrView A = view(L.a), B = view(L.b);
    CsrView C = view(L.c);
    // The layout's host images of the blocks, for launch planning and `auto` (a slice plans as
    // its whole unit).
    const eid_t* host_off_a = L.host_offsets[L.a];
    cuda::HostViews hv;
    hv.a_cols = L.host_cols[L.a];
    hv.b_offsets = L.host_offsets[L.b];
    hv.c_offsets = L.host_offsets[L.c];
    hv.a_packed = L.host_packed[L.a];
    hv.b_packed = L.host_packed[L.b];
    hv.c_packed = L.host_packed[L.c];
    if (L.sliced) {
      hv.v_begin = L.v_begin;
      hv.v_end = L.v_end;
    }
    {
      // A slice: C's offsets with the rows outside it empty, in scratch freed in stream order
      // after the count's kernels.
      cuda::AsyncBuffer<eid_t> window(L.sliced ? C.rows + 1 : 0, compute_);
      if (L.sliced) {
        cuda::enqueue_window_offsets(C.offsets, C.rows, L.v_begin, L.v_end, window.get(), compute_);
        C.offsets = window.get();
      }
      cuda::enqueue_count(A, B, C, opts_.kernel, sl.d_total, pv, compute_, host_off_a, hv);
    }
    TS_CUDA_CHECK(cudaMemcpyAsync(sl.h_total, sl.d_total, sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost, compute_));
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

  bool poll(int s) override {
    Slot& sl = slot_[s];
    if (!sl.pending) return true;
    const cudaError_t e = cudaEventQuery(sl.k_end);
    if (e == cudaErrorNotReady) return false;
    if (e != cudaSuccess) cuda::throw_cuda(e, "cudaEventQuery(sl.k_end)", __FILE__, __LINE__);
    return true;
  }

  SlotResult wait(int s) override {
    Slot& sl = slot_[s];
    SlotResult r;
    if (!sl.pending) return r;
    {
      NvtxRange n("wait u" + std::to_string(sl.layout.unit));
      sl.pending = false;
      TS_CUDA_CHECK(cudaEventSynchronize(sl.k_end));
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
    for (auto& st : staging_)
      if (st.pending && st.slot == s) {
        st.pending = false;
        harvest(st);
      }
    r.upload_pieces.swap(sl.pieces);
    sl.pieces.clear();
    r.upload_start = at(sl.up_start);
    r.upload_end = at(sl.up_end);
    r.kernel_start = at(sl.k_start);
    r.kernel_end = at(sl.k_end);
    return r;
  }

  void release() override {
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy_));
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(compute_));
    (void)cudaGetLastError();
    for (auto& kv : cache_mem_) TS_CUDA_CHECK_NOTHROW(cudaFreeAsync(kv.second, copy_));
    for (auto& sl : slot_) {  // packed scratch of an upload whose count never came
      if (sl.expand_scratch) TS_CUDA_CHECK_NOTHROW(cudaFreeAsync(sl.expand_scratch, copy_));
      sl.expand_scratch = nullptr;
      sl.expand.clear();
    }
    cache_mem_.clear();
    cache_.clear();
    TS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy_));
    if (cache_pool_made_) TS_CUDA_CHECK_NOTHROW(cudaMemPoolDestroy(cache_pool_));
    cache_pool_made_ = cache_on_ = false;
    for (auto& sl : slot_) {
      unpin(sl.host);
      if (sl.dev) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.dev));
      if (sl.d_total) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.d_total));
      if (sl.h_total) TS_CUDA_CHECK_NOTHROW(cudaFreeHost(sl.h_total));
      if (sl.d_pv) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.d_pv));
      unpin(reinterpret_cast<unsigned char*>(sl.h_pv));
      sl.host = sl.dev = nullptr;
      sl.d_total = sl.h_total = nullptr;
      sl.d_pv = sl.h_pv = nullptr;
      sl.pending = sl.used = sl.upload_open = false;
      sl.pieces.clear();
      if (sl.events) {
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.up_start));
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.up_end));
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.k_start));
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.k_end));
        sl.events = false;
      }
    }
    slot_.clear();
    for (auto& st : staging_) {
      unpin(st.host);
      if (st.events) {
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(st.start));
        TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(st.end));
      }
    }
    staging_.clear();
    slot_bytes_ = piece_bytes_ = 0;
  }

 private:
  struct Expansion {  // a packed image in scratch and the dense offsets it expands into
    const unsigned char* image = nullptr;
    std::uint64_t rows = 0, count = 0;
    unsigned char* out = nullptr;
  };
  struct Slot {
    unsigned char* host = nullptr;
    unsigned char* dev = nullptr;
    unsigned long long* d_total = nullptr;
    unsigned long long* h_total = nullptr;
    count_t* d_pv = nullptr;
    count_t* h_pv = nullptr;
    std::uint64_t pv_spaces_at[3] = {0, 0, 0};
    cudaEvent_t up_start{}, up_end{}, k_start{}, k_end{};
    UnitLayout layout;
    bool pending = false, used = false;
    bool events = false;              // the four events exist
    bool upload_open = false;         // a unit's pieces are being uploaded
    std::vector<UploadPiece> pieces;  // streamed staging: this unit's finished pieces
    // The unit's blocks on the device (in the slot, or in the device block cache).
    unsigned char* block_off[3] = {nullptr, nullptr, nullptr};
    unsigned char* block_cols[3] = {nullptr, nullptr, nullptr};
    std::uint64_t uploaded = 0, cache_hits = 0;  // device block cache: this unit's bytes
    // Packed blocks uploaded for the unit and expanded by its count (upload_packed).
    std::vector<Expansion> expand;
    void* expand_scratch = nullptr;
  };
  struct Staging {  // one pinned staging buffer of the streamed ring
    unsigned char* host = nullptr;
    cudaEvent_t start{}, end{};
    bool events = false;
    bool pending = false;  // a copy out of it may still run
    int slot = 0;
    std::uint64_t bytes = 0;
  };
  CounterOptions opts_;
  std::string device_name_;
  cudaStream_t copy_{}, compute_{};
  cudaEvent_t ref_{};
  double origin_ = 0, ref_host_ = 0;
  std::vector<Slot> slot_;
  std::vector<Staging> staging_;
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  // The device block cache: its capacity (use_device_cache), whether this allocation uses it,
  // the policy, each block's pool memory.
  std::uint64_t cache_capacity_ = 0;
  bool cache_on_ = false;
  DeviceBlockCache cache_;
  std::unordered_map<std::uint64_t, unsigned char*> cache_mem_;
  cudaMemPool_t cache_pool_{};
  bool cache_pool_made_ = false;
};

}  // namespace

std::unique_ptr<StreamingBackend> make_cuda_streaming_backend(const CounterOptions& options) {
  return std::make_unique<CudaStreamingBackend>(options);
}

}  // namespace tristream
