// cuda/device_block_cache.cu — the device memory of the device block cache
// (device_block_cache.hpp).
#include "check.hpp"
#include "device_block_cache.hpp"

namespace tristream::cuda {

void DeviceCacheMemory::open(int device, std::uint64_t capacity, cudaStream_t copy,
                             const HostRegistrations* regs) {
  regs_ = regs;
  // 1. The pool; evicted blocks' memory stays in it for the next.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  TS_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  pool_made_ = true;
  std::uint64_t keep = ~std::uint64_t{0};
  TS_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  // 2. Its memory mapped now, once: growing it under the first uploads held them up (Kronecker 25
  // at a quarter: the first unit's 20 MB took 14 ms).
  void* warm = nullptr;
  TS_CUDA_CHECK_ALLOC(cudaMallocFromPoolAsync(&warm, capacity, pool_, copy), capacity);
  TS_CUDA_CHECK(cudaFreeAsync(warm, copy));
  TS_CUDA_CHECK(cudaStreamSynchronize(copy));
  policy_ = DeviceBlockCache(capacity);
}

bool DeviceCacheMemory::fits(const UnitLayout& L) {
  DeviceBlockCache::Request req[3];
  device_cache_requests(L, req);
  return policy_.fits(req, L.num_blocks);
}

void DeviceCacheMemory::place(const UnitLayout& L, int owner, UnitSlot& sl, bool* send,
                              cudaStream_t copy) {
  if (sl.pending)
    throw Error(ErrorKind::Internal, "a slot reused before its previous count was collected");
  // 1. Admit the blocks; the evicted ones' memory goes back to the pool.
  DeviceBlockCache::Request req[3];
  device_cache_requests(L, req);
  bool hit[3] = {false, false, false};
  for (const std::uint64_t victim : policy_.admit(req, L.num_blocks, owner, hit)) {
    TS_CUDA_CHECK(cudaFreeAsync(mem_.at(victim), copy));
    mem_.erase(victim);
  }
  // 2. Each block: in place when it was there, else pool memory and its copies.
  sl.uploaded = sl.cache_hits = 0;
  for (int bi = 0; bi < L.num_blocks; ++bi) {
    const SlotBlock& b = L.blocks[bi];
    (hit[bi] ? sl.cache_hits : sl.uploaded) += b.image_bytes();
    if (!hit[bi]) {
      void* d = nullptr;
      TS_CUDA_CHECK_ALLOC(cudaMallocFromPoolAsync(&d, req[bi].bytes, pool_, copy), req[bi].bytes);
      mem_[b.cache_key] = static_cast<unsigned char*>(d);
    }
    unsigned char* base = mem_.at(b.cache_key);
    sl.block_off[bi] = base;
    sl.block_cols[bi] = base + (b.cols_at - b.offsets_at);
    sl.cut[bi] = !hit[bi] && L.cuts(bi);  // (cut from B by the count, never uploaded)
    if (hit[bi] || sl.cut[bi]) continue;
    send[bi] = true;
    if (!b.packed) {
      if (!L.host_offsets[bi]) throw Error(ErrorKind::Internal, "a block without its offsets");
      regs_->copy(base, L.host_offsets[bi], dense_offsets_bytes(b.rows), copy);
    }
    if (b.edges) {
      if (!L.host_cols[bi]) throw Error(ErrorKind::Internal, "a block without its columns");
      regs_->copy(sl.block_cols[bi], L.host_cols[bi], b.edges * sizeof(vid_t), copy);
    }
  }
}

void DeviceCacheMemory::free_blocks(cudaStream_t copy) noexcept {
  for (auto& kv : mem_) TS_CUDA_CHECK_NOTHROW(cudaFreeAsync(kv.second, copy));
  mem_.clear();
  policy_.clear();
}

void DeviceCacheMemory::close() noexcept {
  if (pool_made_) TS_CUDA_CHECK_NOTHROW(cudaMemPoolDestroy(pool_));
  pool_made_ = false;
}

}  // namespace tristream::cuda
