// sort_rows.cpp — the row sorts (sort_rows.hpp) on the sorts' shared parts (sort_parts.hpp).
#include "sort_rows.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
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
                             std::uint32_t* fill, unsigned threads) {
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
  std::vector<std::uint64_t> at64, hist64, tmp, split, own;
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

// Step 4a for one bucket of cnt keys k (rows row0 + [0, R)): the keys taken out of k into the
// worker's scratch, after which k may be overwritten: up to kPartKeys keys (or one row) copied
// into s.own; more split by the top bits of their row into parts of about kPartKeys / 2 keys (a
// stable counting pass into s.split, the parts' starts in s.part), each of whose rows and
// columns then lie together in a core's cache.
void take_bucket(const std::uint64_t* k, std::size_t cnt, std::size_t R, RowScratch& s) {
  if (cnt <= kPartKeys || R == 1) {
    s.own.assign(k, k + cnt);
    return;
  }
  int d = 1;
  while ((cnt >> d) > kPartKeys / 2 && (std::size_t{1} << d) < R) ++d;
  const std::size_t P = std::size_t{1} << d;
  const int sh = __builtin_ctzll(R / P);
  const std::uint64_t row_mask = R - 1;
  s.part.assign(P + 1, 0);
  for (std::size_t i = 0; i < cnt; ++i) ++s.part[(((k[i] >> 32) & row_mask) >> sh) + 1];
  for (std::size_t x = 0; x < P; ++x) s.part[x + 1] += s.part[x];
  if (s.split.size() < cnt) s.split.resize(cnt);
  s.cur.assign(s.part.begin(), s.part.end() - 1);
  for (std::size_t i = 0; i < cnt; ++i) s.split[s.cur[((k[i] >> 32) & row_mask) >> sh]++] = k[i];
}

// Step 4b: the bucket taken by take_bucket (cnt keys) placed at its rows in out, part by part.
// Returns whether a row holds a column twice.
bool place_taken(std::size_t cnt, std::uint64_t row0, std::size_t R, int col_bits, RowScratch& s,
                 std::uint32_t* fill, std::uint32_t* out) {
  if (cnt <= kPartKeys || R == 1)
    return place_part(s.own.data(), cnt, row0, R, col_bits, s, fill, out);
  const std::size_t P = s.part.size() - 1, per = R / P;
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
                           std::uint32_t* fill, unsigned threads) {
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  TS_CHECK(rows_sortable(in.max_key, n), "wide row sort out of its range");
  // 1, 2. The slices, the top digit (in the row) and the histograms.
  const unsigned t = std::max(threads, 1u);
  const Plan p = make_plan(in, n, t);
  const std::size_t rows_per_bucket = std::size_t{1} << (p.shift - 32);
  // 3. Scatter the keys by their top digit into cols' own memory, 8 bytes each: each bucket
  //    holds whole rows.
  if (cols.capacity() < 2 * n + 2) cols.reserve(2 * n + 2);
  auto* const keys = reinterpret_cast<std::uint64_t*>(cols.data());
  scatter_spans_to(in, p, t, keys, cols.capacity() / 2, [](std::uint64_t x) { return x; });
  // 4. The buckets in order, each taken into a worker's scratch, then (in parts that fit a
  //    core's cache) sorted by column and its columns placed at their rows where the bucket
  //    starts, 4 bytes each, over the keys: bucket b's columns, bytes [4 first_b, 4 end_b),
  //    overlay the keys of the buckets j with 2 first_j < end_b (all of them j <= b), so they are
  //    written once those are taken.
  const std::size_t B = p.B;
  const std::vector<std::size_t>& start = p.bucket_start;
  std::unique_ptr<std::atomic<bool>[]> taken(new std::atomic<bool>[B]);
  for (std::size_t b = 0; b < B; ++b) taken[b].store(false, std::memory_order_relaxed);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> repeat{false}, stop{false};
  const int col_bits = col_bits_of(in.max_key);
  std::vector<RowScratch> scratch(t);
  for_each_item(t, t, [&](std::size_t, unsigned w) {
    RowScratch& s = scratch[w];
    std::size_t ready = 0;  // buckets [0, ready) are known to be taken
    try {
      for (;;) {
        const std::size_t b = next.fetch_add(1, std::memory_order_relaxed);
        if (b >= B || stop.load(std::memory_order_relaxed)) return;
        throw_if_interrupted();
        const std::size_t first = start[b], cnt = start[b + 1] - first;
        if (cnt) take_bucket(keys + first, cnt, rows_per_bucket, s);
        taken[b].store(true, std::memory_order_release);
        if (cnt == 0) continue;
        const std::size_t end = first + cnt;
        const std::size_t need = static_cast<std::size_t>(
            std::lower_bound(start.begin(), start.begin() + static_cast<std::ptrdiff_t>(B), end,
                             [](std::size_t x, std::size_t e) { return 2 * x < e; }) -
            start.begin());
        for (; ready < need; ++ready)
          while (!taken[ready].load(std::memory_order_acquire)) {
            if (stop.load(std::memory_order_relaxed)) return;
            std::this_thread::yield();
          }
        const std::uint64_t row0 = static_cast<std::uint64_t>(b) * rows_per_bucket;
        if (place_taken(cnt, row0, rows_per_bucket, col_bits, s, fill, cols.data() + first))
          repeat = true;
      }
    } catch (...) {
      stop = true;
      throw;
    }
  });
  TS_CHECK(!repeat, "duplicate oriented edges");
  // The keys' pages past the columns go back to the OS.
  cols.resize(n);
  cols.trim();
  return n;
}

std::size_t sort_rows(const SpanSortInput& in, BigBuffer<std::uint32_t>& cols, std::uint32_t* fill,
                      unsigned threads) {
  const int col_bits = col_bits_of(in.max_key);
  if (!rows_fit_narrow(in.max_key, col_bits)) return sort_rows_wide(in, cols, fill, threads);
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  if (cols.capacity() < n + 1) cols.reserve(n + 1);
  return sort_rows_narrow(in, col_bits, cols, fill, threads);
}

}  // namespace tristream::conv
