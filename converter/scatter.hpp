// scatter.hpp — converter internals: the radix scatter of the sorts through write-combining
// buffers. A scatter into thousands of buckets writes each key to another page, so that written
// one at a time nearly every key costs a TLB miss and a cache line read for ownership; here each
// bucket's keys gather in a cache-line buffer of their own (a few hundred KiB per worker, in L2)
// and go out a whole aligned line at a time (streaming stores where the target allows), the
// partial lines at a region's ends with plain stores. Every key lands where the plain scatter
// would put it: same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tristream::conv {

// Scatters keys of type T into out: the caller calls put(bucket, value) for each key in order
// (value goes to out[cursor[bucket]++]), then finish(). cursor holds B entries, each a region
// start owned by this scatter (no other writer touches [start, end of what is put)). out must be
// aligned to 64 bytes.
template <typename T>
class LineScatter {
 public:
  static constexpr std::size_t kLine = 64 / sizeof(T);  // keys per cache line

  LineScatter(T* out, std::size_t* cursor, std::size_t buckets)
      : out_(out), cursor_(cursor), start_(cursor, cursor + buckets) {
    buf_.resize(buckets * kLine + kLine);
    // The buffers aligned to a line, so that a full one goes out as one line.
    const auto at = reinterpret_cast<std::uintptr_t>(buf_.data());
    lines_ = buf_.data() + ((64 - at % 64) % 64) / sizeof(T);
  }

  void put(std::size_t b, T value) {
    const std::size_t c = cursor_[b]++;
    T* line = lines_ + b * kLine;
    line[c % kLine] = value;
    if (c % kLine == kLine - 1) flush(b, c + 1 - kLine, c + 1);
  }

  // Writes out the partial lines left in the buffers.
  void finish() {
    for (std::size_t b = 0; b < start_.size(); ++b) {
      const std::size_t c = cursor_[b];
      if (c % kLine) flush(b, c - c % kLine, c);
    }
#if defined(__SSE2__)
    _mm_sfence();  // the streaming stores seen before the workers join
#endif
  }

 private:
  // Writes slots [max(line, start) - line, end - line) of bucket b's buffer to out.
  void flush(std::size_t b, std::size_t line, std::size_t end) {
    const T* src = lines_ + b * kLine;
    const std::size_t lo = start_[b] > line ? start_[b] - line : 0;
#if defined(__SSE2__)
    if (lo == 0 && end - line == kLine) {
      __m128i* dst = reinterpret_cast<__m128i*>(out_ + line);
      const __m128i* s = reinterpret_cast<const __m128i*>(src);
      _mm_stream_si128(dst, _mm_load_si128(s));
      _mm_stream_si128(dst + 1, _mm_load_si128(s + 1));
      _mm_stream_si128(dst + 2, _mm_load_si128(s + 2));
      _mm_stream_si128(dst + 3, _mm_load_si128(s + 3));
      return;
    }
#endif
    std::memcpy(out_ + line + lo, src + lo, (end - line - lo) * sizeof(T));
  }

  T* out_;
  std::size_t* cursor_;
  std::vector<std::size_t> start_;
  std::vector<T> buf_;
  T* lines_ = nullptr;
};

}  // namespace tristream::conv
