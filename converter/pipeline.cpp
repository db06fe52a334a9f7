// pipeline.cpp — the conversion driver: parallel parsing, in-memory or out-of-core cleaning,
// ranking, orientation and the .tcsr writer.
//
// In memory (the parsed records, 16 bytes each, fit 7/10 of the limit): ids are compacted through
// a bitmap (dense ids) or a sorted id table (sparse ids), every edge becomes one 64-bit key
// (a << 32 | b, a < b), the keys are radix-partitioned and sorted in parallel, repeats removed.
//
// Out of core: past that, each parsed block is sorted by its worker, and groups of blocks are
// merged (in parallel over key ranges) into sorted runs on disk, in original 64-bit ids, repeats
// removed; the sorted set of all ids is kept (8 bytes per vertex). The runs are merged (in
// parallel over sampled key ranges, at most 64 runs at a time) into the unique edge stream,
// mapped to compact ids (a monotone map, so the order survives) and counted into degrees; the
// stream stays in memory if it fits, else goes to a spill file.
//
// Both paths then share the tail: rank by (degree, id), count the out-degrees of G+, and fill the
// rows of G+ one row range at a time (as many rows as fit the limit; one range when in memory;
// from a spill file the edges are first bucketed by range in one pass), sort each range's keys,
// and stream the rows into tcsr::Writer. The output is the same bytes either way.
//
// Per-vertex memory: about 48 bytes per vertex (ids 8, degree 4, rank 4, ranking keys and their
// sort buffer 16, out-degree 4 then offsets 8, permutation 8 handed to the writer). Out of core,
// the part alive while rows are written (32 bytes per vertex) is taken out of the limit before
// the row ranges are sized; the rest lies beyond the limit.
#include "pipeline.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/host_memory_policy.hpp"
#include "input.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::conv {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t resolve_memory_limit(const ConvertOptions& options) {
  if (options.memory_limit) return options.memory_limit;
  const std::uint64_t avail = available_host_memory();  // common/host_memory_policy.hpp
  return avail ? avail / 10 * 7 : (std::uint64_t{4} << 30);
}

std::size_t job_bytes(const ConvertOptions& options) {
  const std::uint64_t jobs = 2 * static_cast<std::uint64_t>(resolve_threads(options.threads)) + 2;
  const std::uint64_t b = resolve_memory_limit(options) / 32 / jobs;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(b, 64 << 10, 8 << 20));
}

namespace {

// TRISTREAM_CONVERT_TIMING=1 prints the seconds and the memory of each stage on stderr.
void stage_done(const char* what) {
  static const bool on = std::getenv("TRISTREAM_CONVERT_TIMING") != nullptr;
  static double last = now_seconds();
  if (!on) return;
  const double t = now_seconds();
  std::uint64_t rss = 0, hwm = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long v = 0;
      if (std::sscanf(line, "VmRSS: %llu", &v) == 1) rss = v;
      if (std::sscanf(line, "VmHWM: %llu", &v) == 1) hwm = v;
    }
    std::fclose(f);
  }
  std::fprintf(stderr, "[convert] %-28s %8.3f s  rss %6llu MiB  peak %6llu MiB\n", what, t - last,
               static_cast<unsigned long long>(rss >> 10),
               static_cast<unsigned long long>(hwm >> 10));
  last = t;
}

// ---- progress -------------------------------------------------------------------------------

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), t0_(now_seconds()) {}
  ~Progress() { clear(); }
  // done / total: input bytes, or generated edges when !bytes.
  void update(std::uint64_t done, std::uint64_t total, std::uint64_t edges, bool bytes) {
    if (!enabled_) return;
    const double t = now_seconds();
    if (t - last_ < 0.2) return;
    last_ = t;
    const double el = t - t0_;
    const double rate = el > 0 ? static_cast<double>(edges) / el : 0;
    char line[256];
    if (total > 0) {
      const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
      const int w = 24, fill = static_cast<int>(f * w);
      std::string bar(static_cast<std::size_t>(fill), '#');
      bar.resize(w, '.');
      const double eta = f > 0.001 ? el / f - el : 0;
      const double unit = bytes ? 1048576.0 : 1e6;
      std::snprintf(line, sizeof line, "\r[%s] %3.0f%% %.1f/%.1f %s  %.1f M edges/s  ETA %.0f s ",
                    bar.c_str(), f * 100, static_cast<double>(done) / unit,
                    static_cast<double>(total) / unit, bytes ? "MiB" : "M edges", rate / 1e6, eta);
    } else {
      std::snprintf(line, sizeof line, "\rread %.1f MiB  %llu edges  %.1f M edges/s ",
                    static_cast<double>(done) / 1048576.0, static_cast<unsigned long long>(edges),
                    rate / 1e6);
    }
    std::fputs(line, stderr);
    std::fflush(stderr);
    shown_ = true;
  }
  void stage(const char* what) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K%s ...", what);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!enabled_ || !shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  double t0_, last_ = 0;
  bool shown_ = false;
};

// ---- id compaction ----------------------------------------------------------------------------

