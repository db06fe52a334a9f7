// cuda/stream_slots.cu — the streaming backend's slots, their packed blocks and the device clock
// (stream_slots.hpp).
#include <chrono>
#include <cstdlib>
#include <string>

#include "check.hpp"
#include "launch.hpp"
#include "pinned_host.hpp"
#include "stream_slots.hpp"
#include "tristream/error.hpp"
#include "tristream/host_memory.hpp"

namespace tristream::cuda {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

// ---- the clock -----------------------------------------------------------------------------

void DeviceClock::create() {
  TS_CUDA_CHECK(cudaEventCreate(&ref_));
  made_ = true;
}

void DeviceClock::destroy() noexcept {
  if (made_) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(ref_));
  made_ = false;
}

void DeviceClock::reset(cudaStream_t stream) {
  TS_CUDA_CHECK(cudaEventRecord(ref_, stream));
  TS_CUDA_CHECK(cudaEventSynchronize(ref_));
  ref_host_ = now_s() - origin_;
}

double DeviceClock::at(cudaEvent_t ev) const {
  float ms = 0;
  if (!cuda_ok(cudaEventElapsedTime(&ms, ref_, ev))) return -1.0;
  return ref_host_ + ms / 1000.0;
}

// ---- the slots -----------------------------------------------------------------------------

void UnitSlots::allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int host_slots,
                         bool cache_holds_blocks, bool pageable) {
  // 1. The events of every slot.
  slot_.resize(static_cast<std::size_t>(slots));
  for (UnitSlot& sl : slot_) {
    TS_CUDA_CHECK(cudaEventCreate(&sl.up_start));
    TS_CUDA_CHECK(cudaEventCreate(&sl.up_end));
    TS_CUDA_CHECK(cudaEventCreate(&sl.k_start));
    TS_CUDA_CHECK(cudaEventCreate(&sl.k_end));
    sl.events = true;
  }
  // 2. Their memory: host slot, device slot, count words, per-vertex arrays.
  for (int s = 0; s < slots; ++s) {
    UnitSlot& sl = slot_[static_cast<std::size_t>(s)];
    const std::uint64_t b = slot_bytes ? slot_bytes : 256;
    if (s < host_slots && !pageable) {
      sl.host = pin_host(b, "a staging slot");
      sl.host_pinned = true;
    } else if (s < host_slots) {  // (reserved, not touched: its pages come when it is used)
      std::uint64_t size = 0;
      sl.host = alloc_pinnable(b, &size);
      if (!sl.host)
        throw Error(ErrorKind::Internal,
                    "cannot allocate " + std::to_string(b) + " bytes of host memory for a slot");
    }
    if (!cache_holds_blocks)
      TS_CUDA_CHECK_ALLOC(cudaMalloc(reinterpret_cast<void**>(&sl.dev), b), b);
    TS_CUDA_CHECK_ALLOC(
        cudaMalloc(reinterpret_cast<void**>(&sl.d_total), sizeof(unsigned long long)),
        sizeof(unsigned long long));
    TS_CUDA_CHECK_ALLOC(
        cudaMallocHost(reinterpret_cast<void**>(&sl.h_total), sizeof(unsigned long long)),
        sizeof(unsigned long long));
    if (pv_rows) {
      TS_CUDA_CHECK_ALLOC(cudaMalloc(reinterpret_cast<void**>(&sl.d_pv), pv_rows * sizeof(count_t)),
                          pv_rows * sizeof(count_t));
      sl.h_pv =
          reinterpret_cast<count_t*>(pin_host(pv_rows * sizeof(count_t), "per-vertex counts"));
    }
    sl.pending = false;
  }
}

void UnitSlots::free_packed_scratch(cudaStream_t copy) noexcept {
  for (UnitSlot& sl : slot_) {
    if (sl.expand_scratch) TS_CUDA_CHECK_NOTHROW(cudaFreeAsync(sl.expand_scratch, copy));
    sl.expand_scratch = nullptr;
    sl.expand.clear();
  }
}

