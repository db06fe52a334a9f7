// util.cpp — mmap buffers, parallel sort, spill files.
#include "util.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <vector>

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

namespace {

// Sorts data[0..k) by its low `bits` bits (the higher bits are equal): LSD radix whose digits
// of up to 11 bits cover only the bit positions that differ between the keys (packed keys leave
// runs of zero bits, e.g. between a column id and the row above it), so that a bucket of keys
// with 21 + 9 varying bits takes 3 passes, not 6.
void radix_sort_low_bits(std::uint64_t* data, std::size_t k, int bits,
                         std::vector<std::uint64_t>& scratch) {
  if (k < 256 || bits == 0) {
    std::sort(data, data + k);
    return;
  }
  // 1. The varying bits, and digit windows over them.
  std::uint64_t any = 0, all = ~std::uint64_t{0};
  for (std::size_t i = 0; i < k; ++i) {
    any |= data[i];
    all &= data[i];
  }
  const std::uint64_t low = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  std::uint64_t varying = (any ^ all) & low;
  int shifts[8];
  int passes = 0;
  while (varying && passes < 8) {
    const int sh = __builtin_ctzll(varying);
    shifts[passes++] = sh;
    varying = sh + 11 >= 64 ? 0 : varying & ~((std::uint64_t{1} << (sh + 11)) - 1);
  }
  // 2. One counting pass per window.
  if (scratch.size() < k) scratch.resize(k);
  std::uint64_t* src = data;
  std::uint64_t* dst = scratch.data();
  std::size_t count[2048];
  for (int p = 0; p < passes; ++p) {
    const int sh = shifts[p];
    std::memset(count, 0, sizeof count);
    for (std::size_t i = 0; i < k; ++i) ++count[(src[i] >> sh) & 2047];
    std::size_t run = 0;
    for (std::size_t& c : count) {
      const std::size_t x = c;
      c = run;
      run += x;
    }
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint64_t x = src[i];
      dst[count[(x >> sh) & 2047]++] = x;
    }
    std::swap(src, dst);
  }
  if (src != data) std::memcpy(data, src, k * sizeof(std::uint64_t));
}

}  // namespace

void radix_sort_u64(std::uint64_t* data, std::size_t k, std::vector<std::uint64_t>& scratch) {
  radix_sort_low_bits(data, k, 64, scratch);
}

// Up to this many threads the sort removes repeats by moving its buckets inside tmp (one
// thread's memmove); more threads copy them back into keys in parallel, faster there than one
// thread even with keys' pages faulted in afresh.
constexpr unsigned kInPlaceThreads = 4;

