// sort.cpp — the parallel radix sort with repeats removed (sort.hpp, util.hpp), and the parts it
// shares with the row sorts (sort_parts.hpp).
#include "sort.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "sort_parts.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {
namespace {

// Digit windows over the varying bits: for each width from 8 to 12 bits, windows laid from the
// lowest varying bit up, each starting at the next varying bit above the last; the fewest
// windows win, then the narrowest width (smaller counters, fewer scatter targets). Returns the
// number of windows (shifts[0..]) and their width.
int digit_windows(std::uint64_t varying, int shifts[8], int& width) {
  int best = 0;
  for (int w = 12; w >= 8; --w) {
    int sh[8], passes = 0;
    for (std::uint64_t v = varying; v && passes < 8;) {
      const int at = __builtin_ctzll(v);
      sh[passes++] = at;
      v = at + w >= 64 ? 0 : v & ~((std::uint64_t{1} << (at + w)) - 1);
    }
    if (best == 0 || passes <= best) {
      best = passes;
      width = w;
      std::copy(sh, sh + passes, shifts);
    }
  }
  return best;
}

}  // namespace

namespace sort_parts {

// Keys per part that a core sorts in its cache (the part and its scratch, 8 bytes a key).
constexpr std::size_t kCachedSort = std::size_t{1} << 16;

// A large sort of several digits: one MSD pass on the top varying bits splits data[0..k) into
// parts of about kCachedSort / 2 keys (into scratch), each part is sorted on its own by the bits
// below (in cache) and copied back to data. Returns data.
template <typename T>
T* split_then_sort(T* data, std::size_t k, std::uint64_t varying, std::vector<T>& scratch) {
  const int top = 63 - __builtin_clzll(varying);
  int d = 1;
  while ((k >> d) > kCachedSort / 2 && d < 12) ++d;
  const int sh = std::max(0, top + 1 - d);
  const std::size_t D = std::size_t{1} << (top + 1 - sh);
  const T mask = static_cast<T>(D - 1);
  std::vector<std::size_t> at(D + 1, 0);
  for (std::size_t i = 0; i < k; ++i) ++at[((data[i] >> sh) & mask) + 1];
  for (std::size_t x = 0; x < D; ++x) at[x + 1] += at[x];
  if (scratch.size() < k) scratch.resize(k);
  std::vector<std::size_t> cur(at.begin(), at.end() - 1);
  for (std::size_t i = 0; i < k; ++i) scratch[cur[(data[i] >> sh) & mask]++] = data[i];
  thread_local std::vector<T> inner;
  for (std::size_t x = 0; x < D; ++x) {
    T* part = scratch.data() + at[x];
    const std::size_t len = at[x + 1] - at[x];
    const T* sorted = radix_sort_low_bits(part, len, sh, inner, false);
    std::copy(sorted, sorted + len, data + at[x]);
  }
  return data;
}

// Sorts data[0..k) by its low `bits` bits (the higher bits are equal): LSD radix whose digits
// of 8 to 12 bits cover only the bit positions that differ between the keys (packed keys leave
// runs of zero bits, e.g. between a column id and the row above it), so that a bucket of keys
// with 21 + 9 varying bits takes 3 passes, not 6; one pass over the keys takes the histograms of
// every digit. More than kCachedSort keys of 3 digits or more are split first (split_then_sort,
// unless !may_split). Returns where the sorted keys are: data, or scratch after an odd number of
// passes (the caller's next pass moves them back).
template <typename T>
T* radix_sort_low_bits(T* data, std::size_t k, int bits, std::vector<T>& scratch, bool may_split) {
  if (k < 256 || bits == 0 || k >= (std::size_t{1} << 32)) {
    std::sort(data, data + k);
    return data;
  }
  // 1. The varying bits, and digit windows over them.
  std::uint64_t any = 0, all = ~std::uint64_t{0};
  for (std::size_t i = 0; i < k; ++i) {
    any |= data[i];
    all &= data[i];
  }
  const std::uint64_t low = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t varying = (any ^ all) & low & static_cast<T>(~T{0});
  int shifts[8], width = 8;
  const int passes = digit_windows(varying, shifts, width);
  if (passes == 0) return data;
  if (may_split && passes >= 3 && k > kCachedSort)
    return split_then_sort(data, k, varying, scratch);
  // 2. The histograms of all digits in one pass, then one scatter per digit.
  const std::size_t D = std::size_t{1} << width;
  const T mask = static_cast<T>(D - 1);
  thread_local std::vector<std::uint32_t> hist;
  hist.assign(static_cast<std::size_t>(passes) * D, 0);
  std::uint32_t* const h = hist.data();
  for (std::size_t i = 0; i < k; ++i) {
    const T x = data[i];
    for (int p = 0; p < passes; ++p) ++h[p * D + ((x >> shifts[p]) & mask)];
  }
  if (scratch.size() < k) scratch.resize(k);
  T* src = data;
  T* dst = scratch.data();
  for (int p = 0; p < passes; ++p) {
    const int sh = shifts[p];
    std::uint32_t* const count = h + p * D;
    std::uint32_t run = 0;
    for (std::size_t d = 0; d < D; ++d) {
      const std::uint32_t x = count[d];
      count[d] = run;
      run += x;
    }
    for (std::size_t i = 0; i < k; ++i) {
      const T x = src[i];
      dst[count[(x >> sh) & mask]++] = x;
    }
    std::swap(src, dst);
  }
  return src;
}

template std::uint32_t* radix_sort_low_bits(std::uint32_t*, std::size_t, int,
                                            std::vector<std::uint32_t>&, bool);
template std::uint64_t* radix_sort_low_bits(std::uint64_t*, std::size_t, int,
                                            std::vector<std::uint64_t>&, bool);

}  // namespace sort_parts