void UnitSlots::release() noexcept {
  for (UnitSlot& sl : slot_) {
    if (sl.host_pinned)
      unpin_host(sl.host);
    else
      std::free(sl.host);
    sl.host_pinned = false;
    if (sl.dev) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.dev));
    if (sl.d_total) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.d_total));
    if (sl.h_total) TS_CUDA_CHECK_NOTHROW(cudaFreeHost(sl.h_total));
    if (sl.d_pv) TS_CUDA_CHECK_NOTHROW(cudaFree(sl.d_pv));
    unpin_host(reinterpret_cast<unsigned char*>(sl.h_pv));
    sl.host = sl.dev = nullptr;
    sl.d_total = sl.h_total = nullptr;
    sl.d_pv = sl.h_pv = nullptr;
    sl.pending = sl.used = sl.upload_open = false;
    sl.pieces.clear();
    for (cudaEvent_t ev : sl.row_events) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(ev));
    sl.row_events.clear();
    if (sl.rows_sent_made) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.rows_sent));
    sl.rows_sent_made = sl.rows_open = false;
    sl.rows_used = 0;
    if (sl.events) {
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.up_start));
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.up_end));
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.k_start));
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(sl.k_end));
      sl.events = false;
    }
  }
  slot_.clear();
}

void open_upload(UnitSlot& sl, cudaStream_t copy) {
  if (sl.used) TS_CUDA_CHECK(cudaStreamWaitEvent(copy, sl.k_end, 0));
  TS_CUDA_CHECK(cudaEventRecord(sl.up_start, copy));
  sl.upload_open = true;
}

// ---- packed blocks -------------------------------------------------------------------------
// The expansion is work on the multiprocessors: on the copy stream it waited for the other units'
// kernels to leave room (they fill the device), which held the copy stream's later uploads behind
// it. So the copy stream only copies the packed images, and the count expands them.

namespace {

// A packed block's host image (one packed_image: ids, then offsets), checked.
const unsigned char* packed_image_of(const UnitLayout& L, int bi) {
  const SlotBlock& b = L.blocks[bi];
  const PackedRows& hp = L.host_packed[bi];
  const auto* image = reinterpret_cast<const unsigned char*>(hp.ids);
  if (!hp.valid() || hp.count != b.packed_rows || hp.offsets != packed_offsets_at(image, hp.count))
    throw Error(ErrorKind::Internal, "a packed block without its host image");
  return image;
}

}  // namespace

void upload_packed(UnitSlot& sl, const UnitLayout& L, const bool* send, cudaStream_t copy,
                   const HostRegistrations& regs) {
  std::uint64_t scratch = 0;
  for (int bi = 0; bi < L.num_blocks; ++bi)
    if (L.blocks[bi].packed && send[bi]) scratch += packed_bytes(L.blocks[bi].packed_rows);
  if (scratch == 0) return;
  if (sl.expand_scratch)
    throw Error(ErrorKind::Internal, "a slot's packed blocks uploaded before its last count");
  void* d = nullptr;
  TS_CUDA_CHECK_ALLOC(cudaMallocAsync(&d, scratch, copy), scratch);
  sl.expand_scratch = d;
  auto* base = static_cast<unsigned char*>(d);
  std::uint64_t at = 0;
  for (int bi = 0; bi < L.num_blocks; ++bi) {
    const SlotBlock& b = L.blocks[bi];
    if (!b.packed || !send[bi]) continue;
    const unsigned char* image = packed_image_of(L, bi);
    regs.copy(base + at, image, packed_bytes(b.packed_rows), copy);
    sl.expand.push_back({base + at, b.rows, b.packed_rows, sl.block_off[bi]});
    at += packed_bytes(b.packed_rows);
  }
}

void expand_packed_blocks(UnitSlot& sl, cudaStream_t compute) {
  if (!sl.expand_scratch) return;
  for (const PackedExpansion& x : sl.expand)
    enqueue_expand_packed(x.rows, x.count, packed_ids_at(x.image),
                          packed_offsets_at(x.image, x.count), reinterpret_cast<eid_t*>(x.out),
                          compute);
  sl.expand.clear();
  void* scratch = sl.expand_scratch;
  sl.expand_scratch = nullptr;
  TS_CUDA_CHECK(cudaFreeAsync(scratch, compute));
}

void cut_blocks(UnitSlot& sl, const UnitLayout& L, cudaStream_t compute) {
  for (int bi = 0; bi < L.num_blocks; ++bi) {
    if (!sl.cut[bi]) continue;
    sl.cut[bi] = false;
    const SlotBlock& b = L.blocks[bi];
    const SlotBlock& B = L.blocks[L.b];
    if (B.rows != b.rows) throw Error(ErrorKind::Internal, "a cut block's rows differ from B's");
    enqueue_cut_rows(b.rows, reinterpret_cast<const eid_t*>(sl.block_off[L.b]),
                     reinterpret_cast<const vid_t*>(sl.block_cols[L.b]), b.cut_lo, b.cut_hi,
                     reinterpret_cast<eid_t*>(sl.block_off[bi]),
                     reinterpret_cast<vid_t*>(sl.block_cols[bi]), b.edges, compute);
  }
}

}  // namespace tristream::cuda
