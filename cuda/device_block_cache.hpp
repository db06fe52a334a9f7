// cuda/device_block_cache.hpp — the device block cache of the CUDA streaming backend (cuda/
// internal): the device memory behind the policy of tristream/device_cache.hpp.
//
// Instead of two device slots, one stream-ordered memory pool of the two slots' bytes holds
// blocks between units: a unit's blocks already there are used in place, the others are
// allocated from the pool (evicting blocks no unit in flight uses, furthest next use first) and
// copied from the layout's host images. The slots are then the units in flight (Plan::in_flight,
// up to 31), so the copy stream runs several units ahead of the compute stream.
//
// Contract: open() creates the pool and maps its whole capacity once (a capacity the device
// cannot give throws DeviceOutOfMemory here, before any unit). place() runs on the copy stream
// and is ordered by the caller after the slot's previous kernel; a block it evicts is held by no
// unit in flight (a block is evictable only once every unit holding it was released), so its
// memory goes back to the pool at once, in stream order. release(owner) unpins the blocks of a
// collected unit. free_blocks() and close() are for the backend's release, with the copy stream
// synchronised between them; both never throw.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <unordered_map>

#include "host_registrations.hpp"
#include "stream_slots.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::cuda {

class DeviceCacheMemory {
 public:
  // A pool of `capacity` bytes on `device`, mapped on `copy` (synchronised); the blocks' copies
  // go through `regs` (split where a source crosses registrations), which outlives the cache.
  void open(int device, std::uint64_t capacity, cudaStream_t copy, const HostRegistrations* regs);
  bool is_open() const { return pool_made_; }

  // Whether the unit's blocks find room now beside the blocks of the units in flight.
  bool fits(const UnitLayout& L);
  // The unit's blocks for slot `owner`: sets sl.block_off / block_cols, sl.uploaded and
  // sl.cache_hits; enqueues on `copy` the frees of the evicted blocks and the allocation and the
  // copies of the dense blocks missing; send[bi] says which blocks were missing (the packed ones
  // among them still need upload_packed).
  void place(const UnitLayout& L, int owner, UnitSlot& sl, bool* send, cudaStream_t copy);
  // The blocks of slot `owner` may be evicted for later units.
  void release(int owner) { policy_.release(owner); }

  // Frees every block (stream-ordered on `copy`) and forgets them.
  void free_blocks(cudaStream_t copy) noexcept;
  // Destroys the pool (after free_blocks and a synchronisation of `copy`).
  void close() noexcept;

 private:
  DeviceBlockCache policy_;
  std::unordered_map<std::uint64_t, unsigned char*> mem_;  // each block's pool memory
  cudaMemPool_t pool_{};
  bool pool_made_ = false;
  const HostRegistrations* regs_ = nullptr;
};

}  // namespace tristream::cuda
