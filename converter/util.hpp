// util.hpp — converter internals: mmap-backed buffers (their memory goes back to the OS when
// freed, so peak RSS follows the memory limit), a parallel-for over index ranges, parallel sorts
// (defined in sort.cpp, which also sorts from spans: sort.hpp) and temporary spill files that
// remove themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "common/write_behind.hpp"
#include "tristream/types.hpp"

namespace tristream::conv {

// A fixed-capacity array in anonymous mmap memory. Pages are zero-filled lazily and count in RSS
// only once touched; the whole mapping is returned to the OS on destruction.
template <typename T>
class BigBuffer {
 public:
  BigBuffer() = default;
  explicit BigBuffer(std::size_t capacity) { reserve(capacity); }
  ~BigBuffer() { release(); }
  BigBuffer(BigBuffer&& o) noexcept { swap(o); }
  BigBuffer& operator=(BigBuffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;

  void swap(BigBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }
  // Discards the contents and maps room for `capacity` elements.
  void reserve(std::size_t capacity);
  void release() noexcept;
  // Returns the pages past size() to the OS (the capacity stays; they read as zero again).
  void trim() noexcept;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  void resize(std::size_t n) { size_ = n; }  // n <= capacity(); new elements are not initialised
  void clear() { size_ = 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  void push_back(const T& v) { data_[size_++] = v; }  // caller guarantees the capacity

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

void* map_pages(std::size_t bytes);  // throws Error(Internal) on failure
void unmap_pages(void* p, std::size_t bytes) noexcept;
void drop_pages(void* p, std::size_t bytes) noexcept;   // MADV_DONTNEED on whole pages inside
void small_pages(void* p, std::size_t bytes) noexcept;  // no huge pages for [p, p + bytes)

template <typename T>
void BigBuffer<T>::reserve(std::size_t capacity) {
  release();
  if (capacity == 0) return;
  data_ = static_cast<T*>(map_pages(capacity * sizeof(T)));
  cap_ = capacity;
}
template <typename T>
void BigBuffer<T>::release() noexcept {
  if (data_) unmap_pages(data_, cap_ * sizeof(T));
  data_ = nullptr;
  size_ = cap_ = 0;
}
template <typename T>
void BigBuffer<T>::trim() noexcept {
  if (data_ && cap_ > size_) drop_pages(data_ + size_, (cap_ - size_) * sizeof(T));
}

// An undirected edge record in original ids, canonical: a < b (self-loops never stored).
struct Edge64 {
  std::uint64_t a, b;
};
inline bool operator<(const Edge64& x, const Edge64& y) {
  // (as one 128-bit number: compiled without branches, which a merge's heap mispredicts)
  using u128 = unsigned __int128;
  return (static_cast<u128>(x.a) << 64 | x.b) < (static_cast<u128>(y.a) << 64 | y.b);
}
inline bool operator==(const Edge64& x, const Edge64& y) {
  return x.a == y.a && x.b == y.b;
}

// Runs fn(begin, end, worker) over [0, n) split into pieces of `grain` indices (the last may be
// shorter) handed out dynamically to min(threads, pieces) workers of a pool made for the call
// (for_each_item, common/thread_pool.hpp), so it may run inside another pool's task; worker <
// that number. The first exception stops the handing out of pieces and is rethrown; SIGINT or
// SIGTERM (common/interrupt.hpp) stops it between pieces with Error(Interrupted).
template <typename Fn>
void parallel_for(unsigned threads, std::size_t n, std::size_t grain, Fn&& fn);

// Sorts data[0..k) ascending on one thread (LSD radix over the bits that vary; scratch grows to k).
void radix_sort_u64(std::uint64_t* data, std::size_t k, std::vector<std::uint64_t>& scratch);

// Counts in parallel: fn(lo, hi, inc) calls inc(v), v < n, for the items [lo, hi) of [0, items),
// and counts[v] grows by the number of such calls. Each worker counts into an array of its own
// (the arrays summed at the end) when those take at most `budget` bytes; else all add to counts
// atomically.
template <typename Fn>
void parallel_count(unsigned threads, std::size_t items, std::uint32_t* counts, std::size_t n,
                    std::uint64_t budget, Fn&& fn);

// Sorts keys ascending and removes repeats, in parallel: one MSD radix pass on the top bits into
// tmp (which needs room for keys.size() elements), then each bucket sorted and deduplicated on
// its own, and the result handed back in keys: without repeats by swapping the two buffers (keys
// then owns the memory tmp had), else moved inside tmp, which then becomes keys (up to 4 threads),
// or copied back bucket by bucket in parallel (more threads). Returns the new
// keys.size(). The memory stays near 8 bytes per key, not 16: the scatter returns the pages of
// keys it has read to the OS and tmp is filled in small pages, so that its pages touched follow
// the keys written; the copy back returns tmp's pages as it goes. tmp's contents are discarded
// on entry. max_key: a bound of the largest key when the caller knows one (the top digit then
// needs no pass over the keys; any bound gives the same result), 0 = unknown.
std::size_t parallel_sort_unique_u64(BigBuffer<std::uint64_t>& keys, BigBuffer<std::uint64_t>& tmp,
                                     unsigned threads, std::uint64_t max_key = 0);

// Row offsets from row lengths: out[0] = 0, out[r + 1] = out[r] + len[r] for r < n (out has
// n + 1 entries), in pieces on `threads` threads (each piece's sum, their prefix, then each piece
// from its start); returns the longest row.
std::uint64_t row_offsets_from_lengths(const std::uint32_t* len, std::uint64_t n, eid_t* out,
                                       unsigned threads);

// The low 32 bits of every key, packed in place into the first 4 * keys.size() bytes of keys'
// memory (returned), in parallel; the pages past them go back to the OS. keys keeps its size
// but no longer holds keys.
std::uint32_t* narrow_in_place(BigBuffer<std::uint64_t>& keys, unsigned threads);

// A spill file in `dir`, unlinked as soon as it is created: only the open descriptor refers to
// it, so it disappears on success, on failure and even when the process is killed. What it writes
// stays in the page cache (read back from memory) unless the process's memory group is tight,
// where it leaves the cache as it goes (WriteBehind, a scratch file).
class TempFile {
 public:
  explicit TempFile(const std::string& dir);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  // Writes bytes at offset (pwrite); throws Error(Internal) naming --tmp-dir on failure.
  // Several threads may write at once, each its own range.
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);
  // Reads bytes at offset (pread); returns the bytes read (short only at the end of the file).
  // With threads > 1 a large read is cut into pieces of at least 8 MiB read at once (reads of one
  // file run in parallel; from the page cache one thread copies a few GB/s).
  std::size_t read_at(std::uint64_t offset, void* data, std::size_t bytes,
                      unsigned threads = 1) const;

 private:
  int fd_ = -1;
  std::optional<WriteBehind> behind_;
};

// Closes spill files on threads of their own: an unlinked file's blocks are freed by close(2),
// seconds for gigabytes, which then overlap the work that follows instead of adding to it. The
// destructor joins them (the files are gone when it returns).
class CloseBehind {
 public:
  CloseBehind() = default;
  CloseBehind(const CloseBehind&) = delete;
  CloseBehind& operator=(const CloseBehind&) = delete;
  ~CloseBehind();
  void add(std::unique_ptr<TempFile> f);

 private:
  std::vector<std::thread> threads_;
};

// Per-piece counts to places: counts[q * buckets + b] (piece q's keys of bucket b) becomes where
// piece q's first key of bucket b goes when the buckets lie in order and, inside a bucket, the
// pieces in order (an exclusive prefix sum taken bucket by bucket), so that a scatter by pieces
// on several threads lays the keys out as one thread would. With start (buckets + 1 entries),
// start[b] is bucket b's first place and start[buckets] the total.
template <typename T>
void bucket_places(std::vector<T>& counts, std::size_t pieces, std::size_t buckets,
                   T* start = nullptr) {
  T run = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    if (start) start[b] = run;
    for (std::size_t q = 0; q < pieces; ++q) {
      const T c = counts[q * buckets + b];
      counts[q * buckets + b] = run;
      run += c;
    }
  }
  if (start) start[buckets] = run;
}

// True when s ends with suffix, ignoring ASCII case (file extensions).
bool has_suffix(const std::string& s, const std::string& suffix);

// Joins a thread when the scope ends (also when it ends by an exception).
struct JoinOnExit {
  std::thread& t;
  ~JoinOnExit() {
    if (t.joinable()) t.join();
  }
};

// ---- template definitions ---------------------------------------------------------------------

template <typename Fn>
void parallel_for(unsigned threads, std::size_t n, std::size_t grain, Fn&& fn) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  const std::size_t pieces = (n + grain - 1) / grain;
  if (threads <= 1 || pieces == 1) {
    throw_if_interrupted();
    fn(std::size_t{0}, n, 0u);
    return;
  }
  for_each_item(threads, pieces, [&](std::size_t piece, unsigned w) {
    throw_if_interrupted();
    const std::size_t lo = piece * grain;
    fn(lo, lo + grain < n ? lo + grain : n, w);
  });
}

template <typename Fn>
void parallel_count(unsigned threads, std::size_t items, std::uint32_t* counts, std::size_t n,
                    std::uint64_t budget, Fn&& fn) {
  constexpr std::size_t kGrain = std::size_t{1} << 16;
  if (threads <= 1 || items <= kGrain) {
    throw_if_interrupted();
    fn(std::size_t{0}, items, [counts](std::uint64_t v) { ++counts[v]; });
    return;
  }
  if (static_cast<std::uint64_t>(n) * 4 * threads > budget) {
    parallel_for(threads, items, kGrain, [&](std::size_t lo, std::size_t hi, unsigned) {
      fn(lo, hi,
         [counts](std::uint64_t v) { __atomic_fetch_add(&counts[v], 1u, __ATOMIC_RELAXED); });
    });
    return;
  }
  std::vector<BigBuffer<std::uint32_t>> local(threads);
  for (auto& l : local) {
    l.reserve(n + 1);
    l.resize(n);
  }
  parallel_for(threads, items, kGrain, [&](std::size_t lo, std::size_t hi, unsigned w) {
    std::uint32_t* c = local[w].data();
    fn(lo, hi, [c](std::uint64_t v) { ++c[v]; });
  });
  parallel_for(threads, n, kGrain, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t v = lo; v < hi; ++v) {
      std::uint32_t sum = counts[v];
      for (const auto& l : local) sum += l[v];
      counts[v] = sum;
    }
  });
}

}  // namespace tristream::conv
