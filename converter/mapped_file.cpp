// mapped_file.cpp — MappedFile (mapped_file.hpp): the read-only mapping of an input file, its
// read-ahead and page dropping, and the SIGBUS guard that turns a file shrinking under the
// mapping into zeros plus a mark instead of the end of the process.
#include "mapped_file.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "tristream/error.hpp"

namespace tristream::conv {

namespace {

// The guarded mappings: [lo, hi) addresses (lo == 0: a free slot) and whether a read past the
// file's end was answered with zeros. Read by the signal handler: lock-free atomics only.
struct Slot {
  std::atomic<std::uintptr_t> lo{0}, hi{0};
  std::atomic<int> changed{0};
};
constexpr int kSlots = 16;
Slot g_slots[kSlots];
std::atomic<std::uintptr_t> g_page{4096};
struct sigaction g_previous;
std::once_flag g_installed;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::uintptr_t page = g_page.load(std::memory_order_relaxed);
  for (Slot& s : g_slots) {
    const std::uintptr_t lo = s.lo.load(std::memory_order_acquire);
    if (lo == 0 || a < lo || a >= s.hi.load(std::memory_order_acquire)) continue;
    // Ours: zeros over the page, read again when the handler returns.
    void* p = reinterpret_cast<void*>(a / page * page);
    if (::mmap(p, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      s.changed.store(1, std::memory_order_release);
      return;
    }
    break;
  }
  // Not a guarded mapping (or no page could be mapped): the previous disposition takes it.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  // The default: restored, and the faulting access repeats and ends the process with SIGBUS.
  ::sigaction(SIGBUS, &g_previous, nullptr);
}

void install_guard() {
  std::call_once(g_installed, [] {
    g_page.store(static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

// The whole pages inside [offset, offset + len) of a mapping at `base`: [lo, hi) addresses.
bool page_span(const char* base, std::uint64_t offset, std::uint64_t len, std::uintptr_t& lo,
               std::uintptr_t& hi, bool outward) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(base) + offset;
  const std::uintptr_t b = a + len;
  lo = outward ? a / page * page : (a + page - 1) / page * page;
  hi = outward ? (b + page - 1) / page * page : b / page * page;
  return hi > lo;
}

}  // namespace

MappedFile::MappedFile(int fd, std::uint64_t size) : size_(size) {
  install_guard();
  void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    throw Error(ErrorKind::Input, std::string("cannot map the input: ") + std::strerror(errno));
  data_ = static_cast<char*>(p);
  ::madvise(p, static_cast<std::size_t>(size), MADV_SEQUENTIAL);
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  for (int i = 0; i < kSlots && slot_ < 0; ++i) {
    std::uintptr_t free = 0;
    if (g_slots[i].hi.compare_exchange_strong(free, lo + size)) {  // hi claims the slot
      g_slots[i].changed.store(0);
      g_slots[i].lo.store(lo, std::memory_order_release);
      slot_ = i;
    }
  }
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) {
    g_slots[slot_].lo.store(0, std::memory_order_release);
    g_slots[slot_].hi.store(0, std::memory_order_release);
  }
  ::munmap(data_, static_cast<std::size_t>(size_));
}

bool MappedFile::changed() const {
  return slot_ >= 0 && g_slots[slot_].changed.load(std::memory_order_acquire) != 0;
}

void MappedFile::prefetch(std::uint64_t offset, std::uint64_t len) const {
  std::uintptr_t lo = 0, hi = 0;
  if (page_span(data_, offset, std::min(len, size_ - std::min(offset, size_)), lo, hi, true))
    ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_WILLNEED);
}

void MappedFile::drop(std::uint64_t offset, std::uint64_t len) const {
  std::uintptr_t lo = 0, hi = 0;
  if (page_span(data_, offset, len, lo, hi, false))
    ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

}  // namespace tristream::conv