// Maps original ids (a sorted set) to 0..n-1 monotonically. Dense sets use a bitmap with a
// rank per word; sparse ones a sorted table with a bucket index over the value range.
class IdMap {
 public:
  // From a bitmap of present ids (bit x set = id x present).
  void from_bitmap(BigBuffer<std::uint64_t> bits) {
    dense_ = true;
    bits_ = std::move(bits);
    const std::size_t W = bits_.size();
    word_rank_.reserve(W + 1);
    word_rank_.resize(W + 1);
    std::uint64_t run = 0;
    for (std::size_t w = 0; w < W; ++w) {
      word_rank_[w] = run;
      run += static_cast<std::uint64_t>(__builtin_popcountll(bits_[w]));
    }
    word_rank_[W] = run;
    n_ = run;
  }
  // From the sorted unique ids: a bitmap when it takes at most 16 bytes per id, else a bucket
  // index over the value range for the binary searches.
  void from_sorted(BigBuffer<std::uint64_t> ids) {
    ids_ = std::move(ids);
    n_ = ids_.size();
    if (n_ == 0) return;
    const std::uint64_t words = ids_[n_ - 1] / 64 + 1;
    if (ids_[n_ - 1] < (std::uint64_t{1} << 40) && words <= n_) {
      BigBuffer<std::uint64_t> bits(words);
      bits.resize(words);
      for (std::uint64_t x : ids_) bits[x >> 6] |= std::uint64_t{1} << (x & 63);
      from_bitmap(std::move(bits));
      return;
    }
    dense_ = false;
    const std::uint64_t lo = ids_[0], span = ids_[n_ - 1] - lo;
    int kbits = 1;
    while ((std::uint64_t{1} << kbits) < n_ / 4 && kbits < 30) ++kbits;
    shift_ = 0;
    while (shift_ < 64 && (span >> shift_) >= (std::uint64_t{1} << kbits)) ++shift_;
    const std::size_t nb = static_cast<std::size_t>((span >> shift_) + 2);
    index_.reserve(nb);
    index_.resize(nb);
    std::size_t pos = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      while (pos < n_ && ((ids_[pos] - lo) >> shift_) < b) ++pos;
      index_[b] = pos;
    }
  }
  std::uint64_t n() const { return n_; }
  std::uint64_t operator()(std::uint64_t x) const {
    if (dense_) {
      const std::uint64_t w = x >> 6;
      return word_rank_[w] + static_cast<std::uint64_t>(__builtin_popcountll(
                                 bits_[w] & ((std::uint64_t{1} << (x & 63)) - 1)));
    }
    const std::uint64_t b = (x - ids_[0]) >> shift_;
    const std::uint64_t* f =
        std::lower_bound(ids_.data() + index_[b], ids_.data() + index_[b + 1], x);
    return static_cast<std::uint64_t>(f - ids_.data());
  }
  // The sorted ids themselves (materialised from the bitmap for dense sets).
  BigBuffer<std::uint64_t>& ids() {
    if (dense_ && ids_.size() != n_) {
      ids_.reserve(n_ + 1);
      std::size_t k = 0;
      for (std::size_t w = 0; w < bits_.size(); ++w) {
        std::uint64_t word = bits_[w];
        while (word) {
          ids_[k++] = (static_cast<std::uint64_t>(w) << 6) +
                      static_cast<std::uint64_t>(__builtin_ctzll(word));
          word &= word - 1;
        }
      }
      ids_.resize(k);
    }
    return ids_;
  }

 private:
  bool dense_ = false;
  std::uint64_t n_ = 0;
  BigBuffer<std::uint64_t> bits_, word_rank_;
  BigBuffer<std::uint64_t> ids_;
  BigBuffer<std::uint64_t> index_;
  int shift_ = 0;
};

// ---- sorted streams and k-way merging -------------------------------------------------------

// A stretch of records in a spill file: [first, first + count) in units of records.
struct Segment {
  std::uint64_t first = 0, count = 0;
};

// A sorted run on disk: segments of one file read one after another through a buffer.
template <typename T>
class RunReader {
 public:
  RunReader(const TempFile& f, std::vector<Segment> segments, std::size_t buffer_records)
      : f_(f), segs_(std::move(segments)), buf_(std::max<std::size_t>(buffer_records, 16)) {
    fill();
  }
  bool valid() const { return pos_ < len_; }
  const T& head() const { return buf_[pos_]; }
  void advance() {
    if (++pos_ == len_) fill();
  }

 private:
  void fill() {
    pos_ = len_ = 0;
    while (seg_ < segs_.size() && next_ >= segs_[seg_].count) {
      ++seg_;
      next_ = 0;
    }
    if (seg_ == segs_.size()) return;
    const Segment& s = segs_[seg_];
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), s.count - next_));
    const std::size_t got =
        f_.read_at((s.first + next_) * sizeof(T), buf_.data(), want * sizeof(T));
    TS_CHECK(got == want * sizeof(T), "spill file shorter than written");
    len_ = want;
    next_ += want;
  }
  const TempFile& f_;
  std::vector<Segment> segs_;
  std::size_t seg_ = 0;
  std::uint64_t next_ = 0;  // records read from the current segment
  std::vector<T> buf_;
  std::size_t pos_ = 0, len_ = 0;
};

// An in-memory sorted span as a stream.
template <typename T>
struct SpanReader {
  const T* p;
  const T* end;
  bool valid() const { return p < end; }
  const T& head() const { return *p; }
  void advance() { ++p; }
};

