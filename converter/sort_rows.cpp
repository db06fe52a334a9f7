// sort_rows.cpp — the row sorts (sort_rows.hpp) on the sorts' shared parts (sort_parts.hpp).
#include "sort_rows.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "sort_parts.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {

using namespace sort_parts;

namespace {

// The bits of the columns of keys up to max_key (its low 32 bits).
int col_bits_of(std::uint64_t max_key) {
  const std::uint64_t max_col = max_key & 0xffffffffu;
  return max_col ? 64 - __builtin_clzll(max_col) : 0;
}

}  // namespace

bool rows_sortable(std::uint64_t max_key, std::size_t m) {
  return m >= kSmallSort && max_key && sort_shift(max_key) >= 32;
}

bool rows_fit_narrow(std::uint64_t max_key, int col_bits) {
  const int shift = sort_shift(max_key);
  return max_key && shift >= 32 && (shift - 32) + col_bits <= 32;
}

std::size_t sort_rows_narrow(const SpanSortInput& in, int col_bits, BigBuffer<std::uint32_t>& cols,
                             std::uint32_t* fill, unsigned threads, const RowsPlaced& placed) {
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  TS_CHECK(n >= kSmallSort && rows_fit_narrow(in.max_key, col_bits) && cols.capacity() >= n,
           "narrow row sort out of its range");
  // 1, 2. The slices, the top digit (in the row) and the histograms.
  const unsigned t = std::max(threads, 1u);
  const Plan p = make_plan(in, n, t);
  const int low = p.shift - 32;
  const std::uint64_t col_mask = (std::uint64_t{1} << col_bits) - 1;
  const std::uint64_t low_mask = (std::uint64_t{1} << low) - 1;
  // 3. Scatter as 32 bits: the row below the digit, then the column.
  scatter_spans(in, p, t, n, cols, [&](std::uint64_t x) {
    return static_cast<std::uint32_t>((((x >> 32) & low_mask) << col_bits) | (x & col_mask));
  });
  // 4. Each bucket sorted on its own, its rows counted, the row bits cleared.
  std::atomic<bool> repeat{false};
  std::vector<std::vector<std::uint32_t>> scratch(t);
  parallel_for(t, p.B, 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
    for (std::size_t b = lo; b < hi; ++b) {
      std::uint32_t* f = cols.data() + p.bucket_start[b];
      const std::size_t k = p.bucket_start[b + 1] - p.bucket_start[b];
      const std::uint32_t* sorted = radix_sort_low_bits(f, k, low + col_bits, scratch[w]);
      const std::uint64_t row0 = static_cast<std::uint64_t>(b) << low;
      bool twice = false;
      for (std::size_t i = 0; i < k; ++i) {
        const std::uint32_t x = sorted[i];
        twice |= i > 0 && x == sorted[i - 1];
        ++fill[row0 | (x >> col_bits)];
        f[i] = x & static_cast<std::uint32_t>(col_mask);
      }
      if (twice) repeat = true;
      if (placed) placed(row0, std::uint64_t{1} << low, p.bucket_start[b]);
    }
  });
  TS_CHECK(!repeat, "duplicate oriented edges");
  return n;
}

