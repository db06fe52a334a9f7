// cuda/memory.hpp — RAII owners of device memory, pinned host memory, streams and events
// (cuda/ internal; uses CUDA runtime types). Every owner is movable, not copyable, and releases
// its resource in the destructor with TS_CUDA_CHECK_NOTHROW.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "check.hpp"

namespace tristream::cuda {

// Device memory for `count` elements of T (cudaMalloc; uninitialised).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { allocate(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    TS_CUDA_CHECK_ALLOC(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)),
                        count * sizeof(T));
    count_ = count;
  }
  void release() noexcept {
    if (ptr_) TS_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory for `count` elements of T (cudaMallocHost; uninitialised).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) { allocate(count); }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    TS_CUDA_CHECK_ALLOC(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)),
                        count * sizeof(T));
    count_ = count;
  }
  void release() noexcept {
    if (ptr_) TS_CUDA_CHECK_NOTHROW(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  T& operator[](std::size_t i) const { return ptr_[i]; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// A non-blocking stream.
class Stream {
 public:
  Stream() { TS_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) TS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (s_) TS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { TS_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

// An event; timing enabled unless `timing` is false.
class Event {
 public:
  explicit Event(bool timing = true) {
    TS_CUDA_CHECK(
        cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() {
    if (e_) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_) TS_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const { TS_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() const { TS_CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Milliseconds from `start` to this event (both recorded and completed).
  float since(const Event& start) const {
    float ms = 0;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Stream-ordered scratch memory (cudaMallocAsync / cudaFreeAsync on one stream).
template <class T>
class AsyncBuffer {
 public:
  AsyncBuffer(std::size_t count, cudaStream_t stream) : stream_(stream) {
    if (count)
      TS_CUDA_CHECK_ALLOC(
          cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), stream),
          count * sizeof(T));
  }
  ~AsyncBuffer() {
    if (ptr_) TS_CUDA_CHECK_NOTHROW(cudaFreeAsync(ptr_, stream_));
  }
  AsyncBuffer(const AsyncBuffer&) = delete;
  AsyncBuffer& operator=(const AsyncBuffer&) = delete;
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace tristream::cuda