namespace {

using namespace sort_parts;

// Up to this many threads the runs are joined by moving them inside the sort's buffer (one
// thread's memmove); more threads copy them into a second buffer in parallel, faster there than
// one thread even with that buffer's pages faulted in afresh.
constexpr unsigned kInPlaceThreads = 4;

// Buckets of up to this many keys (a hash table of twice as many slots fits a core's cache) are
// deduplicated by hashing when the order inside a run does not matter.
constexpr std::size_t kHashedBucket = std::size_t{1} << 16;

// Copies the keys of src[0..k) to dst without repeats by an open-addressing hash table (in
// `table`, 0 marking a free slot; the key 0 is tracked on its own), each key's first appearance,
// in order; dst may be src. Returns the keys kept.
std::size_t drop_repeats(const std::uint64_t* src, std::size_t k, std::uint64_t* dst,
                         std::vector<std::uint64_t>& table) {
  int log = 4;
  while ((std::size_t{1} << log) < 2 * k) ++log;
  const std::size_t mask = (std::size_t{1} << log) - 1;
  table.assign(mask + 1, 0);
  std::size_t kept = 0;
  bool zero = false;
  for (std::size_t i = 0; i < k; ++i) {
    const std::uint64_t x = src[i];
    if (x == 0) {
      if (!zero) dst[kept++] = 0;
      zero = true;
      continue;
    }
    std::size_t h = static_cast<std::size_t>((x * 0x9E3779B97F4A7C15ull) >> (64 - log));
    for (;; h = (h + 1) & mask) {
      if (table[h] == x) break;
      if (table[h] == 0) {
        table[h] = x;
        dst[kept++] = x;
        break;
      }
    }
  }
  return kept;
}

// The same for a bucket too large for a cached table: its keys are first grouped by a second
// hash (another multiplier: repeats land in one group) into groups of about kHashedBucket / 2
// keys (a stable counting pass into scratch), and each group loses its repeats on its own, written
// back to data group after group. The kept keys' order depends only on data's.
std::size_t drop_repeats_grouped(std::uint64_t* data, std::size_t k,
                                 std::vector<std::uint64_t>& scratch,
                                 std::vector<std::uint64_t>& table) {
  int bits = 1;
  while ((k >> bits) > kHashedBucket / 2 && bits < 16) ++bits;
  const std::size_t G = std::size_t{1} << bits;
  auto group = [bits](std::uint64_t x) {
    return static_cast<std::size_t>((x * 0xD6E8FEB86659FD93ull) >> (64 - bits));
  };
  std::vector<std::size_t> at(G + 1, 0);
  for (std::size_t i = 0; i < k; ++i) ++at[group(data[i]) + 1];
  for (std::size_t g = 0; g < G; ++g) at[g + 1] += at[g];
  if (scratch.size() < k) scratch.resize(k);
  std::vector<std::size_t> cur(at.begin(), at.end() - 1);
  for (std::size_t i = 0; i < k; ++i) scratch[cur[group(data[i])]++] = data[i];
  std::size_t kept = 0;
  for (std::size_t g = 0; g < G; ++g)
    kept += drop_repeats(scratch.data() + at[g], at[g + 1] - at[g], data + kept, table);
  return kept;
}

// Slices of consecutive spans of about equal keys, at most `threads`: slice s is the spans
// [first[s], first[s + 1]).
std::vector<std::size_t> slice_spans(const std::vector<KeySpan>& spans, std::size_t n,
                                     unsigned threads) {
  std::vector<std::size_t> first{0};
  std::size_t seen = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    seen += spans[i].count;
    const std::size_t s = first.size();  // the slice being filled ends past s * n / threads
    if (i + 1 < spans.size() && s < threads && seen * threads >= s * n) first.push_back(i + 1);
  }
  first.push_back(spans.size());
  return first;
}

