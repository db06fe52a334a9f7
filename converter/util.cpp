// util.cpp — mmap buffers, narrowing keys in place, spill files (the sorts: sort.cpp).
#include "util.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <vector>

#include "common/host_memory_policy.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {

void* map_pages(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error(ErrorKind::Internal, "cannot map " + std::to_string(bytes) +
                                         " bytes of memory: " + std::strerror(errno));
#ifdef MADV_HUGEPAGE
  // Large buffers are filled by scattered writes: huge pages cut the page faults and TLB misses.
  if (bytes >= (std::size_t{8} << 20)) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept {
  ::munmap(p, bytes);
}

void small_pages(void* p, std::size_t bytes) noexcept {
#ifdef MADV_NOHUGEPAGE
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(p) / page * page;
  ::madvise(reinterpret_cast<void*>(lo), reinterpret_cast<std::uintptr_t>(p) + bytes - lo,
            MADV_NOHUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void drop_pages(void* p, std::size_t bytes) noexcept {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

std::uint64_t row_offsets_from_lengths(const std::uint32_t* len, std::uint64_t n, eid_t* out,
                                       unsigned threads) {
  const unsigned t = std::max(threads, 1u);
  const std::size_t pieces = 4 * static_cast<std::size_t>(t);
  auto lo_of = [n, pieces](std::size_t p) { return n * p / pieces; };
  std::vector<eid_t> start(pieces + 1, 0);
  std::vector<std::uint64_t> longest(pieces, 0);
  parallel_for(t, pieces, 1, [&](std::size_t p0, std::size_t p1, unsigned) {
    for (std::size_t p = p0; p < p1; ++p) {
      eid_t sum = 0;
      std::uint32_t top = 0;
      for (std::uint64_t r = lo_of(p); r < lo_of(p + 1); ++r) {
        sum += len[r];
        top = std::max(top, len[r]);
      }
      start[p + 1] = sum;
      longest[p] = top;
    }
  });
  for (std::size_t p = 0; p < pieces; ++p) start[p + 1] += start[p];
  out[0] = 0;
  parallel_for(t, pieces, 1, [&](std::size_t p0, std::size_t p1, unsigned) {
    for (std::size_t p = p0; p < p1; ++p) {
      eid_t e = start[p];
      for (std::uint64_t r = lo_of(p); r < lo_of(p + 1); ++r) out[r + 1] = e += len[r];
    }
  });
  return *std::max_element(longest.begin(), longest.end());
}

std::uint32_t* narrow_in_place(BigBuffer<std::uint64_t>& keys, unsigned threads) {
  // Key i is read at byte 8i and written at byte 4i. Keys [c, 2c) are written to bytes [4c, 8c)
  // and read from [8c, 16c): within such a round no key is overwritten before it is read, and
  // every earlier round is done, so each round runs in parallel.
  const std::size_t n = keys.size();
  std::uint64_t* const src = keys.data();
  std::uint32_t* const dst = reinterpret_cast<std::uint32_t*>(keys.data());
  std::size_t c = std::min<std::size_t>(n, 1 << 16);
  for (std::size_t i = 0; i < c; ++i) dst[i] = static_cast<std::uint32_t>(src[i]);
  while (c < n) {
    const std::size_t end = std::min(n, 2 * c);
    parallel_for(threads, end - c, 1 << 18, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = c + lo; i < c + hi; ++i) dst[i] = static_cast<std::uint32_t>(src[i]);
    });
    c = end;
  }
  drop_pages(dst + n, (keys.capacity() * 2 - n) * sizeof(std::uint32_t));
  return dst;
}

TempFile::TempFile(const std::string& dir) {
  std::string templ = (dir.empty() ? std::string(".") : dir) + "/tristream-spill-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0)
    throw Error(ErrorKind::Input, (dir.empty() ? std::string(".") : dir) +
                                      ": cannot create a spill file: " + std::strerror(errno));
  ::unlink(buf.data());
  behind_.emplace(fd_, WriteBehind::Use::Scratch, cgroup_memory_limit());
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
}

void CloseBehind::add(std::unique_ptr<TempFile> f) {
  if (!f) return;
  try {
    threads_.emplace_back([g = std::move(f)]() mutable { g.reset(); });
  } catch (...) {  // no thread: the file was closed here, as the lambda holding it went
  }
}

CloseBehind::~CloseBehind() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void TempFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  const std::size_t total = bytes;
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::pwrite(fd_, p, bytes, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Internal,
                  std::string("cannot write a spill file (disk full? see --tmp-dir): ") +
                      std::strerror(errno));
    }
    p += w;
    bytes -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
  behind_->wrote(total);
}

std::size_t TempFile::read_at(std::uint64_t offset, void* data, std::size_t bytes,
                              unsigned threads) const {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  if (threads > 1 && bytes >= 2 * kPiece) {
    const std::size_t pieces = std::min<std::size_t>(threads, bytes / kPiece);
    const std::size_t per = (bytes + pieces - 1) / pieces;
    std::vector<std::size_t> got(pieces, 0);
    parallel_for(threads, pieces, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t p = lo; p < hi; ++p) {
        const std::size_t at = p * per, len = std::min(per, bytes - at);
        got[p] = read_at(offset + at, static_cast<char*>(data) + at, len);
      }
    });
    // (the bytes up to the first short piece: the end of the file)
    std::size_t done = 0;
    for (std::size_t p = 0; p < pieces; ++p) {
      done += got[p];
      if (got[p] < std::min(per, bytes - p * per)) break;
    }
    return done;
  }
  char* p = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t r = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Internal,
                  std::string("cannot read a spill file: ") + std::strerror(errno));
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return done;
}

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

}  // namespace tristream::conv
