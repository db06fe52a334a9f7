// cuda/stream_staging.cu — the ring of pinned staging buffers (stream_staging.hpp).
#include "check.hpp"
#include "pinned_host.hpp"
#include "stream_staging.hpp"
#include "wait.hpp"

namespace tristream::cuda {

void StagingRing::allocate(int buffers, std::uint64_t piece_bytes) {
  piece_bytes_ = piece_bytes;
  for (int b = 0; b < buffers; ++b) {
    ring_.emplace_back();
    Buffer& st = ring_.back();
    TS_CUDA_CHECK(cudaEventCreate(&st.start));
    TS_CUDA_CHECK(cudaEventCreate(&st.end));
    st.events = true;
    st.host = pin_host(piece_bytes, "a staging buffer");
  }
}

void StagingRing::release() noexcept {
  for (Buffer& st : ring_) {
    unpin_host(st.host);
    if (st.events) {
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(st.start));
      TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(st.end));
    }
  }
  ring_.clear();
  piece_bytes_ = 0;
}

UploadPiece StagingRing::piece_of(const Buffer& st, const DeviceClock& clock) {
  UploadPiece p;
  p.start = clock.at(st.start);
  p.end = clock.at(st.end);
  p.bytes = st.bytes;
  return p;
}

bool StagingRing::wait(int b, const DeviceClock& clock, int* slot, UploadPiece* piece) {
  Buffer& st = ring_.at(static_cast<std::size_t>(b));
  if (!st.pending) return false;
  st.pending = false;
  wait_event(st.end);  // interruptible (wait.hpp)
  *slot = st.slot;
  *piece = piece_of(st, clock);
  return true;
}

void StagingRing::send(int b, int slot, unsigned char* dst, std::uint64_t bytes,
                       cudaStream_t copy) {
  Buffer& st = ring_.at(static_cast<std::size_t>(b));
  if (st.pending) throw Error(ErrorKind::Internal, "a staging buffer sent before its last copy");
  TS_CUDA_CHECK(cudaEventRecord(st.start, copy));
  TS_CUDA_CHECK(cudaMemcpyAsync(dst, st.host, bytes, cudaMemcpyHostToDevice, copy));
  TS_CUDA_CHECK(cudaEventRecord(st.end, copy));
  st.pending = true;
  st.slot = slot;
  st.bytes = bytes;
}

void StagingRing::collect(int slot, const DeviceClock& clock, std::vector<UploadPiece>& out) {
  for (Buffer& st : ring_)
    if (st.pending && st.slot == slot) {
      st.pending = false;
      out.push_back(piece_of(st, clock));
    }
}

}  // namespace tristream::cuda