SortedRuns sort_small(const SpanSortInput& in, std::size_t n, BigBuffer<std::uint64_t>& out) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < in.spans.size(); ++i) {
    const KeySpan& sp = in.spans[i];
    for (std::size_t j = 0; j < sp.count; ++j) {
      std::uint64_t k = sp.data[j];
      if (const std::uint32_t* rank = in.orient) {
        const std::uint64_t ra = rank[k >> 32], rb = rank[k & 0xffffffffu];
        k = ra < rb ? (ra << 32) | rb : (rb << 32) | ra;
      }
      out[at++] = k;
    }
    if (in.release) in.release(i);
  }
  out.resize(n);
  std::sort(out.begin(), out.end());
  SortedRuns r;
  r.total = static_cast<std::size_t>(std::unique(out.begin(), out.end()) - out.begin());
  if (r.total) {
    r.start.push_back(0);
    r.count.push_back(r.total);
    if (in.on_bucket) in.on_bucket(out.data(), r.total, 0);
  }
  return r;
}

}  // namespace

namespace sort_parts {

void drop_scattered(const SpanSortInput& in, const Plan& p, std::size_t s, std::size_t i,
                    std::uintptr_t* done) {
  constexpr std::uintptr_t kPiece = std::uintptr_t{2} << 20;
  if (!in.drop_read) return;
  const auto first = reinterpret_cast<std::uintptr_t>(in.spans[p.first[s]].data);
  const auto end = reinterpret_cast<std::uintptr_t>(in.spans[i].data + in.spans[i].count);
  if (*done == 0) *done = (first + kPiece - 1) / kPiece * kPiece;
  const std::uintptr_t to = end / kPiece * kPiece;
  if (to < *done + kPiece) return;
  drop_pages(reinterpret_cast<void*>(*done), to - *done);
  *done = to;
}

Plan make_plan(const SpanSortInput& in, std::size_t n, unsigned t) {
  Plan p;
  p.first = slice_spans(in.spans, n, t);
  p.slices = p.first.size() - 1;
  std::vector<std::uint64_t> slice_max(p.slices, in.max_key);
  if (!in.max_key)
    each_slice(p, t, [&](std::size_t s) {
      std::uint64_t m = 0;
      for (std::size_t i = p.first[s]; i < p.first[s + 1]; ++i)
        for (std::size_t j = 0; j < in.spans[i].count; ++j) m = std::max(m, in.spans[i].data[j]);
      slice_max[s] = m;
    });
  const std::uint64_t maxk = *std::max_element(slice_max.begin(), slice_max.end());
  TS_CHECK(maxk || !in.orient, "oriented keys need a bound");
  p.shift = sort_shift(maxk);
  const int bits = maxk ? 64 - __builtin_clzll(maxk) : 0;
  p.B = std::size_t{1} << (bits - p.shift);
  const std::size_t B = p.B;
  const int shift = p.shift;
  p.cursor.assign(p.slices * B, 0);
  each_slice(p, t, [&](std::size_t s) {
    std::size_t* h = p.cursor.data() + s * B;
    const std::uint32_t* const rank = in.orient;
    for (std::size_t i = p.first[s]; i < p.first[s + 1]; ++i) {
      std::uint64_t* k = in.spans[i].data;
      const std::size_t cnt = in.spans[i].count;
      if (rank) {
        // The rank of a key's second id some way ahead is fetched early (the first ids come
        // grouped by the earlier sort, their ranks in cache); the lower rank goes first without
        // a branch (either order is as likely).
        constexpr std::size_t kAhead = 32;
        for (std::size_t j = 0; j < cnt; ++j) {
          if (j + kAhead < cnt) __builtin_prefetch(rank + (k[j + kAhead] & 0xffffffffu));
          const std::uint64_t ra = rank[k[j] >> 32], rb = rank[k[j] & 0xffffffffu];
          const std::uint64_t flip =
              (ra ^ rb) & (std::uint64_t{0} - static_cast<std::uint64_t>(ra > rb));
          const std::uint64_t o = ((ra ^ flip) << 32) | (rb ^ flip);
          k[j] = o;
          ++h[o >> shift];
        }
      } else {
        for (std::size_t j = 0; j < cnt; ++j) ++h[k[j] >> shift];
      }
    }
  });
  p.bucket_start.assign(B + 1, 0);
  bucket_places(p.cursor, p.slices, B, p.bucket_start.data());
  return p;
}

}  // namespace sort_parts