namespace {

// Keys of a bucket's part that sorts in a core's cache (the part, its scratch and its columns).
constexpr std::size_t kPartKeys = std::size_t{1} << 15;

// A worker's buffers for step 4 of sort_rows_wide.
struct RowScratch {
  std::vector<std::uint32_t> at32, hist32;
  std::vector<std::uint64_t> at64, hist64, tmp, split;
  std::vector<std::size_t> part, cur;
};

// Step 4 of sort_rows_wide for the keys k[0, cnt) of rows row0 + [0, R) (row0 a multiple of R, a
// power of two; columns below 2^col_bits): the keys sorted by column (LSD, one or two digits,
// through scratch and, with two, back into k), then placed at their rows in out by a stable
// counting sort on the row, so that every row's columns come out sorted; the rows counted into
// fill. Idx counts the keys. Returns whether a row holds a column twice.
template <typename Idx>
bool place_rows(std::uint64_t* k, std::size_t cnt, std::uint64_t row0, std::size_t R, int col_bits,
                std::vector<Idx>& at, std::vector<Idx>& hist, std::uint32_t* fill,
                std::uint32_t* out, std::vector<std::uint64_t>& scratch) {
  at.resize(R);
  const std::uint64_t row_mask = R - 1;
  const int b0 = col_bits <= 12 ? col_bits : col_bits / 2, b1 = col_bits - b0;
  const std::size_t D0 = std::size_t{1} << b0, D1 = std::size_t{1} << b1;
  const std::uint64_t m0 = D0 - 1, m1 = D1 - 1;
  // 1. The histograms of the column's digits and of the rows, in one pass.
  std::fill(at.begin(), at.end(), Idx{0});
  hist.assign(D0 + D1, Idx{0});
  Idx* const h0 = hist.data();
  Idx* const h1 = h0 + D0;
  for (std::size_t i = 0; i < cnt; ++i) {
    const std::uint64_t x = k[i];
    ++h0[x & m0];
    ++h1[(x >> b0) & m1];
    ++at[(x >> 32) & row_mask];
  }
  auto exclusive = [](Idx* h, std::size_t d) {
    Idx run = 0;
    for (std::size_t x = 0; x < d; ++x) {
      const Idx c = h[x];
      h[x] = run;
      run += c;
    }
  };
  for (std::size_t r = 0; r < R; ++r)
    if (at[r]) fill[row0 + r] = static_cast<std::uint32_t>(at[r]);  // (rows past n have none)
  exclusive(at.data(), R);
  // 2. By column: the low digit into scratch, the high digit (if any) back into k.
  exclusive(h0, D0);
  if (scratch.size() < cnt) scratch.resize(cnt);
  std::uint64_t* const tmp = scratch.data();
  for (std::size_t i = 0; i < cnt; ++i) tmp[h0[k[i] & m0]++] = k[i];
  const std::uint64_t* src = tmp;
  if (b1 > 0) {
    exclusive(h1, D1);
    for (std::size_t i = 0; i < cnt; ++i) k[h1[(tmp[i] >> b0) & m1]++] = tmp[i];
    src = k;
  }
  // 3. Stable by row, as 32-bit columns; a repeat lies next to its twin.
  for (std::size_t i = 0; i < cnt; ++i)
    out[at[(src[i] >> 32) & row_mask]++] = static_cast<std::uint32_t>(src[i]);
  bool twice = false;
  std::size_t begin = 0;
  for (std::size_t r = 0; r < R && begin < cnt; ++r) {
    const std::size_t end = at[r];
    for (std::size_t i = begin + 1; i < end; ++i) twice |= out[i] == out[i - 1];
    begin = end;
  }
  return twice;
}

bool place_part(std::uint64_t* k, std::size_t cnt, std::uint64_t row0, std::size_t R, int col_bits,
                RowScratch& s, std::uint32_t* fill, std::uint32_t* out) {
  if (cnt < (std::size_t{1} << 32))
    return place_rows(k, cnt, row0, R, col_bits, s.at32, s.hist32, fill, out, s.tmp);
  return place_rows(k, cnt, row0, R, col_bits, s.at64, s.hist64, fill, out, s.tmp);
}

// Step 4 for one bucket (rows row0 + [0, R)): more than kPartKeys keys are first split by the top
// bits of their row into parts of about kPartKeys / 2 keys (a stable counting pass into s.split),
// each part placed on its own in cache (its rows and its columns lie together). Returns whether a
// row holds a column twice.
bool place_bucket(std::uint64_t* k, std::size_t cnt, std::uint64_t row0, std::size_t R,
                  int col_bits, RowScratch& s, std::uint32_t* fill, std::uint32_t* out) {
  if (cnt <= kPartKeys || R == 1) return place_part(k, cnt, row0, R, col_bits, s, fill, out);
  int d = 1;
  while ((cnt >> d) > kPartKeys / 2 && (std::size_t{1} << d) < R) ++d;
  const std::size_t P = std::size_t{1} << d, per = R / P;
  const int sh = __builtin_ctzll(per);
  const std::uint64_t row_mask = R - 1;
  s.part.assign(P + 1, 0);
  for (std::size_t i = 0; i < cnt; ++i) ++s.part[(((k[i] >> 32) & row_mask) >> sh) + 1];
  for (std::size_t x = 0; x < P; ++x) s.part[x + 1] += s.part[x];
  if (s.split.size() < cnt) s.split.resize(cnt);
  s.cur.assign(s.part.begin(), s.part.end() - 1);
  for (std::size_t i = 0; i < cnt; ++i) s.split[s.cur[((k[i] >> 32) & row_mask) >> sh]++] = k[i];
  bool twice = false;
  for (std::size_t x = 0; x < P; ++x) {
    const std::size_t at = s.part[x], len = s.part[x + 1] - at;
    if (len)
      twice |=
          place_part(s.split.data() + at, len, row0 + x * per, per, col_bits, s, fill, out + at);
  }
  return twice;
}

}  // namespace