// Merges sorted streams, calling out(value) once per distinct value, in order. A binary heap of
// the stream heads; the smallest is replaced in place by its stream's next value (one sift-down
// per value).
template <typename T, typename Stream, typename Out>
void merge_unique(std::vector<Stream*>& streams, Out&& out) {
  struct Item {
    T value;
    Stream* stream;
  };
  std::vector<Item> heap;
  for (Stream* s : streams)
    if (s->valid()) heap.push_back({s->head(), s});
  auto sift_down = [&](std::size_t i) {
    const std::size_t k = heap.size();
    const Item x = heap[i];
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= k) break;
      if (c + 1 < k && heap[c + 1].value < heap[c].value) ++c;
      if (!(heap[c].value < x.value)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = x;
  };
  for (std::size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  bool have = false;
  T last{};
  while (!heap.empty()) {
    Item& top = heap[0];
    if (!have || !(top.value == last)) {
      out(top.value);
      last = top.value;
      have = true;
    }
    top.stream->advance();
    if (top.stream->valid()) {
      top.value = top.stream->head();
    } else {
      top = heap.back();
      heap.pop_back();
      if (heap.empty()) break;
    }
    sift_down(0);
  }
}

// Buffered writes of consecutive records to a TempFile, from record `first` on.
template <typename T>
class RunWriter {
 public:
  RunWriter(TempFile& f, std::size_t buffer_records, std::uint64_t first = 0)
      : f_(f), first_(first) {
    buf_.reserve(buffer_records);
  }
  void push(const T& v) {
    buf_.push_back(v);
    if (buf_.size() == buf_.capacity()) flush();
  }
  void flush() {
    if (!buf_.empty())
      f_.write_at((first_ + written_) * sizeof(T), buf_.data(), buf_.size() * sizeof(T));
    written_ += buf_.size();
    buf_.clear();
  }
  std::uint64_t count() const { return written_ + buf_.size(); }
  Segment segment() const { return Segment{first_, count()}; }

 private:
  TempFile& f_;
  std::uint64_t first_, written_ = 0;
  std::vector<T> buf_;
};

struct Run {
  std::unique_ptr<TempFile> file;
  std::vector<Segment> segments;  // sorted one after another
  std::uint64_t edges = 0;

  // Record i of the run (its segments laid end to end).
  Edge64 at(std::uint64_t i) const {
    for (const Segment& g : segments) {
      if (i < g.count) {
        Edge64 e;
        TS_CHECK(file->read_at((g.first + i) * sizeof(Edge64), &e, sizeof e) == sizeof e,
                 "spill file shorter than written");
        return e;
      }
      i -= g.count;
    }
    TS_CHECK(false, "run index out of range");
    return Edge64{};
  }
  // The first index whose record is not below key.
  std::uint64_t lower_bound(const Edge64& key) const {
    std::uint64_t lo = 0, hi = edges;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (at(mid) < key)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  // Records [lo, hi) as segments.
  std::vector<Segment> slice(std::uint64_t lo, std::uint64_t hi) const {
    std::vector<Segment> out;
    std::uint64_t base = 0;
    for (const Segment& g : segments) {
      const std::uint64_t a = std::max(lo, base), b = std::min(hi, base + g.count);
      if (a < b) out.push_back(Segment{g.first + (a - base), b - a});
      base += g.count;
    }
    return out;
  }
};

// Splits the merge of sorted spans into `parts` independent merges over key ranges (splitters
// taken from the longest span); equal keys always land in the same part. first[p] is the number
// of input records before part p (where its output may start in a buffer of the input size).
template <typename T>
struct MergePlan {
  std::vector<std::vector<SpanReader<T>>> parts;
  std::vector<std::uint64_t> first;
};

template <typename T>
MergePlan<T> plan_merge(const std::vector<SpanReader<T>>& spans, std::size_t parts) {
  MergePlan<T> plan;
  const SpanReader<T>* longest = nullptr;
  for (const auto& s : spans)
    if (!longest || s.end - s.p > longest->end - longest->p) longest = &s;
  const std::size_t len = longest ? static_cast<std::size_t>(longest->end - longest->p) : 0;
  if (len < parts * 64) parts = 1;
  std::vector<T> split;  // split[p] = first key of part p (p >= 1)
  for (std::size_t p = 1; p < parts; ++p) split.push_back(longest->p[len * p / parts]);
  plan.parts.resize(parts);
  plan.first.assign(parts + 1, 0);
  for (const auto& s : spans) {
    const T* lo = s.p;
    for (std::size_t p = 0; p < parts; ++p) {
      const T* hi = p + 1 < parts ? std::lower_bound(lo, s.end, split[p]) : s.end;
      if (hi > lo) plan.parts[p].push_back({lo, hi});
      plan.first[p + 1] += static_cast<std::uint64_t>(hi - lo);
      lo = hi;
    }
  }
  for (std::size_t p = 0; p < parts; ++p) plan.first[p + 1] += plan.first[p];
  return plan;
}

// ---- the tail: rank, orient, fill rows, write -------------------------------------------------

// Unique compact edge keys (a << 32 | b, a < b), in memory or in segments of a spill file,
// read in blocks (in key order).
struct KeySource {
  BigBuffer<std::uint64_t>* mem = nullptr;  // rewritten in place by write_graph
  const TempFile* file = nullptr;
  std::vector<Segment> segments;
  std::uint64_t count = 0;
  template <typename Fn>
  void for_each_block(std::size_t block, Fn&& fn) const {
    if (mem) {
      for (std::uint64_t i = 0; i < count; i += block)
        fn(mem->data() + i, static_cast<std::size_t>(std::min<std::uint64_t>(block, count - i)));
      return;
    }
    BigBuffer<std::uint64_t> buf(block);
    for (const Segment& g : segments)
      for (std::uint64_t i = 0; i < g.count; i += block) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(block, g.count - i));
        const std::size_t got = file->read_at((g.first + i) * 8, buf.data(), k * 8);
        TS_CHECK(got == k * 8, "spill file shorter than written");
        fn(buf.data(), k);
      }
  }
};

struct TailResult {
  std::uint64_t n = 0, max_degree = 0, max_out_degree = 0;
};

