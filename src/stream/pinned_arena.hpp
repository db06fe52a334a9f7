// stream/pinned_arena.hpp — host memory for the block store that a HostRegistrar may pin.
//
// PinnedArena: one pinnable allocation for every block the preload builds (direct uploads only),
// registered in one call near the preload's start, while the first row part is built.
// Registering each row part as it was built meant registrations while units ran: each holds the
// CUDA driver's lock, and the device ran dry behind the driver's waiting copies and launches.
// take() hands out pieces to the builders (thread-safe); the arena is unregistered and freed
// last, after every block in it.
//
// RawArray<T>: an array left uninitialised (the builders write every entry, in parallel), either
// in memory of its own (alloc_pinnable), registered on request and unregistered before it is
// freed, or a piece of a PinnedArena (view), registered with it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "tristream/host_memory.hpp"
#include "tristream/host_registrar.hpp"

namespace tristream {
class ThreadPool;
}

namespace tristream::stream {

class PinnedArena {
 public:
  static constexpr std::uint64_t kAlign = 256;
  PinnedArena() = default;
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;
  ~PinnedArena();
  // Reserves `bytes` (alloc_pinnable); false when the memory cannot be had.
  bool reserve(std::uint64_t bytes);
  std::uint64_t size() const { return size_; }
  // Faults every page in, in parallel, so that the registration finds them present (it would
  // fault them in on one thread while it holds the driver's lock): one byte written per 4 KiB
  // page, which the kernel maps zeroed (a whole huge page at once where it gives one), instead
  // of writing every byte a second time. The contents are not defined: blocks are written whole.
  void fault_in(ThreadPool& pool);
  // Registers the whole arena; true when it is (registered_flag() from then on).
  bool register_with(HostRegistrar& r);
  const std::atomic<bool>* registered_flag() const { return &registered_; }
  // `bytes` of the arena (kAlign-aligned), or null when it has no room left (always null when it
  // was never reserved). Thread-safe.
  unsigned char* take(std::uint64_t bytes);

 private:
  unsigned char* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::atomic<std::uint64_t> used_{0};
  HostRegistrar* reg_ = nullptr;
  std::atomic<bool> registered_{false};
};

template <class T>
class RawArray {
 public:
  RawArray() = default;
  RawArray(const RawArray&) = delete;
  RawArray& operator=(const RawArray&) = delete;
  ~RawArray() { reset(); }
  // n entries in memory of its own; throws std::bad_alloc.
  void alloc(std::size_t n) {
    reset();
    std::uint64_t size = 0;
    p_ = reinterpret_cast<T*>(alloc_pinnable(std::max<std::size_t>(n, 1) * sizeof(T), &size));
    if (!p_) throw std::bad_alloc();
    n_ = n;
    bytes_ = size;
  }
  // n entries at p, a piece of an arena whose registration `registered` reports; the arena owns
  // the memory and outlives the array.
  void view(T* p, std::size_t n, const std::atomic<bool>* registered) {
    reset();
    p_ = p;
    n_ = n;
    view_ = registered;
  }
  // Registers the array (once); true when it is registered (a view: when its arena is).
  bool register_with(HostRegistrar& r) {
    if (view_) return view_->load(std::memory_order_acquire);
    if (p_ && !reg_ && r.register_host(p_, bytes_)) reg_ = &r;
    return reg_ != nullptr;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void reset() {
    if (!view_) {
      if (reg_) reg_->unregister_host(p_);
      std::free(p_);
    }
    reg_ = nullptr;
    view_ = nullptr;
    p_ = nullptr;
    n_ = bytes_ = 0;
  }
  T* p_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
  HostRegistrar* reg_ = nullptr;
  const std::atomic<bool>* view_ = nullptr;
};

}  // namespace tristream::stream
