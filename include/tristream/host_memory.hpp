// tristream/host_memory.hpp — host memory that a backend may pin (StreamingBackend::register_host,
// the CUDA backend's pinned buffers). Header-only: the core's block cache and the CUDA backend
// both allocate it, and the CUDA library sits below the core.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace tristream {

// `bytes` of host memory (at least one page) that owns its pages: page-aligned, and from 2 MiB
// on 2 MiB-aligned with transparent huge pages advised, so that the first writes fault in 512
// times fewer pages (the block cache's offsets arrays take gigabytes at Kronecker 26). *size gets
// the bytes reserved, a multiple of the alignment. Null when the memory cannot be had; free with
// std::free.
inline unsigned char* alloc_pinnable(std::uint64_t bytes, std::uint64_t* size) {
  constexpr std::uint64_t kPage = 4096, kHuge = std::uint64_t{2} << 20;
  const std::uint64_t align = bytes >= kHuge ? kHuge : kPage;
  *size = (std::max<std::uint64_t>(bytes, 1) + align - 1) / align * align;
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(align, *size));
  if (p && align == kHuge) (void)::madvise(p, *size, MADV_HUGEPAGE);
  return p;
}

// An allocator for buffers about to be overwritten whole (decompressed chunks): no value
// initialisation of the elements, so a vector of n entries is not zeroed before it is written.
// (Plain malloc: huge pages would round every buffer up to 2 MiB, beyond what the host budget
// counts for it.)
template <class T>
struct OverwrittenAllocator {
  using value_type = T;
  OverwrittenAllocator() = default;
  template <class U>
  OverwrittenAllocator(const OverwrittenAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    void* p = std::malloc(std::max<std::size_t>(n, 1) * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;  // default-initialised: left as it is
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const OverwrittenAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const OverwrittenAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace tristream
