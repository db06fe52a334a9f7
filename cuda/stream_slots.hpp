// cuda/stream_slots.hpp — the slots of the CUDA streaming backend (cuda/ internal): one slot per
// unit in flight, with its device memory, its events, its count and per-vertex words, and the
// packed blocks its upload leaves for its count to expand; plus the clock that turns the slots'
// events into pipeline times.
//
// Contract:
//   - A slot's events order its work: the upload into a slot waits for the slot's previous kernel
//     (open_upload: k_end), and its count waits for its upload (up_end). Each event also times
//     its end of a span (DeviceClock::at).
//   - UnitSlots::allocate makes every slot or throws (leaving nothing allocated: call release()
//     after a failure); DeviceOutOfMemory when device memory runs out. release() frees
//     everything; the caller has synchronised both streams first. Safe to call twice.
//   - Packed blocks: upload_packed copies the packed images of the blocks sent (send[bi]; through
//     the backend's registrations, split at their edges) to
//     stream-ordered scratch on the copy stream; expand_packed_blocks, on the compute stream
//     after the unit's upload, expands them into the blocks' dense offsets (slot.block_off) and
//     frees the scratch there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "host_registrations.hpp"
#include "tristream/pipeline.hpp"
#include "tristream/types.hpp"

namespace tristream::cuda {

// The pipeline's clock on the device: an event recorded on a stream at a known host time.
// create() makes the reference event on the current device; destroy() (also run by the
// destructor) frees it once.
class DeviceClock {
 public:
  DeviceClock() = default;
  ~DeviceClock() { destroy(); }
  void create();
  void destroy() noexcept;
  DeviceClock(const DeviceClock&) = delete;
  DeviceClock& operator=(const DeviceClock&) = delete;
  // The run's clock starts at `steady_seconds` (a steady_clock time).
  void set_origin(double steady_seconds) { origin_ = steady_seconds; }
  // Records the reference event on `stream` and waits for it: the host time it ran at is then
  // known to within the wait.
  void reset(cudaStream_t stream);
  // Pipeline-clock seconds of a finished event (< 0 when unknown).
  double at(cudaEvent_t ev) const;

 private:
  cudaEvent_t ref_{};
  bool made_ = false;
  double origin_ = 0, ref_host_ = 0;
};

// A packed image in scratch and the dense offsets it expands into.
struct PackedExpansion {
  const unsigned char* image = nullptr;
  std::uint64_t rows = 0, count = 0;
  unsigned char* out = nullptr;
};

struct UnitSlot {
  unsigned char* host = nullptr;  // host slot (slots 0 and 1 with full host slots)
  bool host_pinned = false;       // the host slot is pinned (else pageable)
  unsigned char* dev = nullptr;   // device slot (null with the device block cache)
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
  std::vector<PackedExpansion> expand;
  void* expand_scratch = nullptr;
  // Blocks the count cuts from B first (SlotBlock::cut; not those the device block cache held).
  bool cut[3] = {false, false, false};
  // Row pieces (UnitLayout::row_pieces): the unit's count is open (total and per-vertex arrays
  // zeroed, k_start recorded), its kernel, an event after the pieces sent so far, and a start
  // and an end event per count (created as needed, kept until release), rows_used of them
  // recorded for the unit in flight.
  bool rows_open = false;
  std::string rows_kernel;
  cudaEvent_t rows_sent{};
  bool rows_sent_made = false;
  std::vector<cudaEvent_t> row_events;   // start, end, start, end, ...
  std::vector<std::uint64_t> row_bytes;  // per count: its rows' offsets and columns
  std::size_t rows_used = 0;
};

class UnitSlots {
 public:
  // `slots` slots: their events, count words and per-vertex arrays of pv_rows entries; device
  // memory of slot_bytes (256 when 0) each unless `cache_holds_blocks`; host slots for the
  // first `host_slots` slots, pinned unless `pageable` (a fallback no upload is planned from).
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int host_slots,
                bool cache_holds_blocks, bool pageable = false);
  // Frees the packed scratch of uploads whose count never came, on `copy` (stream-ordered).
  void free_packed_scratch(cudaStream_t copy) noexcept;
  void release() noexcept;

  UnitSlot& operator[](int s) { return slot_[static_cast<std::size_t>(s)]; }
  UnitSlot& at(int s) { return slot_.at(static_cast<std::size_t>(s)); }
  std::vector<UnitSlot>& all() { return slot_; }

 private:
  std::vector<UnitSlot> slot_;
};

// The first copy of a unit into a slot: after the slot's previous kernel, timed from here.
void open_upload(UnitSlot& sl, cudaStream_t copy);

// Packed blocks among those sent (send[bi]) to scratch on `copy` (see the contract above).
void upload_packed(UnitSlot& sl, const UnitLayout& L, const bool* send, cudaStream_t copy,
                   const HostRegistrations& regs);
void expand_packed_blocks(UnitSlot& sl, cudaStream_t compute);
// The slot's cut blocks (UnitSlot::cut) cut from its B on `compute`, after expand_packed_blocks
// (a packed B is dense by then).
void cut_blocks(UnitSlot& sl, const UnitLayout& L, cudaStream_t compute);

}  // namespace tristream::cuda
