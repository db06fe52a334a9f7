// common/no_init_allocator.hpp — an allocator for std::vector of plain numbers whose resize()
// leaves new elements uninitialised (default-initialisation) instead of zeroing them, so that a
// large array can be filled, and its pages first touched, on many threads instead of by one
// thread's zero-fill. Every other operation is std::allocator's.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tristream {

template <typename T>
class NoInitAllocator : public std::allocator<T> {
  static_assert(std::is_trivially_default_constructible_v<T>, "for plain numbers only");

 public:
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  NoInitAllocator() = default;
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}

  // Value-initialisation (resize(n), vector(n)) becomes default-initialisation: nothing written.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace tristream
