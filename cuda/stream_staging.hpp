// cuda/stream_staging.hpp — the ring of pinned staging buffers of streamed staging (cuda/
// internal): the in-core unit whose host slot does not fit the host budget is sent in pieces,
// each copied from a small pinned buffer into the unit's device slot.
//
// Contract: every piece is one cudaMemcpyAsync on the copy stream between two events of its
// buffer; the second tells the host when it may overwrite the buffer (wait), and both time the
// piece (DeviceClock). A buffer holds at most one pending piece: send() requires that wait(b) was
// called since the buffer's last send. A finished piece is handed back once, by wait() or by
// collect() (when its unit's count has finished, every piece of that unit has too: the count ran
// after them in the copy stream's order). allocate() throws with nothing left allocated after
// release(); release() frees everything once no copy is pending (streams synchronised).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "stream_slots.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::cuda {

class StagingRing {
 public:
  // `buffers` pinned buffers of piece_bytes each, with their events.
  void allocate(int buffers, std::uint64_t piece_bytes);
  void release() noexcept;

  unsigned char* buffer(int b) { return ring_.at(static_cast<std::size_t>(b)).host; }
  std::uint64_t piece_bytes() const { return piece_bytes_; }

  // Waits for buffer b's pending copy, if any; returns whether there was one, and then its slot
  // and piece.
  bool wait(int b, const DeviceClock& clock, int* slot, UploadPiece* piece);
  // Enqueues the copy of `bytes` from the start of buffer b to `dst` on `copy`, for `slot`.
  void send(int b, int slot, unsigned char* dst, std::uint64_t bytes, cudaStream_t copy);
  // Appends the pieces of `slot` still pending (finished with the slot's count) to `out`.
  void collect(int slot, const DeviceClock& clock, std::vector<UploadPiece>& out);

 private:
  struct Buffer {
    unsigned char* host = nullptr;
    cudaEvent_t start{}, end{};
    bool events = false;
    bool pending = false;  // a copy out of it may still run
    int slot = 0;
    std::uint64_t bytes = 0;
  };
  static UploadPiece piece_of(const Buffer& st, const DeviceClock& clock);

  std::vector<Buffer> ring_;
  std::uint64_t piece_bytes_ = 0;
};

}  // namespace tristream::cuda