TailResult write_graph(const KeySource& src, std::uint64_t n, BigBuffer<std::uint32_t>& degree,
                       IdMap& idmap, const std::string& output, const ConvertOptions& options,
                       std::uint64_t limit, const std::string& tmp_dir, unsigned threads,
                       Progress& progress) {
  TailResult res;
  res.n = n;
  const std::uint64_t m = src.count;
  progress.stage("ranking vertices");
  // 1. Rank by (degree, id): sort (degree << 32 | id).
  BigBuffer<std::uint32_t> rank(n + 1);
  std::vector<orig_id_t> perm(n);
  {
    BigBuffer<std::uint64_t> key(n + 1), tmp(n + 1);
    key.resize(n);
    std::vector<std::uint64_t> part_max(threads, 0);
    parallel_for(threads, n, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned w) {
      for (std::size_t v = lo; v < hi; ++v) {
        key[v] = (static_cast<std::uint64_t>(degree[v]) << 32) | v;
        part_max[w] = std::max<std::uint64_t>(part_max[w], degree[v]);
      }
    });
    for (auto x : part_max) res.max_degree = std::max(res.max_degree, x);
    parallel_sort_unique_u64(key, tmp, threads);
    TS_CHECK(key.size() == n, "rank keys lost");
    const BigBuffer<std::uint64_t>& ids = idmap.ids();
    parallel_for(threads, n, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t r = lo; r < hi; ++r) {
        const std::uint32_t v = static_cast<std::uint32_t>(key[r]);
        rank[v] = static_cast<std::uint32_t>(r);
        perm[r] = ids[v];
      }
    });
  }
  idmap = IdMap();
  degree.release();
  stage_done("rank");

  // 2. Orient: each key becomes (row << 32 | col) with row = the lower rank. In memory the keys
  //    are rewritten in place; from a spill file the out-degrees come first, to cut the rows
  //    into ranges whose keys fit the limit (16 bytes per edge while sorting).
  progress.stage("orienting edges");
  const std::size_t kBlock = std::size_t{1} << 22;
  auto orient = [&](std::uint64_t k) {
    const std::uint64_t ra = rank[k >> 32], rb = rank[k & 0xffffffffu];
    return ra < rb ? (ra << 32) | rb : (rb << 32) | ra;
  };
  BigBuffer<std::uint32_t> fill(n + 1);  // out-degree per row
  fill.resize(n);
  BigBuffer<std::uint64_t> buf, tmp;
  if (src.mem) {
    BigBuffer<std::uint64_t>& keys = *src.mem;
    parallel_for(threads, m, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i) {
        keys[i] = orient(keys[i]);
        __atomic_fetch_add(&fill[keys[i] >> 32], 1u, __ATOMIC_RELAXED);
      }
    });
  } else {
    src.for_each_block(kBlock, [&](const std::uint64_t* k, std::size_t cnt) {
      parallel_for(threads, cnt, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t i = lo; i < hi; ++i)
          __atomic_fetch_add(&fill[orient(k[i]) >> 32], 1u, __ATOMIC_RELAXED);
      });
    });
  }
  std::vector<eid_t> offsets(n + 1, 0);
  for (std::uint64_t r = 0; r < n; ++r) {
    offsets[r + 1] = offsets[r] + fill[r];
    res.max_out_degree = std::max<std::uint64_t>(res.max_out_degree, fill[r]);
  }
  fill.release();
  TS_CHECK(offsets[n] == m, "out-degrees do not add up");
  stage_done("orient");

  // 3. Rows range by range (one range in memory): gather the range's keys, sort them (rows in
  //    order, each row sorted), take the columns and stream the rows into the writer.
  tcsr::WriteOptions wo = options.write;
  if (wo.threads == 0) wo.threads = threads;
  tcsr::Writer writer(output, n, wo);
  writer.set_permutation(std::move(perm));
  writer.set_max_degree(res.max_degree);
  // Out of core, the per-vertex arrays alive while rows are filled (rank 4, out-degrees 4,
  // offsets 8, the writer's offsets 8 and permutation 8 bytes per vertex) come out of the limit
  // first; the row ranges' keys and their sort buffer (16 bytes per edge) get the rest.
  const std::uint64_t per_vertex_bytes = 32 * (n + 1);
  const std::uint64_t range_room = limit > per_vertex_bytes ? limit - per_vertex_bytes : 0;
  const std::uint64_t range_edges = std::max<std::uint64_t>(range_room / 16, 1 << 16);
  // The row ranges: [range_start[i], range_start[i + 1]), each at most range_edges edges (or one
  // row); a single range in memory.
  std::vector<std::uint64_t> range_start{0};
  while (range_start.back() < n) {
    const std::uint64_t r0 = range_start.back();
    std::uint64_t r1 = n;
    if (!src.mem) {
      r1 = static_cast<std::uint64_t>(
               std::upper_bound(offsets.begin() + static_cast<std::ptrdiff_t>(r0 + 1),
                                offsets.end(), offsets[r0] + range_edges) -
               offsets.begin()) -
           1;
      if (r1 <= r0) r1 = r0 + 1;
    }
    range_start.push_back(r1);
  }
  const std::size_t ranges = range_start.size() - 1;
  // From a spill file with several ranges: one pass orients every key into the region of a
  // bucket file that its range owns (edges [offsets[r0], offsets[r1]) of G+).
  std::unique_ptr<TempFile> buckets;
  if (!src.mem && ranges > 1) {
    buckets = std::make_unique<TempFile>(tmp_dir);
    std::vector<std::unique_ptr<RunWriter<std::uint64_t>>> w;
    const std::size_t per = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(limit / 4 / 8 / ranges, 512, std::uint64_t{1} << 19));
    for (std::size_t i = 0; i < ranges; ++i)
      w.push_back(
          std::make_unique<RunWriter<std::uint64_t>>(*buckets, per, offsets[range_start[i]]));
    src.for_each_block(kBlock, [&](const std::uint64_t* k, std::size_t cnt) {
      for (std::size_t i = 0; i < cnt; ++i) {
        const std::uint64_t o = orient(k[i]);
        const std::size_t r = static_cast<std::size_t>(
            std::upper_bound(range_start.begin(), range_start.end(), o >> 32) -
            range_start.begin() - 1);
        w[r]->push(o);
      }
    });
    for (auto& x : w) x->flush();
    stage_done("bucket rows");
  }
  for (std::size_t ri = 0; ri < ranges; ++ri) {
    const std::uint64_t r0 = range_start[ri], r1 = range_start[ri + 1];
    const eid_t base = offsets[r0], range_m = offsets[r1] - base;
    BigBuffer<std::uint64_t>* keys = src.mem;
    if (!src.mem) {
      if (buf.capacity() < range_m + 1) buf.reserve(range_m + 1);
      buf.resize(range_m);
      if (buckets) {
        TS_CHECK(buckets->read_at(base * 8, buf.data(), range_m * 8) == range_m * 8,
                 "bucket file shorter than written");
      } else {
        std::uint64_t filled = 0;
        src.for_each_block(kBlock, [&](const std::uint64_t* k, std::size_t cnt) {
          for (std::size_t i = 0; i < cnt; ++i) buf[filled++] = orient(k[i]);
        });
        TS_CHECK(filled == range_m, "range lost edges");
      }
      keys = &buf;
    }
    progress.stage("sorting rows");
    if (tmp.capacity() < range_m + 1) tmp.reserve(range_m + 1);
    parallel_sort_unique_u64(*keys, tmp, threads);
    TS_CHECK(keys->size() == range_m, "duplicate oriented edges");
    // The columns, packed into the sort buffer's memory.
    vid_t* cols = reinterpret_cast<vid_t*>(tmp.data());
    parallel_for(threads, range_m, 1 << 18, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i) cols[i] = static_cast<vid_t>((*keys)[i]);
    });
    stage_done("sort rows");
    progress.stage("compressing and writing");
    for (std::uint64_t r = r0; r < r1; ++r)
      writer.append_row(cols + (offsets[r] - base), offsets[r + 1] - offsets[r]);
  }
  writer.finish();
  stage_done("write");
  return res;
}