int sort_shift(std::uint64_t max_key) {
  const int bits = max_key ? 64 - __builtin_clzll(max_key) : 0;
  return bits - std::min(bits, 12);
}

SortedRuns sort_unique_spans(const SpanSortInput& in, BigBuffer<std::uint64_t>& out,
                             unsigned threads) {
  std::size_t n = 0;
  for (const KeySpan& s : in.spans) n += s.count;
  TS_CHECK(out.capacity() >= n, "sort buffer too small");
  if (n < kSmallSort) return sort_small(in, n, out);
  // 1, 2. The slices, the top digit and the histograms.
  const unsigned t = std::max(threads, 1u);
  const Plan p = make_plan(in, n, t);
  const std::size_t B = p.B;
  const int shift = p.shift;
  const std::vector<std::size_t>& bucket_start = p.bucket_start;
  // 3. Scatter into out (small pages: those touched stay near the keys written); each span is
  //    released once scattered.
  scatter_spans(in, p, t, n, out, [](std::uint64_t x) { return x; });
  // 4. Each bucket sorted on its own (the higher bits are equal), repeats removed.
  SortedRuns r;
  r.start.assign(bucket_start.begin(), bucket_start.end() - 1);
  r.count.assign(B, 0);
  std::vector<std::vector<std::uint64_t>> scratch(t), tables(t);
  parallel_for(t, B, 1, [&](std::size_t lo, std::size_t hi, unsigned w) {
    for (std::size_t b = lo; b < hi; ++b) {
      std::uint64_t* f = out.data() + bucket_start[b];
      std::uint64_t* l = out.data() + bucket_start[b + 1];
      const std::size_t k = static_cast<std::size_t>(l - f);
      if (in.unordered && k <= kHashedBucket) {
        r.count[b] = drop_repeats(f, k, f, tables[w]);
      } else if (in.unordered) {
        r.count[b] = drop_repeats_grouped(f, k, scratch[w], tables[w]);
      } else {
        const std::uint64_t* sorted = radix_sort_low_bits(f, k, shift, scratch[w]);
        r.count[b] = static_cast<std::size_t>(
            (sorted == f ? std::unique(f, l) : std::unique_copy(sorted, sorted + k, f)) - f);
      }
      if (in.on_bucket && r.count[b]) in.on_bucket(f, r.count[b], w);
    }
  });
  for (std::size_t c : r.count) r.total += c;
  return r;
}

