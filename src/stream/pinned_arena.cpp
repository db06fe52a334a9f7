// stream/pinned_arena.cpp — the block store's pinnable arena (stream/pinned_arena.hpp).
#include "stream/pinned_arena.hpp"

#include <cstring>

#include "common/thread_pool.hpp"

namespace tristream::stream {

PinnedArena::~PinnedArena() {
  if (reg_) reg_->unregister_host(base_);
  std::free(base_);
}

bool PinnedArena::reserve(std::uint64_t bytes) {
  base_ = alloc_pinnable(bytes, &size_);
  if (!base_) size_ = 0;
  return base_ != nullptr;
}

void PinnedArena::fault_in(ThreadPool& pool) {
  constexpr std::uint64_t piece = std::uint64_t{32} << 20;
  constexpr std::uint64_t page = 4096;
  pool.run((size_ + piece - 1) / piece, [&](std::size_t x) {
    const std::uint64_t at = x * piece, end = std::min(size_, at + piece);
    for (std::uint64_t b = at; b < end; b += page)
      static_cast<volatile unsigned char*>(base_)[b] = 0;
  });
}

bool PinnedArena::register_with(HostRegistrar& r) {
  if (!base_ || !r.register_host(base_, size_)) return false;
  reg_ = &r;
  registered_.store(true, std::memory_order_release);
  return true;
}

unsigned char* PinnedArena::take(std::uint64_t bytes) {
  const std::uint64_t need = (std::max<std::uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  std::uint64_t at = used_.load(std::memory_order_relaxed);
  do {
    if (at + need > size_) return nullptr;
  } while (!used_.compare_exchange_weak(at, at + need, std::memory_order_relaxed));
  return base_ + at;
}

}  // namespace tristream::stream