// ---- the driver ---------------------------------------------------------------------------------

class Driver {
 public:
  Driver(Producer& p, const std::string& output, const ConvertOptions& o)
      : producer_(p), output_(output), options_(o), progress_(!o.quiet && ::isatty(2)) {
    threads_ = resolve_threads(o.threads);
    // The .tcsr writer holds a batch of chunks (64 MiB raw) with their compressed frames and a
    // chunk per worker; that comes out of the limit too (at most half of it).
    const std::uint64_t limit = resolve_memory_limit(o);
    const std::uint64_t writer = 2 * (std::uint64_t{64} << 20) + 2 * threads_ * o.write.chunk_bytes;
    limit_ = limit > 2 * writer ? limit - writer : limit / 2;
    const auto slash = output.find_last_of('/');
    const std::string out_dir =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : output.substr(0, slash));
    tmp_dir_ = o.tmp_dir.empty() ? out_dir : o.tmp_dir;
    // Fail before the work, not after it.
    for (const std::string& dir : {out_dir, tmp_dir_})
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw Error(ErrorKind::Input, dir + ": cannot write there: " + std::strerror(errno));
  }

  ConvertSummary run(double start) {
    stage_done("start");
    parse_all();
    producer_.finish(records_, lines_);
    stage_done("parse");
    summary_.input_edges = records_;
    summary_.self_loops = loops_;
    summary_.input_bytes = producer_.input_bytes();
    std::uint64_t m = 0;
    TailResult tail;
    if (!spilling_ && in_memory_fits()) {
      tail = finish_in_memory(m);
    } else {
      if (!spilling_) start_spilling();
      spill_run();
      tail = finish_out_of_core(m);
    }
    summary_.vertices = tail.n;
    summary_.edges = m;
    summary_.duplicates = records_ - loops_ - m;
    summary_.max_degree = tail.max_degree;
    summary_.max_out_degree = tail.max_out_degree;
    summary_.out_of_core = spilling_;
    progress_.clear();
    struct stat st {};
    if (::stat(output_.c_str(), &st) == 0)
      summary_.output_bytes = static_cast<std::uint64_t>(st.st_size);
    try {
      tcsr::Reader r(output_);
      for (const auto& c : r.chunks()) {
        summary_.raw_adjacency_bytes += c.raw_size;
        summary_.compressed_adjacency_bytes += c.compressed_size;
      }
    } catch (const Error&) {
    }
    summary_.seconds = now_seconds() - start;
    return summary_;
  }

 private:
  // ---- parsing: reader thread -> workers -> this thread, in input order ----
  void parse_all() {
    const std::size_t window = 2 * static_cast<std::size_t>(threads_) + 2;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<std::uint64_t, std::function<void(Block&)>>> jobs;
    std::map<std::uint64_t, std::unique_ptr<Block>> done;
    std::uint64_t produced = 0, consumed = 0;
    bool reader_done = false, abort = false;
    std::exception_ptr reader_error;

    std::thread reader([&] {
      try {
        for (;;) {
          {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [&] { return abort || produced - consumed < window; });
            if (abort) break;
          }
          auto job = producer_.next();
          std::lock_guard<std::mutex> lk(mu);
          if (!job) break;
          jobs.emplace_back(produced++, std::move(job));
          cv.notify_all();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        reader_error = std::current_exception();
      }
      std::lock_guard<std::mutex> lk(mu);
      reader_done = true;
      cv.notify_all();
    });
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < threads_; ++w)
      workers.emplace_back([&] {
        for (;;) {
          std::pair<std::uint64_t, std::function<void(Block&)>> job;
          {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [&] { return abort || !jobs.empty() || reader_done; });
            if (abort || jobs.empty()) return;
            job = std::move(jobs.front());
            jobs.pop_front();
          }
          auto b = std::make_unique<Block>();
          try {
            job.second(*b);
            if (spill_flag_.load(std::memory_order_relaxed) && !b->error) sort_block(*b);
            b->sorted = spill_flag_.load(std::memory_order_relaxed) && !b->error;
          } catch (...) {
            b->failure = std::current_exception();
          }
          std::lock_guard<std::mutex> lk(mu);
          done.emplace(job.first, std::move(b));
          cv.notify_all();
        }
      });
    auto stop = [&] {
      {
        std::lock_guard<std::mutex> lk(mu);
        abort = true;
        cv.notify_all();
      }
      reader.join();
      for (auto& t : workers) t.join();
    };
    try {
      for (std::uint64_t s = 0;; ++s) {
        std::unique_ptr<Block> b;
        {
          std::unique_lock<std::mutex> lk(mu);
          cv.wait(lk, [&] { return done.count(s) || (reader_done && s == produced); });
          if (!done.count(s)) break;
          b = std::move(done[s]);
          done.erase(s);
          consumed = s + 1;
          cv.notify_all();
        }
        take(*b);
        progress_.update(producer_.done(), producer_.total(), records_,
                         producer_.input_bytes() > 0);
      }
    } catch (...) {
      stop();
      throw;
    }
    stop();
    if (reader_error) {
      try {
        std::rethrow_exception(reader_error);
      } catch (const StreamError& e) {
        throw input_error(producer_.name(), producer_.first_line() + lines_ + 1, e.what());
      }
    }
  }

  // One block, in input order.
  void take(Block& b) {
    if (b.failure) std::rethrow_exception(b.failure);
    producer_.check(b, records_);
    if (b.error)
      throw input_error(producer_.name(), producer_.first_line() + lines_ + b.error_line,
                        b.error_msg);
    records_ += b.records;
    loops_ += b.loops;
    lines_ += b.lines;
    max_id_ = std::max(max_id_, b.max_id);
    b.text.reset();
    if (b.edges.empty()) return;
    b.edges.trim();
    held_records_ += b.edges.size();
    held_bytes_ += b.edges.size() * sizeof(Edge64) + b.ids.size() * 8;
    held_.push_back(std::make_unique<Block>(std::move(b)));
    // In memory up to 7/10 of the limit: the switch needs a fifth more (see start_spilling), and
    // the jobs in flight and the spill buffers the rest.
    if (!spilling_ && held_records_ * sizeof(Edge64) > limit_ / 10 * 7) start_spilling();
    if (spilling_ && held_bytes_ > limit_ / 2) spill_run();
  }

  bool dense_ids() const {
    const std::uint64_t words = max_id_ / 64 + 1;
    return max_id_ < (std::uint64_t{1} << 40) &&
           words * 16 <= std::max<std::uint64_t>(limit_ / 4, std::uint64_t{64} << 20);
  }
  bool in_memory_fits() const {
    return held_records_ * (dense_ids() ? 16 : 48) <= std::max<std::uint64_t>(limit_, 1);
  }

  // Switches to out-of-core conversion: from now on workers sort their blocks, and the blocks
  // held so far are sorted and spilled in groups of a fifth of the limit, so that the ids a sort
  // adds (up to 16 bytes per edge) never take memory beyond the limit.
  void start_spilling() {
    spilling_ = true;
    spill_flag_ = true;
    progress_.stage("sorting blocks for out-of-core conversion");
    std::vector<std::unique_ptr<Block>> rest = std::move(held_);
    held_.clear();
    held_bytes_ = held_records_ = 0;
    std::size_t i = 0;
    while (i < rest.size()) {
      std::size_t j = i;
      std::uint64_t bytes = 0;
      while (j < rest.size() &&
             (j == i || bytes + rest[j]->edges.size() * sizeof(Edge64) <= limit_ / 5))
        bytes += rest[j++]->edges.size() * sizeof(Edge64);
      parallel_for(threads_, j - i, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t k = i + lo; k < i + hi; ++k)
          if (!rest[k]->sorted) {
            sort_block(*rest[k]);
            rest[k]->sorted = true;
          }
      });
      for (; i < j; ++i) {
        held_records_ += rest[i]->edges.size();
        held_bytes_ += rest[i]->edges.size() * sizeof(Edge64) + rest[i]->ids.size() * 8;
        held_.push_back(std::move(rest[i]));
      }
      if (held_bytes_ > limit_ / 2) spill_run();
    }
  }

  std::size_t io_records(std::size_t streams, std::size_t record_bytes) const {
    // All the buffers of one merge together take a sixteenth of the limit.
    const std::uint64_t per = limit_ / 16 / std::max<std::size_t>(streams, 1) / record_bytes;
    return static_cast<std::size_t>(
        std::clamp<std::uint64_t>(per, 4096 / record_bytes, (4u << 20) / record_bytes));
  }

  // Merges the held (sorted) blocks into one run on disk and their ids into the id set.
  void spill_run() {
    for (auto& b : held_)
      if (!b->sorted) {
        sort_block(*b);
        b->sorted = true;
      }
    if (held_.empty()) return;
    // Both merges run in parallel over key ranges. Edges: each range writes its own segment of
    // the run file, placed by the input counts (its output can only be shorter).
    auto run = std::make_unique<Run>();
    run->file = std::make_unique<TempFile>(tmp_dir_);
    {
      std::vector<SpanReader<Edge64>> spans;
      for (auto& b : held_) spans.push_back({b->edges.begin(), b->edges.end()});
      MergePlan<Edge64> plan = plan_merge(spans, threads_);
      const std::size_t P = plan.parts.size();
      run->segments.resize(P);
      parallel_for(threads_, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t p = lo; p < hi; ++p) {
          std::vector<SpanReader<Edge64>*> ptrs;
          for (auto& s : plan.parts[p]) ptrs.push_back(&s);
          RunWriter<Edge64> w(*run->file, io_records(P, sizeof(Edge64)), plan.first[p]);
          merge_unique<Edge64>(ptrs, [&](const Edge64& e) { w.push(e); });
          w.flush();
          run->segments[p] = w.segment();
        }
      });
      for (const Segment& g : run->segments) run->edges += g.count;
    }
    {
      // Ids: each range merges into its place in a buffer of the input size, then the ranges
      // are packed together.
      std::vector<SpanReader<std::uint64_t>> spans;
      spans.push_back({ids_.begin(), ids_.end()});
      for (auto& b : held_) spans.push_back({b->ids.begin(), b->ids.end()});
      MergePlan<std::uint64_t> plan = plan_merge(spans, threads_);
      const std::size_t P = plan.parts.size();
      BigBuffer<std::uint64_t> merged(plan.first[P] + 1);
      std::vector<std::uint64_t> count(P, 0);
      parallel_for(threads_, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t p = lo; p < hi; ++p) {
          std::vector<SpanReader<std::uint64_t>*> ptrs;
          for (auto& s : plan.parts[p]) ptrs.push_back(&s);
          std::uint64_t* out = merged.data() + plan.first[p];
          merge_unique<std::uint64_t>(ptrs, [&](std::uint64_t x) { *out++ = x; });
          count[p] = static_cast<std::uint64_t>(out - (merged.data() + plan.first[p]));
        }
      });
      std::uint64_t n = 0;
      for (std::size_t p = 0; p < P; ++p) {
        std::memmove(merged.data() + n, merged.data() + plan.first[p], count[p] * 8);
        n += count[p];
      }
      merged.resize(n);
      merged.trim();
      ids_ = std::move(merged);
    }
    held_.clear();
    held_bytes_ = held_records_ = 0;
    runs_.push_back(std::move(run));
  }

  TailResult finish_in_memory(std::uint64_t& m_out) {
    progress_.stage("compacting ids");
    IdMap idmap;
    if (dense_ids()) {
      const std::size_t W = static_cast<std::size_t>(max_id_ / 64 + 1);
      BigBuffer<std::uint64_t> bits(W);
      bits.resize(W);
      parallel_for(threads_, held_.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t i = lo; i < hi; ++i)
          for (const Edge64& e : held_[i]->edges) {
            __atomic_fetch_or(&bits[e.a >> 6], std::uint64_t{1} << (e.a & 63), __ATOMIC_RELAXED);
            __atomic_fetch_or(&bits[e.b >> 6], std::uint64_t{1} << (e.b & 63), __ATOMIC_RELAXED);
          }
      });
      idmap.from_bitmap(std::move(bits));
    } else {
      BigBuffer<std::uint64_t> ends(2 * held_records_ + 1), tmp(2 * held_records_ + 1);
      std::vector<std::size_t> at(held_.size() + 1, 0);
      for (std::size_t i = 0; i < held_.size(); ++i) at[i + 1] = at[i] + 2 * held_[i]->edges.size();
      ends.resize(at.back());
      parallel_for(threads_, held_.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t i = lo; i < hi; ++i) {
          std::uint64_t* w = ends.data() + at[i];
          for (const Edge64& e : held_[i]->edges) {
            *w++ = e.a;
            *w++ = e.b;
          }
        }
      });
      parallel_sort_unique_u64(ends, tmp, threads_);
      tmp.release();
      ends.trim();
      idmap.from_sorted(std::move(ends));
    }
    const std::uint64_t n = idmap.n();
    check_vertices(n);
    stage_done("id map");
    // Compact keys, block by block (each block freed once converted).
    BigBuffer<std::uint64_t> keys(held_records_ + 1), tmp(held_records_ + 1);
    {
      std::vector<std::size_t> at(held_.size() + 1, 0);
      for (std::size_t i = 0; i < held_.size(); ++i) at[i + 1] = at[i] + held_[i]->edges.size();
      keys.resize(at.back());
      parallel_for(threads_, held_.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t i = lo; i < hi; ++i) {
          std::uint64_t* w = keys.data() + at[i];
          for (const Edge64& e : held_[i]->edges) *w++ = (idmap(e.a) << 32) | idmap(e.b);
          held_[i].reset();
        }
      });
      held_.clear();
    }
    stage_done("compact keys");
    progress_.stage("sorting edges");
    const std::size_t m = parallel_sort_unique_u64(keys, tmp, threads_);
    tmp.release();
    keys.trim();
    m_out = m;
    stage_done("sort unique keys");
    BigBuffer<std::uint32_t> degree(n + 1);
    degree.resize(n);
    parallel_for(threads_, m, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i) {
        __atomic_fetch_add(&degree[keys[i] >> 32], 1u, __ATOMIC_RELAXED);
        __atomic_fetch_add(&degree[keys[i] & 0xffffffffu], 1u, __ATOMIC_RELAXED);
      }
    });
    stage_done("degrees");
    KeySource src;
    src.mem = &keys;
    src.count = m;
    return write_graph(src, n, degree, idmap, output_, options_, limit_, tmp_dir_, threads_,
                       progress_);
  }

  void check_vertices(std::uint64_t n) const {
    if (n > kMaxVertices)
      throw input_error(
          producer_.name(), 0,
          "graph has " + std::to_string(n) + " vertices; at most 2^32-1 are supported");
  }

  TailResult finish_out_of_core(std::uint64_t& m_out) {
    stage_done("last spill");
    progress_.stage("merging sorted runs");
    IdMap idmap;
    idmap.from_sorted(std::move(ids_));
    const std::uint64_t n = idmap.n();
    check_vertices(n);
    // Merge at most kFanIn runs at a time until one merge pass can take them all.
    const std::size_t kFanIn = 64;
    while (runs_.size() > kFanIn) {
      std::vector<std::unique_ptr<Run>> next;
      for (std::size_t i = 0; i < runs_.size(); i += kFanIn) {
        const std::size_t j = std::min(runs_.size(), i + kFanIn);
        if (j - i == 1) {
          next.push_back(std::move(runs_[i]));
          continue;
        }
        std::vector<std::unique_ptr<RunReader<Edge64>>> readers;
        std::vector<RunReader<Edge64>*> ptrs;
        for (std::size_t k = i; k < j; ++k) {
          readers.push_back(std::make_unique<RunReader<Edge64>>(*runs_[k]->file, runs_[k]->segments,
                                                                io_records(j - i, sizeof(Edge64))));
          ptrs.push_back(readers.back().get());
        }
        auto run = std::make_unique<Run>();
        run->file = std::make_unique<TempFile>(tmp_dir_);
        RunWriter<Edge64> w(*run->file, io_records(1, sizeof(Edge64)));
        merge_unique<Edge64>(ptrs, [&](const Edge64& e) { w.push(e); });
        w.flush();
        run->edges = w.count();
        run->segments = {w.segment()};
        readers.clear();
        for (std::size_t k = i; k < j; ++k) runs_[k].reset();
        next.push_back(std::move(run));
      }
      runs_ = std::move(next);
    }
    std::uint64_t bound = 0;
    for (auto& r : runs_) bound += r->edges;
    const bool keys_in_memory = bound * 16 <= limit_;  // the keys and their sort buffer
    // The merge runs in parallel over key ranges cut at quantiles of a sample of the runs; part p
    // writes its keys from position first[p] (the input records before it) on.
    const std::size_t P = bound >= 4096 * threads_ ? threads_ : 1;
    std::vector<Edge64> split;
    if (P > 1) {
      std::vector<Edge64> sample;
      for (auto& r : runs_) {
        const std::uint64_t k = std::max<std::uint64_t>(1, 64 * P * r->edges / bound);
        for (std::uint64_t i = 0; i < k && r->edges > 0; ++i)
          sample.push_back(r->at(r->edges * i / k));
      }
      std::sort(sample.begin(), sample.end());
      for (std::size_t p = 1; p < P; ++p) split.push_back(sample[sample.size() * p / P]);
    }
    std::vector<std::vector<std::uint64_t>> pos(runs_.size(), std::vector<std::uint64_t>(P + 1, 0));
    std::vector<std::uint64_t> first(P + 1, 0);
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      for (std::size_t p = 1; p < P; ++p) pos[r][p] = runs_[r]->lower_bound(split[p - 1]);
      pos[r][P] = runs_[r]->edges;
      for (std::size_t p = 0; p < P; ++p) first[p + 1] += pos[r][p + 1] - pos[r][p];
    }
    for (std::size_t p = 0; p < P; ++p) first[p + 1] += first[p];
    BigBuffer<std::uint64_t> keys;
    std::unique_ptr<TempFile> ufile;
    if (keys_in_memory)
      keys.reserve(bound + 1);
    else
      ufile = std::make_unique<TempFile>(tmp_dir_);
    BigBuffer<std::uint32_t> degree(n + 1);
    degree.resize(n);
    std::vector<std::uint64_t> count(P, 0);
    parallel_for(threads_, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t p = lo; p < hi; ++p) {
        std::vector<std::unique_ptr<RunReader<Edge64>>> readers;
        std::vector<RunReader<Edge64>*> ptrs;
        for (std::size_t r = 0; r < runs_.size(); ++r) {
          readers.push_back(std::make_unique<RunReader<Edge64>>(
              *runs_[r]->file, runs_[r]->slice(pos[r][p], pos[r][p + 1]),
              io_records(runs_.size() * P, sizeof(Edge64))));
          ptrs.push_back(readers.back().get());
        }
        std::unique_ptr<RunWriter<std::uint64_t>> uw;
        if (!keys_in_memory)
          uw = std::make_unique<RunWriter<std::uint64_t>>(*ufile, io_records(P, 8), first[p]);
        std::uint64_t* out = keys.data() + first[p];
        std::uint64_t c = 0;
        merge_unique<Edge64>(ptrs, [&](const Edge64& e) {
          const std::uint64_t a = idmap(e.a), b = idmap(e.b);
          __atomic_fetch_add(&degree[a], 1u, __ATOMIC_RELAXED);
          __atomic_fetch_add(&degree[b], 1u, __ATOMIC_RELAXED);
          const std::uint64_t k = (a << 32) | b;
          if (uw)
            uw->push(k);
          else
            out[c] = k;
          ++c;
        });
        if (uw) uw->flush();
        count[p] = c;
      }
    });
    std::uint64_t m = 0;
    KeySource src;
    for (std::size_t p = 0; p < P; ++p) {
      if (keys_in_memory)
        std::memmove(keys.data() + m, keys.data() + first[p], count[p] * 8);
      else if (count[p])
        src.segments.push_back(Segment{first[p], count[p]});
      m += count[p];
    }
    if (keys_in_memory) {
      keys.resize(m);
      keys.trim();
    }
    runs_.clear();
    m_out = m;
    stage_done("merge runs");
    src.count = m;
    if (keys_in_memory)
      src.mem = &keys;
    else
      src.file = ufile.get();
    // The rows of G+ are filled by ranges when the keys stay on disk.
    return write_graph(src, n, degree, idmap, output_, options_,
                       keys_in_memory ? limit_ : limit_ / 2, tmp_dir_, threads_, progress_);
  }

  Producer& producer_;
  std::string output_;
  ConvertOptions options_;
  Progress progress_;
  unsigned threads_ = 1;
  std::uint64_t limit_ = 0;
  std::string tmp_dir_;
  ConvertSummary summary_;
  std::uint64_t records_ = 0, loops_ = 0, lines_ = 0, max_id_ = 0;
  std::vector<std::unique_ptr<Block>> held_;
  std::uint64_t held_records_ = 0, held_bytes_ = 0;
  bool spilling_ = false;
  std::atomic<bool> spill_flag_{false};
  std::vector<std::unique_ptr<Run>> runs_;
  BigBuffer<std::uint64_t> ids_;
};

}  // namespace

ConvertSummary run_conversion(Producer& producer, const std::string& output,
                              const ConvertOptions& options, double start_seconds) {
  Driver d(producer, output, options);
  return d.run(start_seconds);
}

}  // namespace tristream::conv