void join_runs(const SortedRuns& runs, BigBuffer<std::uint64_t>& out,
               BigBuffer<std::uint64_t>& keys, unsigned threads) {
  const std::size_t n = out.size(), m = runs.total, R = runs.start.size();
  // 1. Without repeats the runs already lie together: out's memory becomes keys'.
  if (m == n) {
    keys.swap(out);
    out.clear();
    keys.resize(m);
    return;
  }
  std::vector<std::size_t> to(R + 1, 0);
  for (std::size_t b = 0; b < R; ++b) to[b + 1] = to[b] + runs.count[b];
  // 2. Few threads: the runs move left inside out, in order (each only onto places already
  //    moved from), and out becomes keys: no fresh pages to fault in.
  if (threads <= kInPlaceThreads) {
    for (std::size_t b = 0; b < R; ++b)
      if (runs.count[b] && to[b] != runs.start[b])
        std::memmove(out.data() + to[b], out.data() + runs.start[b],
                     runs.count[b] * sizeof(std::uint64_t));
    drop_pages(out.data() + m, (n - m) * sizeof(std::uint64_t));
    keys.swap(out);
    out.clear();
    keys.resize(m);
    return;
  }
  // 3. More threads: copied into keys in parallel, out's pages dropped behind.
  TS_CHECK(keys.capacity() >= m, "sort buffer too small");
  parallel_for(threads, R, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t b = lo; b < hi; ++b) {
      if (runs.count[b])
        std::memcpy(keys.data() + to[b], out.data() + runs.start[b],
                    runs.count[b] * sizeof(std::uint64_t));
      const std::size_t end = b + 1 < R ? runs.start[b + 1] : n;
      drop_pages(out.data() + runs.start[b], (end - runs.start[b]) * sizeof(std::uint64_t));
    }
  });
  out.clear();
  keys.resize(m);
}

std::vector<KeySpan> key_spans(std::uint64_t* keys, std::size_t n, unsigned threads) {
  const unsigned t = std::max(threads, 1u);
  const std::size_t piece = std::clamp<std::size_t>((n + t - 1) / t, 1, std::size_t{1} << 21);
  std::vector<KeySpan> spans;
  for (std::size_t i = 0; i < n; i += piece) spans.push_back({keys + i, std::min(piece, n - i)});
  return spans;
}

void radix_sort_u64(std::uint64_t* data, std::size_t k, std::vector<std::uint64_t>& scratch) {
  const std::uint64_t* sorted = radix_sort_low_bits(data, k, 64, scratch);
  if (sorted != data) std::memcpy(data, sorted, k * sizeof(std::uint64_t));
}

std::size_t parallel_sort_unique_u64(BigBuffer<std::uint64_t>& keys, BigBuffer<std::uint64_t>& tmp,
                                     unsigned threads, std::uint64_t max_key) {
  const std::size_t n = keys.size();
  if (n < kSmallSort) {
    std::sort(keys.begin(), keys.end());
    keys.resize(static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin()));
    return keys.size();
  }
  TS_CHECK(tmp.capacity() >= n, "sort buffer too small");
  // The keys as spans, each one's pages dropped once scattered, so that keys and tmp together stay
  // near 8 bytes per key.
  SpanSortInput in;
  in.spans = key_spans(keys.data(), n, threads);
  in.max_key = max_key;
  in.drop_read = true;
  const SortedRuns runs = sort_unique_spans(in, tmp, threads);
  join_runs(runs, tmp, keys, threads);
  tmp.clear();
  return keys.size();
}

}  // namespace tristream::conv