std::size_t parallel_sort_unique_u64(BigBuffer<std::uint64_t>& keys, BigBuffer<std::uint64_t>& tmp,
                                     unsigned threads, std::uint64_t max_key) {
  const std::size_t n = keys.size();
  if (n < (std::size_t{1} << 16)) {
    std::sort(keys.begin(), keys.end());
    const std::size_t u =
        static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
    keys.resize(u);
    return u;
  }
  TS_CHECK(tmp.capacity() >= n, "sort buffer too small");
  // 1. Slices for the histogram and scatter passes, one per thread; the top digit.
  const unsigned t = std::max(threads, 1u);
  const std::size_t slice = (n + t - 1) / t;
  std::vector<std::uint64_t> slice_max(t, max_key);
  if (!max_key)
    parallel_for(t, n, slice, [&](std::size_t lo, std::size_t hi, unsigned) {
      std::uint64_t m = 0;
      for (std::size_t i = lo; i < hi; ++i) m = std::max(m, keys[i]);
      slice_max[lo / slice] = m;
    });
  const std::uint64_t maxk = *std::max_element(slice_max.begin(), slice_max.end());
  const int bits = maxk ? 64 - __builtin_clzll(maxk) : 0;
  int digit = 12;
  if (bits < digit) digit = bits;
  const int shift = bits - digit;
  const std::size_t B = std::size_t{1} << digit;
  // 2. Histograms per slice, and where each slice's keys of each bucket go.
  std::vector<std::size_t> hist(static_cast<std::size_t>(t) * B, 0);
  parallel_for(t, n, slice, [&](std::size_t lo, std::size_t hi, unsigned) {
    std::size_t* h = hist.data() + (lo / slice) * B;
    for (std::size_t i = lo; i < hi; ++i) ++h[keys[i] >> shift];
  });
  std::vector<std::size_t> bucket_start(B + 1, 0);
  {
    std::size_t run = 0;
    for (std::size_t b = 0; b < B; ++b) {
      bucket_start[b] = run;
      for (unsigned s = 0; s < t; ++s) {
        const std::size_t c = hist[s * B + b];
        hist[s * B + b] = run;
        run += c;
      }
    }
    bucket_start[B] = run;
  }
  // 3. Scatter into tmp. Every slice fills B places from their starts, so with small pages the
  //    pages of tmp touched stay near the keys written; the pages of keys read are dropped.
  small_pages(tmp.data(), tmp.capacity() * sizeof(std::uint64_t));
  drop_pages(tmp.data(), tmp.capacity() * sizeof(std::uint64_t));
  tmp.resize(n);
  constexpr std::size_t kDropKeys = std::size_t{1} << 21;  // 16 MiB of keys
  parallel_for(t, n, slice, [&](std::size_t lo, std::size_t hi, unsigned) {
    std::size_t* h = hist.data() + (lo / slice) * B;
    for (std::size_t piece = lo; piece < hi; piece += kDropKeys) {
      const std::size_t end = std::min(hi, piece + kDropKeys);
      for (std::size_t i = piece; i < end; ++i) {
        const std::uint64_t k = keys[i];
        tmp[h[k >> shift]++] = k;
      }
      drop_pages(keys.data() + piece, (end - piece) * sizeof(std::uint64_t));
    }
  });
  // 4. Each bucket sorted on its own (the higher bits are equal), repeats removed.
  std::vector<std::size_t> unique_count(B, 0);
  std::vector<std::vector<std::uint64_t>> scratch(t);
  parallel_for(t, B, 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
    for (std::size_t b = lo; b < hi; ++b) {
      std::uint64_t* first = tmp.data() + bucket_start[b];
      std::uint64_t* last = tmp.data() + bucket_start[b + 1];
      radix_sort_low_bits(first, static_cast<std::size_t>(last - first), shift, scratch[w]);
      unique_count[b] = static_cast<std::size_t>(std::unique(first, last) - first);
    }
  });
  scratch.clear();
  // 5. Without repeats the keys are in place in tmp: hand tmp's memory to keys (the memory keys
  //    had, its pages dropped, becomes tmp). With repeats, every bucket moves its keys to their
  //    place: inside tmp (few threads), or into keys in parallel, dropping the pages of tmp it
  //    has copied.
  std::vector<std::size_t> out_start(B + 1, 0);
  for (std::size_t b = 0; b < B; ++b) out_start[b + 1] = out_start[b] + unique_count[b];
  const std::size_t m = out_start[B];
  if (m == n) {
    keys.swap(tmp);
    tmp.clear();
    return m;
  }
  if (t <= kInPlaceThreads) {
    // Few threads: the buckets move left inside tmp, in order (each only onto places already
    //    moved from), and tmp becomes keys: no fresh pages to fault in for keys.
    for (std::size_t b = 0; b < B; ++b)
      if (unique_count[b] && out_start[b] != bucket_start[b])
        std::memmove(tmp.data() + out_start[b], tmp.data() + bucket_start[b],
                     unique_count[b] * sizeof(std::uint64_t));
    drop_pages(tmp.data() + m, (n - m) * sizeof(std::uint64_t));
    keys.swap(tmp);
    tmp.clear();
    keys.resize(m);
    return m;
  }
  parallel_for(t, B, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t b = lo; b < hi; ++b) {
      if (unique_count[b])
        std::memcpy(keys.data() + out_start[b], tmp.data() + bucket_start[b],
                    unique_count[b] * sizeof(std::uint64_t));
      drop_pages(tmp.data() + bucket_start[b],
                 (bucket_start[b + 1] - bucket_start[b]) * sizeof(std::uint64_t));
    }
  });
  tmp.clear();
  keys.resize(m);
  return m;
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
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TempFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
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
}

std::size_t TempFile::read_at(std::uint64_t offset, void* data, std::size_t bytes) const {
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