std::size_t sort_rows_wide(const SpanSortInput& in, BigBuffer<std::uint32_t>& cols,
                           std::uint32_t* fill, unsigned threads, const RowsPlaced& placed) {
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  TS_CHECK(rows_sortable(in.max_key, n) && cols.capacity() >= n, "wide row sort out of its range");
  // 1, 2. The slices, the top digit (in the row) and the histograms.
  const unsigned t = std::max(threads, 1u);
  const Plan p = make_plan(in, n, t);
  const std::size_t rows_per_bucket = std::size_t{1} << (p.shift - 32);
  // 3. Scatter the keys by their top digit: each bucket holds whole rows.
  BigBuffer<std::uint64_t> keys(n + 1);
  scatter_spans(in, p, t, n, keys, [](std::uint64_t x) { return x; });
  // 4. Each bucket, in parts that fit a core's cache: sorted by column, its columns placed at
  //    their rows of cols (where the bucket starts), its rows counted; then the bucket's keys'
  //    pages dropped (so that cols grows as the keys shrink).
  small_pages(cols.data(), cols.capacity() * sizeof(std::uint32_t));
  drop_pages(cols.data(), cols.capacity() * sizeof(std::uint32_t));
  cols.resize(n);
  std::atomic<bool> repeat{false};
  const int col_bits = col_bits_of(in.max_key);
  std::vector<RowScratch> scratch(t);
  parallel_for(t, p.B, 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
    for (std::size_t b = lo; b < hi; ++b) {
      const std::size_t first = p.bucket_start[b], cnt = p.bucket_start[b + 1] - first;
      const std::uint64_t row0 = static_cast<std::uint64_t>(b) * rows_per_bucket;
      if (cnt) {
        const bool twice = place_bucket(keys.data() + first, cnt, row0, rows_per_bucket, col_bits,
                                        scratch[w], fill, cols.data() + first);
        if (twice) repeat = true;
        drop_pages(keys.data() + first, cnt * sizeof(std::uint64_t));
      }
      if (placed) placed(row0, rows_per_bucket, first);
    }
  });
  TS_CHECK(!repeat, "duplicate oriented edges");
  return n;
}

std::size_t sort_rows(const SpanSortInput& in, BigBuffer<std::uint32_t>& cols, std::uint32_t* fill,
                      unsigned threads, const RowsPlaced& placed) {
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  if (cols.capacity() < n + 1) cols.reserve(n + 1);
  const int col_bits = col_bits_of(in.max_key);
  return rows_fit_narrow(in.max_key, col_bits)
             ? sort_rows_narrow(in, col_bits, cols, fill, threads, placed)
             : sort_rows_wide(in, cols, fill, threads, placed);
}

}  // namespace tristream::conv
