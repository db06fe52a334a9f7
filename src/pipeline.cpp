// pipeline.cpp — the double-buffered streaming driver, the host transforms and the CPU
// streaming backend (tristream/pipeline.hpp).
#include "tristream/pipeline.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>

#include "common/interrupt.hpp"
#include "common/lru_cache.hpp"
#include "common/thread_pool.hpp"
#include "common/thread_priority.hpp"
#include "tristream/host_memory.hpp"

namespace tristream {

namespace {

using Clock = std::chrono::steady_clock;
double now_s() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

constexpr std::uint64_t kAlign = 256;
std::uint64_t align_up(std::uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

// ---- thread priorities (common/thread_priority.hpp) -------------------------------------------
// The pipeline's threads compete for the cores while the background preload runs, and the order
// matters (Linux nice values, relative to the nice value of the thread that starts the run):
//   base - 5  the driver, which issues the GPU work, and the preload's registrar: a registration
//             (cudaHostRegister) holds the CUDA driver's lock, so every copy and launch the driver
//             issues meanwhile waits for it, and a registrar that loses its core to the builders
//             stalls the GPU (a priority inversion: on the H100 the registrations of Kronecker 25
//             took 30-50 ms each at base + 5 and 5-12 ms at base - 5). Raising a thread above
//             base needs CAP_SYS_NICE (or RLIMIT_NICE); without it they stay at base.
//   base + 3  the builder and its pool (the preload's critical path);
//   base + 8  the preload's decompressor, which runs ahead.
// Best effort: nothing happens where it is not supported or not allowed. A thread inherits its
// creator's value, and without the privilege a thread cannot come back up once lowered, so the
// threads that run above base are created before their creator lowers itself.
constexpr int kDriverBoost = 5, kBuilderDrop = 3, kDecompressorDrop = 8;

// ---- parallel copies and divisions -----------------------------------------------------------
struct CopyJob {
  unsigned char* dst;
  const unsigned char* src;
  std::size_t bytes;
};
// Copies every job on the pool: the bytes of all jobs together are cut into pieces (at least
// 256 KiB, a few per thread), so a unit's blocks are copied into its slot by every core at once.
void par_copy(ThreadPool& pool, const std::vector<CopyJob>& jobs) {
  std::vector<std::size_t> start(jobs.size() + 1, 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) start[j + 1] = start[j] + jobs[j].bytes;
  const std::size_t total = start.back();
  if (total == 0) return;
  constexpr std::size_t kMinPiece = std::size_t{256} << 10;
  const std::size_t pieces = std::max<std::size_t>(
      1, std::min<std::size_t>((total + kMinPiece - 1) / kMinPiece, 4 * pool.threads()));
  pool.run(pieces, [&](std::size_t x) {
    const std::size_t lo = chunk_range(total, pieces, x).lo, hi = chunk_range(total, pieces, x).hi;
    std::size_t j = static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), lo) -
                                             start.begin() - 1);
    for (std::size_t at = lo; at < hi && j < jobs.size(); ++j) {
      const std::size_t end = std::min(hi, start[j + 1]);
      if (end > at)
        std::memcpy(jobs[j].dst + (at - start[j]), jobs[j].src + (at - start[j]), end - at);
      at = std::max(at, end);
    }
  });
}

// x / d and x % d for 32-bit x by a multiplication (d a power of two: a shift and a mask). With
// M = ceil(2^64 / d) the quotient floor(x * M / 2^64) is exact for every x < 2^32.
class FastDiv {
 public:
  explicit FastDiv(std::uint32_t d) : d_(std::max<std::uint32_t>(1, d)) {
    pow2_ = (d_ & (d_ - 1)) == 0;
    if (pow2_)
      shift_ = static_cast<unsigned>(__builtin_ctz(d_));
    else
      magic_ = ~std::uint64_t{0} / d_ + 1;
  }
  std::uint32_t div(std::uint32_t x) const {
    if (pow2_) return x >> shift_;
    using u128 = unsigned __int128;
    return static_cast<std::uint32_t>((static_cast<u128>(x) * magic_) >> 64);
  }
  std::uint32_t mod(std::uint32_t x) const { return pow2_ ? x & (d_ - 1) : x - div(x) * d_; }

 private:
  std::uint32_t d_;
  bool pow2_ = true;
  unsigned shift_ = 0;
  std::uint64_t magic_ = 0;
};

// One pinnable allocation for every block the preload builds (direct uploads only), registered
// with the backend in one call near the preload's start, while the first row part is built.
// Registering each row part as it was built meant registrations while units ran: each holds
// the CUDA driver's lock, and the device ran dry behind the driver's waiting copies and launches
// (bench/RESULTS.md, session 11). take() hands out pieces to the builders (thread-safe); the
// arena is unregistered and freed last, after every block in it.
class PinnedArena {
 public:
  static constexpr std::uint64_t kAlign = 256;
  PinnedArena() = default;
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;
  ~PinnedArena() {
    if (reg_) reg_->unregister_host(base_);
    std::free(base_);
  }
  // Reserves `bytes` (alloc_pinnable); false when the memory cannot be had.
  bool reserve(std::uint64_t bytes) {
    base_ = alloc_pinnable(bytes, &size_);
    if (!base_) size_ = 0;
    return base_ != nullptr;
  }
  std::uint64_t size() const { return size_; }
  // Writes every page (zeros) in parallel, so that the registration finds them present (it
  // would fault them in on one thread while it holds the driver's lock).
  void fault_in(ThreadPool& pool) {
    constexpr std::uint64_t piece = std::uint64_t{32} << 20;
    pool.run((size_ + piece - 1) / piece, [&](std::size_t x) {
      const std::uint64_t at = x * piece;
      std::memset(base_ + at, 0, std::min(piece, size_ - at));
    });
  }
  // Registers the whole arena with the backend; true when it is (registered_flag() from then on).
  bool register_with(StreamingBackend& b) {
    if (!base_ || !b.register_host(base_, size_)) return false;
    reg_ = &b;
    registered_.store(true, std::memory_order_release);
    return true;
  }
  const std::atomic<bool>* registered_flag() const { return &registered_; }
  // `bytes` of the arena (kAlign-aligned), or null when it has no room left (none when it was
  // never reserved). Thread-safe.
  unsigned char* take(std::uint64_t bytes) {
    const std::uint64_t need = (std::max<std::uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    std::uint64_t at = used_.load(std::memory_order_relaxed);
    do {
      if (at + need > size_) return nullptr;
    } while (!used_.compare_exchange_weak(at, at + need, std::memory_order_relaxed));
    return base_ + at;
  }

 private:
  unsigned char* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::atomic<std::uint64_t> used_{0};
  StreamingBackend* reg_ = nullptr;
  std::atomic<bool> registered_{false};
};

// An array left uninitialised (the builders write every entry, in parallel), either in memory of
// its own (alloc_pinnable), so that a backend may pin it for direct uploads (register_with; it
// is unregistered before it is freed), or a piece of a PinnedArena (view), registered with it.
template <class T>
class RawArray {
 public:
  RawArray() = default;
  RawArray(const RawArray&) = delete;
  RawArray& operator=(const RawArray&) = delete;
  ~RawArray() { reset(); }
  void alloc(std::size_t n) {
    reset();
    std::uint64_t size = 0;
    p_ = reinterpret_cast<T*>(alloc_pinnable(std::max<std::size_t>(n, 1) * sizeof(T), &size));
    if (!p_) throw std::bad_alloc();
    n_ = n;
    bytes_ = size;
  }
  // n entries at p, a piece of an arena whose registration `registered` reports; the arena owns
  // the memory and outlives the array.
  void view(T* p, std::size_t n, const std::atomic<bool>* registered) {
    reset();
    p_ = p;
    n_ = n;
    view_ = registered;
  }
  // Registers the array with the backend (once); true when it is registered (a view: when its
  // arena is).
  bool register_with(StreamingBackend& b) {
    if (view_) return view_->load(std::memory_order_acquire);
    if (p_ && !reg_ && b.register_host(p_, bytes_)) reg_ = &b;
    return reg_ != nullptr;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void reset() {
    if (!view_) {
      if (reg_) reg_->unregister_host(p_);
      std::free(p_);
    }
    reg_ = nullptr;
    view_ = nullptr;
    p_ = nullptr;
    n_ = bytes_ = 0;
  }
  T* p_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
  StreamingBackend* reg_ = nullptr;
  const std::atomic<bool>* view_ = nullptr;
};

// ---- run-wide measurement ----------------------------------------------------------------------
// Thread-safe: the background preload records its spans while the driver records the units'.
struct Recorder {
  double origin = 0;
  PipelineStats* stats = nullptr;
  std::mutex mu;
  double rel(double t) const { return t - origin; }
  void span(const std::string& stage, std::int64_t unit, double t0, double t1,
            std::uint64_t bytes) {
    std::lock_guard<std::mutex> lk(mu);
    stats->spans.push_back(TraceSpan{stage, unit, rel(t0), rel(t1), bytes});
    StageStats* s = stage == "read"         ? &stats->read
                    : stage == "decompress" ? &stats->decompress
                    : stage == "transform"  ? &stats->transform
                    : stage == "upload"     ? &stats->upload
                    : stage == "kernel"     ? &stats->kernel
                                            : nullptr;
    if (s) {
      s->busy_s += t1 - t0;
      s->bytes += bytes;
      ++s->spans;
    }
  }
  // Seconds of `stage` spans of `unit` recorded since index *seen (which moves to the end).
  double since(std::size_t* seen, const std::string& stage, std::int64_t unit) {
    std::lock_guard<std::mutex> lk(mu);
    double t = 0;
    for (std::size_t x = *seen; x < stats->spans.size(); ++x)
      if (stats->spans[x].unit == unit && stats->spans[x].stage == stage)
        t += stats->spans[x].end_s - stats->spans[x].start_s;
    *seen = stats->spans.size();
    return t;
  }
  void less_transform(double seconds) {
    std::lock_guard<std::mutex> lk(mu);
    stats->transform.busy_s -= seconds;
  }
};

// ---- rows in ascending order from decompressed chunks ----------------------------------------
class RowReader {
 public:
  RowReader(const GraphSource& g, ThreadPool& pool, std::uint32_t window, std::uint64_t cache_bytes,
            Recorder& rec)
      : g_(g),
        pool_(pool),
        window_(std::max<std::uint32_t>(1, window)),
        cache_(cache_bytes),
        rec_(rec),
        bufs_(window_) {
    first_edges_.reserve(g.chunks().size());
    for (const auto& c : g.chunks()) first_edges_.push_back(c.first_edge);
  }
  std::uint64_t chunk_of(eid_t e) const {
    return static_cast<std::uint64_t>(
        std::upper_bound(first_edges_.begin(), first_edges_.end(), e) - first_edges_.begin() - 1);
  }
  // Starts a walk over rows whose chunks are `needed` (sorted, unique).
  void begin(std::vector<std::uint64_t> needed, std::int64_t unit) {
    needed_ = std::move(needed);
    batch_.clear();
    unit_ = unit;
  }
  // Adds the chunks of row r to a needed list (rows in ascending order).
  void need_row(std::uint64_t r, std::vector<std::uint64_t>& needed) const {
    const eid_t* off = g_.offsets();
    if (off[r] == off[r + 1]) return;
    const std::uint64_t c0 = chunk_of(off[r]), c1 = chunk_of(off[r + 1] - 1);
    for (std::uint64_t c = c0; c <= c1; ++c)
      if (needed.empty() || needed.back() < c) needed.push_back(c);
  }
  // The columns of row r (valid until the next call); deg receives the out-degree.
  const vid_t* row(std::uint64_t r, std::uint64_t& deg) {
    const eid_t* off = g_.offsets();
    const eid_t s = off[r], e = off[r + 1];
    deg = e - s;
    if (deg == 0) return nullptr;
    const std::uint64_t c0 = chunk_of(s), c1 = chunk_of(e - 1);
    const auto& chunks = g_.chunks();
    if (c0 == c1) return slot(c0) + (s - chunks[c0].first_edge);
    tmp_.resize(deg);
    std::uint64_t w = 0;
    for (std::uint64_t c = c0; c <= c1; ++c) {
      const vid_t* base = slot(c);
      const eid_t cs = std::max(s, chunks[c].first_edge);
      const eid_t ce = std::min(e, chunks[c].first_edge + chunks[c].edges);
      std::memcpy(tmp_.data() + w, base + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
      w += ce - cs;
    }
    return tmp_.data();
  }
  // Makes every chunk of `needed` resident (decompressing the missing ones in parallel) when
  // they fit the chunk cache; then row_pinned() may be called from several threads.
  bool pin(const std::vector<std::uint64_t>& needed, std::int64_t unit) {
    const auto& chunks = g_.chunks();
    std::uint64_t total = 0;
    for (auto c : needed) total += chunks[c].edges * sizeof(vid_t);
    if (cache_.capacity() == 0 || total > cache_.capacity()) return false;
    if (ptr_.size() != chunks.size()) ptr_.assign(chunks.size(), nullptr);
    std::fill(ptr_.begin(), ptr_.end(), nullptr);
    std::vector<std::uint64_t> missing;
    for (auto c : needed)
      if (!cache_.find(c)) missing.push_back(c);
    // evict chunks not needed now, least recently used first
    std::uint64_t add = 0;
    for (auto c : missing) add += chunks[c].edges * sizeof(vid_t);
    cache_.evict_for(add, [&](std::uint64_t c) { return in(needed, c); });
    if (!missing.empty()) {
      auto bufs = decompress(missing, pool_, unit);
      adopt(missing, bufs);
    }
    for (auto c : needed) ptr_[c] = (*cache_.find(c))->data();
    return true;
  }
  // Decompresses `chunks` into new buffers on `pool`, recording the spans. Touches no cache
  // state, so the preload's decompressor calls it while the builder reads pinned chunks.
  std::vector<std::shared_ptr<std::vector<vid_t>>> decompress(
      const std::vector<std::uint64_t>& chunks, ThreadPool& pool, std::int64_t unit) {
    const auto& all = g_.chunks();
    std::vector<std::shared_ptr<std::vector<vid_t>>> bufs(chunks.size());
    if (chunks.empty()) return bufs;
    std::uint64_t comp = 0, raw = 0;
    for (auto c : chunks) {
      comp += all[c].compressed_size;
      raw += all[c].edges * sizeof(vid_t);
    }
    const double t0 = now_s();
    pool.run(chunks.size(), [&](std::size_t x) {
      bufs[x] = std::make_shared<std::vector<vid_t>>(all[chunks[x]].edges);
      g_.read_chunk(chunks[x], bufs[x]->data());
    });
    const double t1 = now_s();
    rec_.span("read", unit, t0, t0, comp);
    rec_.span("decompress", unit, t0, t1, raw);
    return bufs;
  }
  // Adds decompressed chunks to the cache (most recently used); the caller keeps the cache
  // within its capacity.
  void adopt(const std::vector<std::uint64_t>& chunks,
             std::vector<std::shared_ptr<std::vector<vid_t>>>& bufs) {
    TS_CHECK(chunks.size() == bufs.size(), "adopt: a buffer per chunk");
    for (std::size_t x = 0; x < chunks.size(); ++x) {
      const std::uint64_t b = bufs[x]->size() * sizeof(vid_t);
      cache_.insert(chunks[x], std::move(bufs[x]), b);
    }
  }
  // The most bytes the cache held at once.
  std::uint64_t peak_bytes() const { return cache_.peak(); }
  // Makes room for the chunks `next` beside the chunks `now` (both sorted): evicts the least
  // recently used chunks in neither until next's missing chunks fit the capacity. Sets `missing`
  // to next's chunks not cached; false when they do not fit even then.
  bool room_for(const std::vector<std::uint64_t>& now, const std::vector<std::uint64_t>& next,
                std::vector<std::uint64_t>& missing) {
    missing.clear();
    std::uint64_t add = 0;
    for (auto c : next)
      if (!cache_.contains(c)) {
        missing.push_back(c);
        add += g_.chunks()[c].edges * sizeof(vid_t);
      }
    return cache_.evict_for(add, [&](std::uint64_t c) { return in(now, c) || in(next, c); });
  }
  // The columns of row r from pinned chunks (thread-safe); rows across chunks go through tmp.
  // *hint (optional, per thread) is the chunk of the previous row asked for: rows asked for in
  // ascending order then find their chunk by stepping forward instead of a binary search.
  const vid_t* row_pinned(std::uint64_t r, std::uint64_t& deg, std::vector<vid_t>& tmp,
                          std::uint64_t* hint = nullptr) const {
    const eid_t* off = g_.offsets();
    const eid_t s = off[r], e = off[r + 1];
    deg = e - s;
    if (deg == 0) return nullptr;
    const auto& chunks = g_.chunks();
    const std::uint64_t nc = first_edges_.size();
    std::uint64_t c0;
    if (hint && *hint < nc && first_edges_[*hint] <= s) {
      c0 = *hint;
      while (c0 + 1 < nc && first_edges_[c0 + 1] <= s) ++c0;
    } else {
      c0 = chunk_of(s);
    }
    if (hint) *hint = c0;
    if (c0 + 1 == nc || e <= first_edges_[c0 + 1]) return ptr_[c0] + (s - chunks[c0].first_edge);
    const std::uint64_t c1 = chunk_of(e - 1);
    tmp.resize(deg);
    std::uint64_t w = 0;
    for (std::uint64_t c = c0; c <= c1; ++c) {
      const eid_t cs = std::max(s, chunks[c].first_edge);
      const eid_t ce = std::min(e, chunks[c].first_edge + chunks[c].edges);
      std::memcpy(tmp.data() + w, ptr_[c] + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
      w += ce - cs;
    }
    return tmp.data();
  }
  ThreadPool& pool() { return pool_; }
  std::uint64_t cache_cap() const { return cache_.capacity(); }
  // Sets the chunk cache's capacity (the preload borrows the host budget's spare room).
  void set_cache_cap(std::uint64_t bytes) { cache_.set_capacity(bytes); }
  // Bytes of the chunks `needed`, decompressed.
  std::uint64_t chunk_bytes(const std::vector<std::uint64_t>& needed) const {
    std::uint64_t total = 0;
    for (auto c : needed) total += g_.chunks()[c].edges * sizeof(vid_t);
    return total;
  }
  // Drops every cached chunk (after the block cache has been filled).
  void drop_cache() {
    cache_.clear();
    batch_.clear();
    for (auto& b : bufs_) b.reset();
  }

  // Decompresses edges [e0, e1) straight into out (used by the identity fast path).
  void read_range(eid_t e0, eid_t e1, vid_t* out, std::int64_t unit) {
    if (e0 >= e1) return;
    const auto& chunks = g_.chunks();
    const std::uint64_t c0 = chunk_of(e0), c1 = chunk_of(e1 - 1);
    const double t0 = now_s();
    std::vector<std::vector<vid_t>> edge_bufs(2);
    std::uint64_t comp = 0, raw = 0;
    for (std::uint64_t c = c0; c <= c1; ++c) {
      comp += chunks[c].compressed_size;
      raw += chunks[c].edges * sizeof(vid_t);
    }
    pool_.run(c1 - c0 + 1, [&](std::size_t t) {
      const std::uint64_t c = c0 + t;
      const auto& ch = chunks[c];
      if (ch.first_edge >= e0 && ch.first_edge + ch.edges <= e1) {
        g_.read_chunk(c, out + (ch.first_edge - e0));
      } else {
        std::vector<vid_t> b(ch.edges);
        g_.read_chunk(c, b.data());
        const eid_t cs = std::max(e0, ch.first_edge), ce = std::min(e1, ch.first_edge + ch.edges);
        std::memcpy(out + (cs - e0), b.data() + (cs - ch.first_edge), (ce - cs) * sizeof(vid_t));
      }
    });
    const double t1 = now_s();
    rec_.span("read", unit, t0, t0, comp);
    rec_.span("decompress", unit, t0, t1, raw);
  }

 private:
  const vid_t* slot(std::uint64_t c) {
    for (std::size_t x = 0; x < batch_.size(); ++x)
      if (batch_[x] == c) return bufs_[x]->data();
    load_from(c);
    return bufs_[0]->data();
  }
  // Loads the window of needed chunks starting at c: from the chunk cache when there, the rest
  // decompressed in parallel (and cached, least recently used evicted, within cache_cap_).
  void load_from(std::uint64_t c) {
    auto it = std::lower_bound(needed_.begin(), needed_.end(), c);
    TS_CHECK(it != needed_.end() && *it == c, "a row's chunk was not planned for");
    const std::size_t pos = static_cast<std::size_t>(it - needed_.begin());
    const std::size_t cnt = std::min<std::size_t>(window_, needed_.size() - pos);
    batch_.assign(needed_.begin() + pos, needed_.begin() + pos + cnt);
    std::vector<std::size_t> missing;
    for (std::size_t t = 0; t < cnt; ++t) {
      if (const auto* hit = cache_.find(batch_[t]))
        bufs_[t] = *hit;
      else
        missing.push_back(t);
    }
    if (missing.empty()) return;
    std::vector<std::uint64_t> ids;
    for (auto t : missing) ids.push_back(batch_[t]);
    auto got = decompress(ids, pool_, unit_);
    for (std::size_t x = 0; x < missing.size(); ++x) bufs_[missing[x]] = std::move(got[x]);
    if (cache_.capacity() == 0) return;
    for (auto t : missing) {
      const std::uint64_t b = bufs_[t]->size() * sizeof(vid_t);
      if (b > cache_.capacity()) continue;
      cache_.evict_for(b, [](std::uint64_t) { return false; });
      cache_.insert(batch_[t], bufs_[t], b);
    }
  }

  static bool in(const std::vector<std::uint64_t>& sorted, std::uint64_t c) {
    return std::binary_search(sorted.begin(), sorted.end(), c);
  }
  const GraphSource& g_;
  ThreadPool& pool_;
  std::uint32_t window_;
  LruCache<std::uint64_t, std::shared_ptr<std::vector<vid_t>>> cache_;
  Recorder& rec_;
  std::vector<std::shared_ptr<std::vector<vid_t>>> bufs_;
  std::vector<const vid_t*> ptr_;  // pinned chunks
  std::vector<std::uint64_t> batch_, needed_, first_edges_;
  std::vector<vid_t> tmp_;
  std::int64_t unit_ = -1;
};

// ---- columns of consecutive edge ranges, for streamed staging ---------------------------------
// read(e0, e1, out) writes the columns of edges [e0, e1) (ranges in non-decreasing order; the next
// range may start up to one edge before the previous one ended). A chunk wholly inside a range is
// decompressed straight into `out` (the chunks of a range in parallel on the pool); a chunk that
// straddles two ranges goes through one carried buffer and is decompressed once for both. Host
// memory: at most two chunks, whatever the size of the graph.
class ColumnCursor {
 public:
  ColumnCursor(const GraphSource& g, ThreadPool& pool, Recorder& rec, std::int64_t unit)
      : g_(g), pool_(pool), rec_(rec), unit_(unit) {
    first_edges_.reserve(g.chunks().size());
    for (const auto& c : g.chunks()) first_edges_.push_back(c.first_edge);
  }
  void read(eid_t e0, eid_t e1, vid_t* out) {
    if (e0 >= e1) return;
    const auto& chunks = g_.chunks();
    const std::uint64_t c0 = chunk_of(e0), c1 = chunk_of(e1 - 1);
    auto inside = [&](std::uint64_t c) {
      return chunks[c].first_edge >= e0 && chunks[c].first_edge + chunks[c].edges <= e1;
    };
    std::uint64_t comp = 0, raw = 0;
    const double t0 = now_s();
    // A partial head that is not the carried chunk (only when a range starts inside a chunk
    // the previous range did not reach): decompressed into the carry first.
    const bool head_partial = !inside(c0);
    if (head_partial && carry_chunk_ != c0) {
      carry_.resize(chunks[c0].edges);
      g_.read_chunk(c0, carry_.data());
      carry_chunk_ = c0;
      comp += chunks[c0].compressed_size;
      raw += chunks[c0].edges * sizeof(vid_t);
    }
    const bool tail_partial = c1 != c0 && !inside(c1);
    std::vector<std::uint64_t> direct;
    for (std::uint64_t c = c0; c <= c1; ++c)
      if (inside(c)) direct.push_back(c);
    if (tail_partial) spare_.resize(chunks[c1].edges);
    const std::size_t jobs = direct.size() + (tail_partial ? 1 : 0);
    pool_.run(jobs, [&](std::size_t x) {
      if (x < direct.size())
        g_.read_chunk(direct[x], out + (chunks[direct[x]].first_edge - e0));
      else
        g_.read_chunk(c1, spare_.data());
    });
    for (auto c : direct) {
      comp += chunks[c].compressed_size;
      raw += chunks[c].edges * sizeof(vid_t);
    }
    if (tail_partial) {
      comp += chunks[c1].compressed_size;
      raw += chunks[c1].edges * sizeof(vid_t);
    }
    const double t1 = now_s();
    if (raw) {
      rec_.span("read", unit_, t0, t0, comp);
      rec_.span("decompress", unit_, t0, t1, raw);
    }
    auto copy_part = [&](std::uint64_t c, const vid_t* buf) {
      const eid_t cs = std::max(e0, chunks[c].first_edge);
      const eid_t ce = std::min(e1, chunks[c].first_edge + chunks[c].edges);
      std::memcpy(out + (cs - e0), buf + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
    };
    if (head_partial) copy_part(c0, carry_.data());
    if (tail_partial) {
      copy_part(c1, spare_.data());
      carry_.swap(spare_);
      carry_chunk_ = c1;
    }
  }

 private:
  std::uint64_t chunk_of(eid_t e) const {
    return static_cast<std::uint64_t>(
        std::upper_bound(first_edges_.begin(), first_edges_.end(), e) - first_edges_.begin() - 1);
  }
  const GraphSource& g_;
  ThreadPool& pool_;
  Recorder& rec_;
  std::int64_t unit_;
  std::vector<eid_t> first_edges_;
  std::vector<vid_t> carry_, spare_;
  std::uint64_t carry_chunk_ = ~std::uint64_t{0};
};

// Streamed staging of one unit: the backend, the slot and the ring of staging buffers.
struct Staging {
  StreamingBackend* backend = nullptr;
  int slot = 0;
  int buffers = 2;
  std::uint64_t piece_bytes = 0;
  std::uint64_t next = 0;  // pieces sent so far (the next piece uses buffer next % buffers)
};

// ---- the per-slot host state -------------------------------------------------------------------
struct SlotState {
  std::int64_t unit = -1;  // the unit in flight in this slot
  UnitLayout layout;
  std::uint32_t space_part[3] = {0, 0, 0};  // range/hash: the part of each per-vertex space
  std::vector<vid_t> proxies;               // vertex: X (local id -> global id)
  std::uint64_t row0 = 0;                   // vertex: first row of V_i
  // Direct uploads: the cached blocks the unit in flight uploads from (or whose host images it
  // lends the backend), kept until the slot is prepared again (its count has finished then).
  std::vector<std::shared_ptr<const void>> keep;
};

// Writes a block's CSR: rows are appended in order; columns go through `emit`. The sequential
// walk writes dense offsets; the parallel builder (par_walk) may leave the block packed.
struct BlockWriter {
  eid_t* offsets = nullptr;
  vid_t* cols = nullptr;
  std::uint64_t capacity = 0;  // columns
  std::uint64_t rows = 0;
  eid_t edges = 0;
  bool packed = false;
  std::uint64_t packed_rows = 0;
  void start(unsigned char* slot, const SlotBlock& b, std::uint64_t cap) {
    offsets = reinterpret_cast<eid_t*>(slot + b.offsets_at);
    cols = reinterpret_cast<vid_t*>(slot + b.cols_at);
    capacity = cap;
    rows = 0;
    edges = 0;
    packed = false;
    packed_rows = 0;
    offsets[0] = 0;
  }
  void mark(SlotBlock& b) const {
    b.packed = packed;
    b.packed_rows = packed_rows;
  }
  void push(vid_t c) {
    TS_CHECK(edges < capacity, "a block holds more columns than planned");
    cols[edges++] = c;
  }
  void end_row() { offsets[++rows] = edges; }
};

class Preparer {
 public:
  // preload_spare: host bytes the preload may add to the chunk cache (the budget's room that
  // the plan left unused).
  // pool: decompression and block building; copy_pool: the copies into the slots (the
  // background preload builds on `pool` while the driver copies units on `copy_pool`).
  // backend: the source of direct uploads (register_host), or null.
  Preparer(const GraphSource& g, const Plan& plan, ThreadPool& pool, ThreadPool& copy_pool,
           Recorder& rec, bool per_vertex, std::uint64_t preload_spare = 0,
           StreamingBackend* backend = nullptr)
      : g_(g),
        plan_(plan),
        rec_(rec),
        per_vertex_(per_vertex),
        reader_(g, pool, plan.window_chunks, plan.chunk_cache_bytes, rec),
        copy_pool_(copy_pool),
        threads_(pool.threads()),
        preload_spare_(preload_spare),
        backend_(backend) {
    block_cap_ = plan.block_cache_bytes;
    blocks_.set_capacity(block_cap_);
    // range cuts: the part of every 2^shift-th vertex, for build_blocks (at most 2^16 + 1)
    const Partition& P = plan.partition;
    if (P.scheme != Scheme::Hash && !P.bounds.empty()) {
      while ((P.n >> coarse_shift_) > (std::uint64_t{1} << 16)) ++coarse_shift_;
      for (std::uint64_t x = 0; x <= (P.n >> coarse_shift_); ++x)
        coarse_part_.push_back(P.part_of(x << coarse_shift_));
    }
    use_block_cache_ =
        block_cap_ > 0 && plan.partition.p > 1 && plan.partition.scheme != Scheme::Vertex;
  }

  // base_nice: the run's base nice value (the thread priorities above).
  void preload(int base_nice) {
    base_nice_ = base_nice;
    preload_blocks();
  }
  std::uint64_t chunk_cache_peak_bytes() const { return reader_.peak_bytes(); }

  // The plan's reuse_a (A left in the slot by the slot's unit before last) holds with two slots
  // only; with more units in flight (the device block cache) every unit names all its blocks.
  void set_slots(int slots) { reuse_ok_ = slots == 2; }
  bool reuses_a(const WorkUnit& w) const { return w.reuse_a && reuse_ok_; }

  // Builds unit u into the host slot and fills the slot state. With `staging` (streamed
  // staging, p = 1 only; slot is then null) the unit is built and uploaded piece by piece
  // through the backend's staging buffers instead. Returns false when SIGINT stopped a streamed
  // build between two pieces (the slot state is then left without a unit).
  bool prepare(std::size_t u, unsigned char* slot, SlotState& st, Staging* staging = nullptr) {
    const WorkUnit& w = plan_.units[u];
    const Partition& P = plan_.partition;
    UnitLayout L;
    L.unit = static_cast<std::int64_t>(u);
    L.per_vertex = per_vertex_;
    // block placement: A first (so a cached A stays where it is), then B, then C
    std::uint64_t at = 0;
    auto place = [&](const BlockInfo& bi) {
      SlotBlock b;
      b.rows = bi.rows;
      b.edges = bi.edges;  // capacity for now (exact except vertex C)
      b.col_space = bi.col_space;
      b.offsets_at = at;
      b.cols_at = at + align_up((bi.rows + 1) * sizeof(eid_t));
      at = b.cols_at + align_up(bi.edges * sizeof(vid_t));
      L.blocks[L.num_blocks] = b;
      return L.num_blocks++;
    };
    L.a = place(w.a);
    const std::uint64_t a_end = at;
    L.b = w.b_is_a ? L.a : place(w.b);
    L.c = w.c_is_a ? L.a : (w.c_is_b ? L.b : place(w.c));
    L.bytes = at;
    TS_CHECK(L.bytes <= plan_.slot_bytes, "a unit is larger than its slot");
    const bool reuse_a = reuses_a(w);
    L.upload_from = reuse_a ? a_end : 0;
    L.a_cached = reuse_a;
    if (reuse_a) {  // A is what the slot's previous unit left there, packed or not
      const SlotBlock& prev = st.layout.blocks[st.layout.a];
      TS_CHECK(st.layout.unit >= 0 && prev.rows == L.blocks[L.a].rows &&
                   prev.edges == L.blocks[L.a].edges,
               "a reused block differs from the slot's");
      L.blocks[L.a].packed = prev.packed;
      L.blocks[L.a].packed_rows = prev.packed_rows;
    }

    const double t0 = now_s();
    TS_CHECK(!staging || P.p <= 1, "streamed staging is planned for the in-core unit only");
    if (P.p <= 1) {
      if (staging) {
        L.streamed = true;
        if (g_.offsets()[0] == 0) L.host_offsets[L.a] = g_.offsets();  // the slot's exactly
        if (!prepare_in_core_streamed(L, *staging)) return false;
      } else {
        prepare_in_core(slot, L);
      }
      st.space_part[0] = st.space_part[1] = st.space_part[2] = 0;
      if (per_vertex_) {
        L.num_spaces = 1;
        L.space_rows[0] = g_.n();
        L.u_space = L.v_space = L.w_space = 0;
      }
    } else if (P.scheme == Scheme::Vertex) {
      prepare_vertex(w, slot, L, st);
    } else {
      prepare_blocks(w, slot, L);
      if (per_vertex_) {
        const std::uint32_t parts[3] = {w.i, w.j, w.k};
        int role_space[3];
        L.num_spaces = 0;
        for (int r = 0; r < 3; ++r) {
          role_space[r] = -1;
          for (int s = 0; s < L.num_spaces; ++s)
            if (st.space_part[s] == parts[r]) role_space[r] = s;
          if (role_space[r] < 0) {
            st.space_part[L.num_spaces] = parts[r];
            L.space_rows[L.num_spaces] = P.rows(parts[r]);
            role_space[r] = L.num_spaces++;
          }
        }
        L.u_space = role_space[0];
        L.v_space = role_space[1];
        L.w_space = role_space[2];
      }
    }
    // the host images the block cache did not lend are the host slot's
    for (int bi = 0; slot && bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (!L.host_offsets[bi] && !L.host_packed[bi].valid()) {
        const unsigned char* o = slot + b.offsets_at;
        if (b.packed)
          L.host_packed[bi] = packed_image(o, b.packed_rows);
        else
          L.host_offsets[bi] = reinterpret_cast<const eid_t*>(o);
      }
      if (!L.host_cols[bi]) L.host_cols[bi] = reinterpret_cast<const vid_t*>(slot + b.cols_at);
    }
    // Packed blocks built in the host slot: the unit uploads its blocks' regions (dense offsets,
    // columns) instead of the slot's whole range, and the packed images as host_packed.
    bool any_packed = false;
    for (int bi = 0; bi < L.num_blocks; ++bi) any_packed |= L.blocks[bi].packed && L.uploads(bi);
    if (slot && any_packed && L.upload_from < L.bytes) {
      for (int bi = 0; bi < L.num_blocks; ++bi) {
        const SlotBlock& b = L.blocks[bi];
        if (!L.uploads(bi)) continue;
        if (!b.packed)
          L.direct.push_back({slot + b.offsets_at, b.offsets_at, dense_offsets_bytes(b.rows)});
        if (b.edges) L.direct.push_back({slot + b.cols_at, b.cols_at, b.edges * sizeof(vid_t)});
      }
      L.upload_from = L.bytes;
    }
    const double t1 = now_s();
    // transform time excludes the unit's decompression and the waits for the background preload
    const double dec = rec_.since(&spans_seen_, "decompress", L.unit);
    rec_.span("transform", L.unit, t0, t1, L.bytes - L.upload_from);
    rec_.less_transform(std::min(dec + waited_s_, t1 - t0));
    waited_s_ = 0;
    if (reuse_a) rec_.stats->reused_bytes += a_end;
    st.layout = std::move(L);
    st.unit = st.layout.unit;
    st.keep.swap(keep_);
    keep_.clear();
    return true;
  }

 private:
  // p = 1, streamed staging: the slot image (offsets rebased, columns, zero padding) is
  // produced piece by piece, bytes [k * piece, (k + 1) * piece) into staging buffer
  // k % buffers, which is reused only after its previous copy finished (wait_staging); every
  // piece is uploaded to its offset in the device slot as soon as it is built, so building piece
  // k + 1 overlaps the copy of piece k. Pieces may have any size: an offset or a column cut by a
  // piece boundary is written through a small aligned buffer. Returns false on SIGINT.
  bool prepare_in_core_streamed(UnitLayout& L, Staging& sg) {
    const SlotBlock& b = L.blocks[L.a];
    const eid_t* off = g_.offsets();
    const eid_t base = off[0];
    const std::uint64_t off_lo = b.offsets_at, off_hi = off_lo + (b.rows + 1) * sizeof(eid_t);
    const std::uint64_t col_lo = b.cols_at, col_hi = col_lo + b.edges * sizeof(vid_t);
    TS_CHECK(sg.piece_bytes > 0 && sg.buffers > 0, "streamed staging needs pieces");
    ColumnCursor cursor(g_, reader_.pool(), rec_, L.unit);
    std::vector<eid_t> otmp;
    std::vector<vid_t> ctmp;
    // Writes bytes [lo, hi) of an array region starting at byte `at` whose elements (of type T)
    // `make(i0, i1, T* out)` produces: straight into dst when element-aligned, else through tmp.
    auto region = [](std::uint64_t lo, std::uint64_t hi, std::uint64_t at, unsigned char* dst,
                     auto* tmp, auto&& make) {
      using T = typename std::remove_pointer_t<decltype(tmp)>::value_type;
      const std::uint64_t i0 = (lo - at) / sizeof(T), i1 = (hi - at + sizeof(T) - 1) / sizeof(T);
      const bool aligned = (lo - at) % sizeof(T) == 0 && (hi - at) % sizeof(T) == 0 &&
                           reinterpret_cast<std::uintptr_t>(dst) % alignof(T) == 0;
      if (aligned) {
        make(i0, i1, reinterpret_cast<T*>(dst));
      } else {
        tmp->resize(i1 - i0);
        make(i0, i1, tmp->data());
        std::memcpy(
            dst, reinterpret_cast<const unsigned char*>(tmp->data()) + ((lo - at) - i0 * sizeof(T)),
            hi - lo);
      }
    };
    for (std::uint64_t lo = L.upload_from; lo < L.bytes; lo += sg.piece_bytes) {
      if (interrupt_requested()) return false;
      const std::uint64_t hi = std::min(L.bytes, lo + sg.piece_bytes);
      const int buf = static_cast<int>(sg.next % static_cast<std::uint64_t>(sg.buffers));
      const double w0 = now_s();
      sg.backend->wait_staging(buf);
      const double w1 = now_s();
      if (sg.next >= static_cast<std::uint64_t>(sg.buffers)) {
        rec_.span("wait", L.unit, w0, w1, 0);
        waited_s_ += w1 - w0;
      }
      unsigned char* dst = sg.backend->staging_buffer(buf);
      // the parts of [lo, hi): zero padding, offsets, columns
      auto part = [&](std::uint64_t a, std::uint64_t z, auto&& fn) {
        a = std::max(a, lo);
        z = std::min(z, hi);
        if (a < z) fn(a, z, dst + (a - lo));
      };
      auto zero = [](std::uint64_t a, std::uint64_t z, unsigned char* d) {
        std::memset(d, 0, z - a);
      };
      part(0, off_lo, zero);
      part(off_lo, off_hi, [&](std::uint64_t a, std::uint64_t z, unsigned char* d) {
        region(a, z, off_lo, d, &otmp,
               [&](std::uint64_t i0, std::uint64_t i1, eid_t* o) { rebased_offsets(i0, i1, o); });
      });
      part(off_hi, col_lo, zero);
      part(col_lo, col_hi, [&](std::uint64_t a, std::uint64_t z, unsigned char* d) {
        region(a, z, col_lo, d, &ctmp, [&](std::uint64_t i0, std::uint64_t i1, vid_t* o) {
          cursor.read(base + i0, base + i1, o);
        });
      });
      part(col_hi, L.bytes, zero);
      sg.backend->upload_piece_async(sg.slot, lo, buf, hi - lo);
      ++sg.next;
    }
    return true;
  }

  // The file's row offsets [r0, r1) rebased to start at 0, into o (parallel pieces for long
  // ranges).
  void rebased_offsets(std::uint64_t r0, std::uint64_t r1, eid_t* o) {
    const eid_t* off = g_.offsets();
    const eid_t base = off[0];
    const std::uint64_t rows = r1 - r0;
    copy_pool_.parallel_for(rows, 65536, [&](std::uint64_t lo, std::uint64_t hi) {
      for (std::uint64_t r = r0 + lo; r < r0 + hi; ++r) o[r - r0] = off[r] - base;
    });
  }

  // p = 1: offsets copied, columns decompressed straight into the slot.
  void prepare_in_core(unsigned char* slot, UnitLayout& L) {
    SlotBlock& b = L.blocks[L.a];
    const eid_t* off = g_.offsets();
    rebased_offsets(0, b.rows + 1, reinterpret_cast<eid_t*>(slot + b.offsets_at));
    reader_.read_range(off[0], off[b.rows], reinterpret_cast<vid_t*>(slot + b.cols_at), L.unit);
  }

  void rows_needed(std::uint32_t part, std::vector<std::uint64_t>& needed) const {
    const Partition& P = plan_.partition;
    needed.clear();
    if (P.scheme == Scheme::Hash) {
      for (std::uint64_t r = part; r < g_.n(); r += P.p) reader_.need_row(r, needed);
    } else {
      const eid_t* off = g_.offsets();
      const std::uint64_t r0 = P.bounds[part], r1 = P.bounds[part + 1];
      if (off[r0] < off[r1]) {
        const std::uint64_t c0 = reader_.chunk_of(off[r0]), c1 = reader_.chunk_of(off[r1] - 1);
        for (std::uint64_t c = c0; c <= c1; ++c) needed.push_back(c);
      }
    }
  }

  // Appends the columns of row `cols[0..deg)` that fall in part b, as local ids.
  template <class Out>
  void filter_row(const vid_t* cols, std::uint64_t deg, std::uint32_t b, Out& out) const {
    const Partition& P = plan_.partition;
    if (P.scheme == Scheme::Hash) {
      for (std::uint64_t x = 0; x < deg; ++x)
        if (cols[x] % P.p == b) out.push(static_cast<vid_t>(cols[x] / P.p));
    } else {
      const vid_t lo = static_cast<vid_t>(P.bounds[b]);
      const std::uint64_t hi = P.bounds[b + 1];
      const vid_t* s = std::lower_bound(cols, cols + deg, lo);
      for (; s < cols + deg && *s < hi; ++s) out.push(*s - lo);
    }
  }

  void walk_part(std::uint32_t part, const std::function<void(const vid_t*, std::uint64_t)>& fn,
                 std::int64_t unit) {
    const Partition& P = plan_.partition;
    std::vector<std::uint64_t> needed;
    rows_needed(part, needed);
    reader_.begin(std::move(needed), unit);
    std::uint64_t deg = 0;
    if (P.scheme == Scheme::Hash) {
      for (std::uint64_t r = part; r < g_.n(); r += P.p) {
        const vid_t* cols = reader_.row(r, deg);
        fn(cols, deg);
      }
    } else {
      for (std::uint64_t r = P.bounds[part]; r < P.bounds[part + 1]; ++r) {
        const vid_t* cols = reader_.row(r, deg);
        fn(cols, deg);
      }
    }
  }

  // ---- parallel block building: two passes over a row part's pinned rows ------------------
  // Where one block goes: its offsets region `off` (dense: rows + 1 offsets; packed: the
  // packed_rows.hpp image, ids then offsets) and its columns (capacity cap).
  struct BuildDest {
    eid_t* off = nullptr;
    vid_t* cols = nullptr;
    eid_t cap = 0;
    eid_t edges = 0;
    std::uint64_t nonempty = 0;  // rows with columns
    bool packed = false;
    vid_t* ids = nullptr;   // packed: set from off after `sized`
    eid_t* poff = nullptr;  // packed: R + 1 offsets
  };

  // Local rows [seg[x], seg[x + 1]) of the row part form segment x: balanced by edges for range
  // parts (contiguous rows), by rows for hash parts (rows part, part + p, ...); a few segments
  // per thread so that the pool balances them.
  std::vector<std::uint64_t> segments(std::uint32_t part, std::uint64_t R) const {
    const Partition& P = plan_.partition;
    const std::uint64_t S = std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(R, std::max<std::uint64_t>(64, 8 * threads_)));
    std::vector<std::uint64_t> seg(S + 1, 0);
    if (P.scheme == Scheme::Hash) {
      for (std::uint64_t x = 0; x < S; ++x) seg[x] = chunk_range(R, S, x).lo;
      seg[S] = R;
      return seg;
    }
    const eid_t* off = g_.offsets();
    const std::uint64_t r0 = P.bounds[part], r1 = P.bounds[part + 1];
    const eid_t e0 = off[r0], E = off[r1] - e0;
    for (std::uint64_t x = 1; x < S; ++x) {
      const eid_t target = e0 + E * x / S;
      const std::uint64_t r =
          static_cast<std::uint64_t>(std::lower_bound(off + r0, off + r1, target) - off);
      seg[x] = std::max(seg[x - 1], std::min(r, r1) - r0);
    }
    seg[S] = R;
    return seg;
  }

  // Builds the blocks G_{part, col_parts[d]} (d < q, distinct parts) into dests[d] on the pool:
  // pass 1 counts every segment's columns and rows with columns per block, a prefix over the
  // segments gives each segment its own ranges, pass 2 writes columns and offsets straight into
  // place. No intermediate buffers, no serial merge. The chunks of the part must be pinned.
  // Between the passes each block is packed (packed_rows.hpp) when that is smaller, and `sized` is
  // called with its exact columns, to allocate (or point) dests[d].off (dense: rows + 1 offsets;
  // packed: packed_bytes(nonempty) bytes) and .cols.
  void build_blocks(std::uint32_t part, const std::uint32_t* col_parts, std::size_t q,
                    BuildDest* dests, const std::function<void(std::size_t, eid_t)>& sized) {
    const Partition& P = plan_.partition;
    const bool hash = P.scheme == Scheme::Hash;
    const std::uint32_t p = P.p;
    const std::uint64_t R = P.rows(part);
    const std::uint64_t r0 = hash ? part : P.bounds[part];
    const std::uint64_t step = hash ? p : 1;
    // Every column part from `first` on, in order (col_parts[d] == first + d): hash needs all p
    // of them; a range row part's columns all lie in parts >= its own (the DAG points up), so
    // for range any suffix starting at or before `part` catches every column.
    const std::uint32_t first = q ? col_parts[0] : 0;
    bool all = hash ? q == p && first == 0 : q == p - first && first <= part;
    for (std::size_t d = 0; d < q && all; ++d) all = col_parts[d] == first + d;
    std::vector<std::int32_t> dest_of(p, -1);
    for (std::size_t d = 0; d < q; ++d) dest_of[col_parts[d]] = static_cast<std::int32_t>(d);
    for (std::size_t d = 0; d < q; ++d) {
      dests[d].edges = 0;
      dests[d].nonempty = 0;
      dests[d].packed = false;
      if (R == 0) {
        sized(d, 0);
        if (dests[d].off) dests[d].off[0] = 0;
      }
    }
    if (R == 0) return;
    const std::vector<std::uint64_t> seg = segments(part, R);
    const std::size_t S = seg.size() - 1;
    const FastDiv fd(p);
    // Range: the part of a column without a binary search (most rows of a low row part are a
    // few columns long, so the search per run dominated the build): a table of the part of every
    // 2^shift-th vertex, then a step forward over the bounds.
    const std::uint64_t* bounds = hash ? nullptr : P.bounds.data();
    const unsigned shift = coarse_shift_;
    const std::vector<std::uint32_t>& coarse = coarse_part_;
    auto part_from = [&](std::uint32_t b, vid_t c) {
      while (c >= bounds[b + 1]) ++b;
      return b;
    };
    // The runs of a sorted range row that fall into wanted column parts: f(d, s, t) for the
    // columns [s, t) of the row going to dests[d], at most once per row and block.
    auto range_runs = [&](const vid_t* cols, std::uint64_t deg, auto&& f) {
      if (all) {  // one linear scan (rows are short; columns sorted)
        if (deg == 0) return;
        std::uint32_t b = part_from(coarse[cols[0] >> shift], cols[0]);
        std::uint64_t end = bounds[b + 1], s = 0;
        for (std::uint64_t e = 1; e < deg; ++e)
          if (cols[e] >= end) {
            f(static_cast<std::size_t>(b - first), s, e);
            s = e;
            b = part_from(b, cols[e]);
            end = bounds[b + 1];
          }
        f(static_cast<std::size_t>(b - first), s, deg);
      } else {
        for (std::size_t d = 0; d < q; ++d) {
          const std::uint32_t b = col_parts[d];
          const vid_t* s = std::lower_bound(cols, cols + deg, P.bounds[b]);
          const vid_t* t = std::lower_bound(s, cols + deg, P.bounds[b + 1]);
          if (t > s)
            f(d, static_cast<std::uint64_t>(s - cols), static_cast<std::uint64_t>(t - cols));
        }
      }
    };
    // The columns of a hash row that fall into wanted blocks: f(d, local id, opens) per column,
    // `opens` for the block's first column of row i (last[d]: the block's last row seen).
    auto hash_cols = [&](const vid_t* cols, std::uint64_t deg, std::uint64_t i,
                         std::vector<std::uint64_t>& last, auto&& f) {
      for (std::uint64_t e = 0; e < deg; ++e) {
        const vid_t c = cols[e];
        const std::uint32_t quo = fd.div(c);
        const std::uint32_t b = c - quo * p;
        const std::int32_t d = all ? static_cast<std::int32_t>(b) : dest_of[b];
        if (d < 0) continue;
        const auto ud = static_cast<std::size_t>(d);
        const bool opens = last[ud] != i;
        last[ud] = i;
        f(ud, quo, opens);
      }
    };
    // row(i, cols, deg) for the local rows of segment x in order, with the segment's own
    // scratch and chunk hint (and hash_cols' last rows, passed along)
    auto segment_rows = [&](std::size_t x, auto&& row) {
      std::vector<vid_t> tmp;
      std::vector<std::uint64_t> last(hash ? q : 0, ~std::uint64_t{0});
      std::uint64_t hint = ~std::uint64_t{0};
      for (std::uint64_t i = seg[x]; i < seg[x + 1]; ++i) {
        std::uint64_t deg = 0;
        const vid_t* cols = reader_.row_pinned(r0 + i * step, deg, tmp, &hint);
        row(i, cols, deg, last);
      }
    };
    // pass 1: columns and rows with columns per segment and block
    std::vector<eid_t> base(S * q, 0);
    std::vector<std::uint64_t> rbase(S * q, 0);
    reader_.pool().run(S, [&](std::size_t x) {
      eid_t* cnt = base.data() + x * q;
      std::uint64_t* nz = rbase.data() + x * q;
      segment_rows(x, [&](std::uint64_t i, const vid_t* cols, std::uint64_t deg,
                          std::vector<std::uint64_t>& last) {
        if (hash) {
          hash_cols(cols, deg, i, last, [&](std::size_t d, vid_t, bool opens) {
            ++cnt[d];
            nz[d] += opens;
          });
        } else {
          range_runs(cols, deg, [&](std::size_t d, std::uint64_t s, std::uint64_t t) {
            cnt[d] += t - s;
            ++nz[d];
          });
        }
      });
    });
    // every segment's start per block: an exclusive prefix over the segments
    auto segment_prefix = [&](std::vector<std::uint64_t>& v, std::size_t d) {
      std::uint64_t acc = 0;
      for (std::size_t x = 0; x < S; ++x) {
        const std::uint64_t w = v[x * q + d];
        v[x * q + d] = acc;
        acc += w;
      }
      return acc;
    };
    for (std::size_t d = 0; d < q; ++d) {
      const eid_t acc = segment_prefix(base, d);
      const std::uint64_t racc = segment_prefix(rbase, d);
      BuildDest& D = dests[d];
      D.edges = acc;
      D.nonempty = racc;
      D.packed = packs(R, racc);
      sized(d, acc);
      TS_CHECK(acc <= D.cap, "a block holds more columns than planned");
      if (D.packed) {
        auto* image = reinterpret_cast<unsigned char*>(D.off);
        D.ids = packed_ids_at(image);
        D.poff = packed_offsets_at(image, racc);
        D.poff[racc] = acc;
      } else {
        D.off[0] = 0;
      }
    }
    // Dense blocks without columns (range: G_ab with b < a, the DAG points up) get zero offsets
    // in one fill per segment; the rows write the offsets of the other dense blocks only.
    std::vector<std::size_t> live;
    for (std::size_t d = 0; d < q; ++d)
      if (dests[d].edges && !dests[d].packed) live.push_back(d);
    // pass 2: columns and offsets, every segment into its own ranges
    reader_.pool().run(S, [&](std::size_t x) {
      std::vector<eid_t> cur(base.begin() + static_cast<std::ptrdiff_t>(x * q),
                             base.begin() + static_cast<std::ptrdiff_t>((x + 1) * q));
      std::vector<std::uint64_t> rcur(rbase.begin() + static_cast<std::ptrdiff_t>(x * q),
                                      rbase.begin() + static_cast<std::ptrdiff_t>((x + 1) * q));
      for (std::size_t d = 0; d < q; ++d)
        if (!dests[d].edges && !dests[d].packed)
          std::fill(dests[d].off + seg[x] + 1, dests[d].off + seg[x + 1] + 1, 0);
      // a packed block's row i gets its entry before its first column
      auto open_row = [&](std::size_t d, std::uint64_t i) {
        BuildDest& D = dests[d];
        D.ids[rcur[d]] = static_cast<vid_t>(i);
        D.poff[rcur[d]++] = cur[d];
      };
      segment_rows(x, [&](std::uint64_t i, const vid_t* cols, std::uint64_t deg,
                          std::vector<std::uint64_t>& last) {
        if (hash) {
          hash_cols(cols, deg, i, last, [&](std::size_t d, vid_t quo, bool opens) {
            if (opens && dests[d].packed) open_row(d, i);
            dests[d].cols[cur[d]++] = quo;
          });
        } else {
          range_runs(cols, deg, [&](std::size_t d, std::uint64_t s, std::uint64_t t) {
            if (dests[d].packed) open_row(d, i);
            const vid_t lo = static_cast<vid_t>(P.bounds[col_parts[d]]);
            vid_t* out = dests[d].cols + cur[d];
            for (std::uint64_t k = s; k < t; ++k) *out++ = cols[k] - lo;
            cur[d] += t - s;
          });
        }
        for (std::size_t d : live) dests[d].off[i + 1] = cur[d];
      });
    });
  }

  // Builds up to two blocks of the slot from the rows of `part` (columns filtered to
  // col_parts[o]) on the pool. Returns false when the part's chunks do not fit the chunk cache.
  bool par_walk(std::uint32_t part, int nout, const std::uint32_t* col_parts, BlockWriter** outs,
                std::int64_t unit) {
    std::vector<std::uint64_t> needed;
    rows_needed(part, needed);
    if (!reader_.pin(needed, unit)) return false;
    BuildDest d[2];
    for (int o = 0; o < nout; ++o) {
      d[o].off = outs[o]->offsets;
      d[o].cols = outs[o]->cols;
      d[o].cap = outs[o]->capacity;
    }
    build_blocks(part, col_parts, static_cast<std::size_t>(nout), d, [](std::size_t, eid_t) {});
    for (int o = 0; o < nout; ++o) {
      outs[o]->rows = plan_.partition.rows(part);
      outs[o]->edges = d[o].edges;
      outs[o]->packed = d[o].packed;
      outs[o]->packed_rows = d[o].nonempty;
    }
    return true;
  }

  // ---- the host block cache: every block G_a* of a row part built in one parallel walk ----
  // A cached block: `off` holds the dense offsets (rows + 1) or, packed, the packed image
  // (packed_bytes(packed_rows) bytes: ids, then offsets), exactly as the slot holds it.
  struct HostBlock {
    RawArray<eid_t> off;
    RawArray<vid_t> cols;
    bool packed = false;
    std::uint64_t packed_rows = 0;
    std::uint64_t bytes() const { return off.size() * sizeof(eid_t) + cols.size() * sizeof(vid_t); }
    PackedRows packed_view() const {
      return packed ? packed_image(off.data(), packed_rows) : PackedRows{};
    }
  };
  using BlockKey = std::pair<std::uint32_t, std::uint32_t>;

  // Builds row part a's blocks G_ab into the cache. With `built`, the blocks are handed to the
  // caller instead of being registered here (the preload's registrar pins them).
  bool build_row_part(std::uint32_t a, const std::vector<BlockKey>& protect, std::int64_t unit,
                      std::vector<std::shared_ptr<HostBlock>>* built = nullptr) {
    const Partition& P = plan_.partition;
    const std::uint32_t p = P.p;
    const std::uint64_t R = P.rows(a);
    // the blocks G_ab, b >= first (range: G_ab with b < a is empty and no unit needs it)
    const std::uint32_t first = plan_.partition.first_block(a);
    const std::uint32_t q = p - first;
    if (plan_.row_part_bytes.at(a) > block_cap_) return false;
    std::vector<std::uint64_t> needed;
    rows_needed(a, needed);
    if (!reader_.pin(needed, unit)) return false;
    std::vector<std::shared_ptr<HostBlock>> made(q);
    std::vector<BuildDest> dests(q);
    std::vector<std::uint32_t> parts(q);
    for (std::uint32_t d = 0; d < q; ++d) {
      parts[d] = first + d;
      made[d] = std::make_shared<HostBlock>();
    }
    const double tb = now_s();
    build_blocks(a, parts.data(), q, dests.data(), [&](std::size_t d, eid_t edges) {
      HostBlock& hb = *made[d];
      hb.packed = dests[d].packed;
      hb.packed_rows = dests[d].nonempty;
      alloc_array(hb.off, hb.packed ? packed_bytes(hb.packed_rows) / sizeof(eid_t) : R + 1);
      alloc_array(hb.cols, edges);
      dests[d].off = hb.off.data();
      dests[d].cols = hb.cols.data();
      dests[d].cap = edges;
    });
    // Direct uploads: pin the blocks with columns here, on the pool and off the driver's path
    // (a unit's empty block is registered when the unit first needs it).
    const double tr = now_s();
    rec_.span("build", unit, tb, tr, 0);
    if (built) {
      *built = made;
    } else if (direct_) {
      register_blocks(made, reader_.pool(), unit);
    }
    // insert, evicting the least recently used blocks the current unit does not need
    std::lock_guard<std::mutex> lk(bmu_);
    for (std::uint32_t d = 0; d < q; ++d) {
      const BlockKey key{a, first + d};
      blocks_.erase(key);
      const std::uint64_t add = made[d]->bytes();
      (void)blocks_.evict_for(add, [&](const BlockKey& k) {
        return std::find(protect.begin(), protect.end(), k) != protect.end();
      });
      blocks_.insert(key, made[d], add);
    }
    return true;
  }

  // A block array in the arena while it has room, else in memory of its own.
  template <class T>
  void alloc_array(RawArray<T>& a, std::size_t n) {
    if (unsigned char* p = arena_.take(std::max<std::size_t>(n, 1) * sizeof(T)))
      a.view(reinterpret_cast<T*>(p), n, arena_.registered_flag());
    else
      a.alloc(n);
  }

  // Registers the blocks with columns of a row part on `pool` (the trace's "register" span).
  void register_blocks(const std::vector<std::shared_ptr<HostBlock>>& made, ThreadPool& pool,
                       std::int64_t unit) {
    const double t0 = now_s();
    pool.run(made.size(), [&](std::size_t d) {
      if (made[d]->cols.size()) register_block(*made[d]);
    });
    rec_.span("register", unit, t0, now_s(), 0);
  }

  // Registers a cached block's arrays with the backend for direct uploads; true when both are.
  bool register_block(HostBlock& hb) {
    const bool off = hb.off.register_with(*backend_);
    return off && (hb.cols.size() == 0 || hb.cols.register_with(*backend_));
  }

  // The cached block G_ab, building row part a when missing; null when the cache cannot.
  // While the background preload runs, waits for row part key.first (only the preload builds
  // then); when the preload stopped short of it, joins the preload and builds it here.
  std::shared_ptr<HostBlock> cached_block(BlockKey key, const std::vector<BlockKey>& protect,
                                          std::int64_t unit) {
    if (builder_.joinable()) {
      bool ready;
      {
        std::unique_lock<std::mutex> lk(bmu_);
        ready = part_ready_[key.first] != 0;
        if (!ready) {
          const double w0 = now_s();
          bcv_.wait(lk, [&] { return part_ready_[key.first] || !preload_running_; });
          ready = part_ready_[key.first] != 0;
          const double w1 = now_s();
          lk.unlock();
          rec_.span("wait", unit, w0, w1, 0);
          waited_s_ += w1 - w0;
        }
      }
      if (!ready) finish_preload();
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      {
        std::lock_guard<std::mutex> lk(bmu_);
        if (auto* hit = blocks_.find(key)) return *hit;
      }
      if (attempt == 0 && !build_row_part(key.first, protect, unit)) return nullptr;
    }
    return nullptr;
  }

  // A cached block's arrays as copies to their places in the slot: the offsets region (dense,
  // or the packed image, which `direct` leaves out: the backend uploads a packed block from
  // UnitLayout::host_packed) and the columns. Marks the slot's block packed like the cached one.
  static void block_regions(const HostBlock& hb, SlotBlock& sb, bool direct,
                            std::vector<DirectUpload>& out) {
    TS_CHECK(hb.cols.size() == sb.edges &&
                 hb.off.size() * sizeof(eid_t) ==
                     (hb.packed ? packed_bytes(hb.packed_rows) : dense_offsets_bytes(sb.rows)),
             "a cached block differs from the census");
    sb.packed = hb.packed;
    sb.packed_rows = hb.packed_rows;
    if (!hb.packed || !direct)
      out.push_back({reinterpret_cast<const unsigned char*>(hb.off.data()), sb.offsets_at,
                     hb.off.size() * sizeof(eid_t)});
    if (hb.cols.size())
      out.push_back({reinterpret_cast<const unsigned char*>(hb.cols.data()), sb.cols_at,
                     hb.cols.size() * sizeof(vid_t)});
  }

 public:
  // Builds every row part's blocks when the block cache holds them all: one parallel
  // pass over the graph (the counterpart of the in-core load), after which each unit only copies
  // its blocks into its slot — or, with a backend that registers them (direct uploads), has them
  // uploaded from where they are — so the steady state has no decompression or filtering at all.
  // The pass runs on background threads, row part after row part in the order the units first
  // need them, so the first units are counted while later row parts are built (a unit waits only
  // for the row parts of its own blocks). It is a pipeline (background_preload): the chunks of
  // the next batch of row parts are decompressed while the current batch is built, and the
  // blocks built are pinned for direct uploads while the next row part is built. The chunk
  // cache (plus the host budget's spare room) holds two batches; a chunk shared by two
  // consecutive batches is decompressed once, and the first unit waits for one row part only.
  void preload_blocks() {
    if (!use_block_cache_) return;
    const Partition& P = plan_.partition;
    if (plan_.row_parts_bytes > block_cap_) return;  // every block of every row part
    std::vector<std::uint32_t> order;
    std::vector<char> seen(P.p, 0);
    for (const auto& w : plan_.units)
      for (std::uint32_t a : {w.i, w.j})
        if (!seen[a]) {
          seen[a] = 1;
          order.push_back(a);
        }
    part_ready_.assign(P.p, 0);
    direct_ = backend_ && !backend_->device_is_host();
    preload_running_ = true;
    builder_ = std::thread([this, order] { background_preload(order); });
  }

  // Waits for the background preload; rethrows its failure (a corrupt chunk).
  void finish_preload() {
    if (!builder_.joinable()) return;
    builder_.join();
    if (preload_error_) {
      std::exception_ptr e = preload_error_;
      preload_error_ = nullptr;
      std::rethrow_exception(e);
    }
  }
  // Stops the background preload after its current row part.
  void stop_preload() {
    stop_ = true;
    if (builder_.joinable()) builder_.join();
  }
  ~Preparer() { stop_preload(); }

 private:
  // The preload's batches: row parts order[x, y) whose chunks are decompressed together.
  struct PreloadBatch {
    std::size_t x = 0, y = 0;
    std::vector<std::uint64_t> chunks;  // every chunk of the batch (sorted)
    // set by the builder once the previous batch is pinned: the chunks not cached then, and
    // whether they fit beside the cache (else the builder decompresses them when it pins)
    std::vector<std::uint64_t> extra;
    bool fits = false;
    std::vector<std::shared_ptr<std::vector<vid_t>>> bufs;  // extra, decompressed ahead (fits)
  };

  // Splits the preload order into batches: the first row part alone (the first unit waits for
  // one row part only), then as many row parts as give the decompressor 2 chunks per thread,
  // each batch with the next at most the chunk cache (one is built while the next is
  // decompressed; a batch too large for that is decompressed by the builder, after the previous).
  std::vector<PreloadBatch> preload_batches(const std::vector<std::uint32_t>& order,
                                            std::uint64_t cap, unsigned threads) const {
    std::vector<PreloadBatch> out;
    std::vector<std::uint64_t> nd, merged;
    const std::size_t enough = 2 * static_cast<std::size_t>(std::max(1u, threads));
    for (std::size_t x = 0; x < order.size();) {
      PreloadBatch B;
      B.x = x;
      std::size_t y = x;
      while (y < order.size() && (y == x || (x > 0 && B.chunks.size() < enough))) {
        rows_needed(order[y], nd);
        merged.clear();
        std::set_union(B.chunks.begin(), B.chunks.end(), nd.begin(), nd.end(),
                       std::back_inserter(merged));
        if (y > x && reader_.chunk_bytes(merged) > cap / 2) break;
        B.chunks.swap(merged);
        ++y;
      }
      B.y = y;
      out.push_back(std::move(B));
      x = y;
    }
    return out;
  }

  // The preload as a three-stage pipeline over the batches, each stage on a thread of its own:
  //   1. the decompressor (a pool of its own) decompresses batch n+1's chunks that are not
  //      cached while batch n is built, when they fit beside the cache (the builder makes room
  //      for them and lists them after pinning batch n: the cache stays as it is until then);
  //   2. the builder (this thread, on the pool) pins batch n's chunks and builds its row parts;
  //   3. with direct uploads, the registrar pins each built row part's blocks for the backend,
  //      one at a time, so the builder goes on with the next row part at once.
  // A row part is ready (part_ready_) once built and, with direct uploads, registered.
  void background_preload(const std::vector<std::uint32_t>& order) {
    std::exception_ptr err;
    const std::uint64_t cap0 = reader_.cache_cap();
    std::mutex mu;  // guards the hand-overs below
    std::condition_variable cv;
    std::size_t decompressed = 0, pinned = 0;  // batches [0, decompressed) ready; [0, pinned)
    bool quit = false;                         // builder -> decompressor and registrar
    bool arena_faulted = false;                // builder -> registrar: register the arena
    std::exception_ptr stage_err;              // the decompressor's or the registrar's failure
    std::deque<std::pair<std::uint32_t, std::vector<std::shared_ptr<HostBlock>>>> to_register;
    std::thread decompressor, registrar;
    auto stop_stages = [&] {
      {
        std::lock_guard<std::mutex> lk(mu);
        quit = true;
      }
      cv.notify_all();
      if (decompressor.joinable()) decompressor.join();
      if (registrar.joinable()) registrar.join();
    };
    try {
      reader_.set_cache_cap(cap0 + preload_spare_);
      const std::uint64_t cap = reader_.cache_cap();
      std::vector<PreloadBatch> batches = preload_batches(order, cap, threads_);
      // (every core, at the decompressor's priority: the builder's pool, the preload's critical
      // path, and the driver, which issues the GPU work, come first when the cores are all busy)
      ThreadPool dpool(std::max(1u, threads_), base_nice_ + kDecompressorDrop);
      // the stages use `batches` and `dpool`: they are joined before those go, also when the
      // builder throws
      struct Joiner {
        decltype(stop_stages)& stop;
        ~Joiner() { stop(); }
      } joiner{stop_stages};
      // (the first batch: the cache is empty)
      if (!batches.empty()) {
        batches[0].extra = batches[0].chunks;
        batches[0].fits = reader_.chunk_bytes(batches[0].chunks) <= cap;
      }
      // 1. the decompressor: batch n once batch n - 1 is pinned and batch n's extra chunks known
      decompressor = std::thread([&] {
        (void)set_thread_nice(base_nice_ + kDecompressorDrop);
        try {
          for (std::size_t n = 0; n < batches.size(); ++n) {
            {
              std::unique_lock<std::mutex> lk(mu);
              cv.wait(lk, [&] { return quit || pinned >= n; });
              if (quit) return;
            }
            PreloadBatch& B = batches[n];
            if (B.fits) B.bufs = reader_.decompress(B.extra, dpool, -1);
            {
              std::lock_guard<std::mutex> lk(mu);
              decompressed = n + 1;
            }
            cv.notify_all();
          }
        } catch (...) {
          std::lock_guard<std::mutex> lk(mu);
          stage_err = std::current_exception();
          quit = true;
          cv.notify_all();
        }
      });
      // (direct uploads: the blocks go into one arena, registered first)
      if (direct_)
        (void)arena_.reserve(plan_.row_parts_bytes + 2 * std::uint64_t{plan_.partition.p} *
                                                         plan_.partition.p * PinnedArena::kAlign);
      // 3. the registrar: registers the arena once the builder has faulted it in; then, per
      // built row part, pins its blocks outside the arena, one at a time (a registration holds
      // the driver's lock, so the copies and launches the driver issues meanwhile wait: one call
      // at a time lets them in between); then the part is ready. It keeps the driver's
      // priority, which this thread has until it lowers itself below (the thread priorities).
      if (direct_)
        registrar = std::thread([&] {
          ThreadPool rpool(1);
          try {
            if (arena_.size()) {
              {
                std::unique_lock<std::mutex> lk(mu);
                cv.wait(lk, [&] { return quit || arena_faulted; });
                if (!arena_faulted) return;
              }
              const double t0 = now_s();
              (void)arena_.register_with(*backend_);  // (else its blocks go through the slots)
              rec_.span("register", -1, t0, now_s(), arena_.size());
            }
            for (;;) {
              std::pair<std::uint32_t, std::vector<std::shared_ptr<HostBlock>>> job;
              {
                std::unique_lock<std::mutex> lk(mu);
                cv.wait(lk, [&] { return quit || !to_register.empty(); });
                if (to_register.empty()) return;  // quit, and nothing left to pin
                job = std::move(to_register.front());
                to_register.pop_front();
              }
              register_blocks(job.second, rpool, -1);
              {
                std::lock_guard<std::mutex> lk(bmu_);
                part_ready_[job.first] = 1;
              }
              bcv_.notify_all();
            }
          } catch (...) {
            std::lock_guard<std::mutex> lk(mu);
            stage_err = std::current_exception();
            cv.notify_all();  // (the builder stops at its next batch)
          }
        });
      // 2. the builder, at the builder's priority from here on; first it faults the arena in
      // (while the decompressor works on the first batch) and hands it to the registrar
      (void)set_thread_nice(base_nice_ + kBuilderDrop);
      if (arena_.size()) {
        const double t0 = now_s();
        arena_.fault_in(reader_.pool());
        rec_.span("fault", -1, t0, now_s(), arena_.size());
        {
          std::lock_guard<std::mutex> lk(mu);
          arena_faulted = true;
        }
        cv.notify_all();
      }
      std::vector<std::shared_ptr<HostBlock>> made;
      for (std::size_t n = 0; n < batches.size() && !stop_; ++n) {
        PreloadBatch& B = batches[n];
        {
          std::unique_lock<std::mutex> lk(mu);
          cv.wait(lk, [&] { return decompressed > n || stage_err; });
          if (stage_err) break;
        }
        if (B.fits) reader_.adopt(B.extra, B.bufs);
        B.bufs.clear();
        // when even one row part does not fit, build_row_part says so
        const bool fits = reader_.pin(B.chunks, -1);
        if (fits && n + 1 < batches.size()) {
          PreloadBatch& N = batches[n + 1];
          N.fits = reader_.room_for(B.chunks, N.chunks, N.extra);
        }
        {
          std::lock_guard<std::mutex> lk(mu);
          pinned = n + 1;
        }
        cv.notify_all();
        const double t0 = now_s();  // (the batch's transform: its builds, not its decompression)
        bool ok = true;
        std::uint64_t bytes = 0;
        for (std::size_t x = B.x; x < B.y && ok && !stop_; ++x) {
          const std::uint32_t a = order[x];
          ok = build_row_part(a, {}, -1, &made);
          if (!ok) break;
          for (const auto& hb : made) bytes += hb->bytes();
          if (direct_) {
            {
              std::lock_guard<std::mutex> lk(mu);
              to_register.emplace_back(a, std::move(made));
            }
            cv.notify_all();
          } else {
            {
              std::lock_guard<std::mutex> lk(bmu_);
              part_ready_[a] = 1;
            }
            bcv_.notify_all();
          }
          made.clear();
        }
        rec_.span("transform", -1, t0, now_s(), bytes);
        if (!ok) break;  // the rest is built on demand
      }
      stop_stages();
      if (stage_err) std::rethrow_exception(stage_err);
      reader_.drop_cache();
      reader_.set_cache_cap(cap0);
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lk(bmu_);
      preload_error_ = err;
      preload_running_ = false;
    }
    bcv_.notify_all();
  }

  bool prepare_from_cache(const WorkUnit& w, unsigned char* slot, UnitLayout& L) {
    if (!use_block_cache_) return false;
    const bool build_a = !reuses_a(w), build_b = !w.b_is_a, build_c = !w.c_is_a && !w.c_is_b;
    std::vector<BlockKey> protect{{w.i, w.j}, {w.i, w.k}, {w.j, w.k}};
    std::shared_ptr<HostBlock> a, b, c;
    if (build_a && !(a = cached_block({w.i, w.j}, protect, L.unit)))
      return use_block_cache_ = false;
    if (build_b && !(b = cached_block({w.i, w.k}, protect, L.unit)))
      return use_block_cache_ = false;
    if (build_c && !(c = cached_block({w.j, w.k}, protect, L.unit)))
      return use_block_cache_ = false;
    // With direct uploads A's host image is always the cached block: A reused in the device
    // slot may have come by a direct upload, so the host slot need not hold it.
    std::shared_ptr<HostBlock> ra = a;
    if (direct_ && !ra && !(ra = cached_block({w.i, w.j}, protect, L.unit)))
      return use_block_cache_ = false;
    // Direct uploads: the blocks go to the device from the cache itself, with no copy into the
    // host slot — unless a block cannot be registered; then the unit goes through the host slot.
    bool direct = direct_;
    for (HostBlock* hb : {ra.get(), b.get(), c.get()})
      if (direct && hb) direct = register_block(*hb);
    std::vector<DirectUpload> regions;
    if (a) block_regions(*a, L.blocks[L.a], direct, regions);
    if (b) block_regions(*b, L.blocks[L.b], direct, regions);
    if (c) block_regions(*c, L.blocks[L.c], direct, regions);
    // (When A is uploaded through the host slot, the slot's copy is its image and its source.)
    if (direct_ && (direct || !a)) lend_image(L, L.a, ra);
    if (direct) {
      L.direct = std::move(regions);
      L.upload_from = L.bytes;  // nothing from the host slot
      if (b) lend_image(L, L.b, b);
      if (c) lend_image(L, L.c, c);
      return true;
    }
    // every block of the unit copied by every core at once
    std::vector<CopyJob> jobs;
    for (const DirectUpload& r : regions) jobs.push_back(CopyJob{slot + r.at, r.host, r.bytes});
    par_copy(copy_pool_, jobs);
    return true;
  }

  // Block bi's host image is the cached block, kept alive until the slot is prepared again.
  void lend_image(UnitLayout& L, int bi, const std::shared_ptr<HostBlock>& hb) {
    L.host_offsets[bi] = hb->packed ? nullptr : hb->off.data();
    L.host_packed[bi] = hb->packed_view();
    L.host_cols[bi] = hb->cols.data();
    keep_.push_back(hb);
  }
  void prepare_blocks(const WorkUnit& w, unsigned char* slot, UnitLayout& L) {
    if (prepare_from_cache(w, slot, L)) return;
    BlockWriter A, B, C;
    const bool build_a = !reuses_a(w);
    const bool build_b = !w.b_is_a;
    if (build_a) A.start(slot, L.blocks[L.a], L.blocks[L.a].edges);
    if (build_b) B.start(slot, L.blocks[L.b], L.blocks[L.b].edges);
    BlockWriter* outs[2];
    std::uint32_t cps[2];
    int nout = 0;
    if (build_a) {
      outs[nout] = &A;
      cps[nout++] = w.j;
    }
    if (build_b) {
      outs[nout] = &B;
      cps[nout++] = w.k;
    }
    if (nout && !par_walk(w.i, nout, cps, outs, L.unit)) {
      walk_part(
          w.i,
          [&](const vid_t* cols, std::uint64_t deg) {
            if (build_a) {
              filter_row(cols, deg, w.j, A);
              A.end_row();
            }
            if (build_b) {
              filter_row(cols, deg, w.k, B);
              B.end_row();
            }
          },
          L.unit);
    }
    TS_CHECK(!build_a || A.edges == L.blocks[L.a].edges, "block A differs from the census");
    TS_CHECK(!build_b || B.edges == L.blocks[L.b].edges, "block B differs from the census");
    if (build_a) A.mark(L.blocks[L.a]);
    if (build_b) B.mark(L.blocks[L.b]);
    if (!w.c_is_a && !w.c_is_b) {
      C.start(slot, L.blocks[L.c], L.blocks[L.c].edges);
      BlockWriter* co[1] = {&C};
      const std::uint32_t ck[1] = {w.k};
      if (!par_walk(w.j, 1, ck, co, L.unit))
        walk_part(
            w.j,
            [&](const vid_t* cols, std::uint64_t deg) {
              filter_row(cols, deg, w.k, C);
              C.end_row();
            },
            L.unit);
      TS_CHECK(C.edges == L.blocks[L.c].edges, "block C differs from the census");
      C.mark(L.blocks[L.c]);
    }
  }

  // LSTC unit: A = the rows of V_i with columns rebased into X = N+(V_i); C = the rows of X
  // restricted to X. When the chunks fit the chunk cache, both are built on the pool (A: rows
  // copied and X marked per segment; C: two passes, count then fill); otherwise by the windowed
  // sequential walk.
  void prepare_vertex(const WorkUnit& w, unsigned char* slot, UnitLayout& L, SlotState& st) {
    const Partition& P = plan_.partition;
    const std::uint64_t n = g_.n();
    const std::uint64_t r0 = P.bounds[w.i], r1 = P.bounds[w.i + 1];
    const eid_t* off = g_.offsets();
    ThreadPool& pool = reader_.pool();
    // 1. A = rows of V_i, raw global columns first; X = the set of their columns.
    const std::uint64_t words = (n + 63) / 64;
    bits_.assign(words, 0);
    BlockWriter A;
    A.start(slot, L.blocks[L.a], L.blocks[L.a].edges);
    {
      std::vector<std::uint64_t> needed;
      if (off[r0] < off[r1])
        for (std::uint64_t c = reader_.chunk_of(off[r0]); c <= reader_.chunk_of(off[r1] - 1); ++c)
          needed.push_back(c);
      const std::uint64_t R = r1 - r0;
      const eid_t e0 = off[r0], E = off[r1] - off[r0];
      if (R > 0 && reader_.pin(needed, L.unit)) {
        TS_CHECK(E <= A.capacity, "a block holds more columns than planned");
        const std::vector<std::uint64_t> seg = segments(w.i, R);
        pool.run(seg.size() - 1, [&](std::size_t x) {
          std::vector<vid_t> tmp;
          for (std::uint64_t i = seg[x]; i < seg[x + 1]; ++i) {
            const std::uint64_t r = r0 + i;
            std::uint64_t deg = 0;
            const vid_t* cols = reader_.row_pinned(r, deg, tmp);
            vid_t* out = A.cols + (off[r] - e0);
            for (std::uint64_t k = 0; k < deg; ++k) {
              const vid_t c = cols[k];
              out[k] = c;
              std::uint64_t* word = &bits_[c >> 6];
              const std::uint64_t bit = std::uint64_t{1} << (c & 63);
              if (!(__atomic_load_n(word, __ATOMIC_RELAXED) & bit))
                __atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
            }
            A.offsets[i + 1] = off[r + 1] - e0;
          }
        });
        A.rows = R;
        A.edges = E;
      } else {
        reader_.begin(std::move(needed), L.unit);
        std::uint64_t deg = 0;
        for (std::uint64_t r = r0; r < r1; ++r) {
          const vid_t* cols = reader_.row(r, deg);
          for (std::uint64_t x = 0; x < deg; ++x) {
            A.push(cols[x]);
            bits_[cols[x] >> 6] |= std::uint64_t{1} << (cols[x] & 63);
          }
          A.end_row();
        }
      }
    }
    rank_.resize(words + 1);
    std::uint64_t acc = 0;
    for (std::uint64_t x = 0; x < words; ++x) {
      rank_[x] = static_cast<std::uint32_t>(acc);
      acc += static_cast<std::uint64_t>(__builtin_popcountll(bits_[x]));
    }
    rank_[words] = static_cast<std::uint32_t>(acc);
    auto rank = [&](vid_t v) -> vid_t {
      const std::uint64_t word = bits_[v >> 6] & ((std::uint64_t{1} << (v & 63)) - 1);
      return static_cast<vid_t>(rank_[v >> 6] +
                                static_cast<std::uint32_t>(__builtin_popcountll(word)));
    };
    // A's columns rebased and the proxy list X (word x's members start at rank_[x]), in pieces
    {
      const eid_t E = A.edges;
      pool.parallel_for(E, 65536, [&](std::uint64_t lo, std::uint64_t hi) {
        for (eid_t e = lo; e < hi; ++e) A.cols[e] = rank(A.cols[e]);
      });
      st.proxies.resize(acc);
      pool.parallel_for(words, 4096, [&](std::uint64_t lo, std::uint64_t hi) {
        for (std::uint64_t wd = lo; wd < hi; ++wd) {
          std::uint32_t at = rank_[wd];
          for (std::uint64_t b = bits_[wd]; b; b &= b - 1)
            st.proxies[at++] =
                static_cast<vid_t>(wd * 64 + static_cast<std::uint64_t>(__builtin_ctzll(b)));
        }
      });
    }
    TS_CHECK(st.proxies.size() == w.c.rows, "the proxy set differs from the census");
    st.row0 = r0;
    // 2. C = proxy rows restricted to X, rebased.
    BlockWriter C;
    C.start(slot, L.blocks[L.c], L.blocks[L.c].edges);
    {
      const std::uint64_t xs = st.proxies.size();
      const std::size_t S = static_cast<std::size_t>(std::max<std::uint64_t>(
          1, std::min<std::uint64_t>(xs, std::max<std::uint64_t>(64, 8 * threads_))));
      // the chunks of the proxy rows, marked in parallel
      const auto& chunks = g_.chunks();
      std::vector<unsigned char> mark(chunks.size(), 0);
      pool.run(S, [&](std::size_t x) {
        for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
          const vid_t v = st.proxies[i];
          if (off[v] == off[v + 1]) continue;
          for (std::uint64_t c = reader_.chunk_of(off[v]); c <= reader_.chunk_of(off[v + 1] - 1);
               ++c)
            __atomic_store_n(&mark[c], static_cast<unsigned char>(1), __ATOMIC_RELAXED);
        }
      });
      std::vector<std::uint64_t> needed;
      for (std::uint64_t c = 0; c < chunks.size(); ++c)
        if (mark[c]) needed.push_back(c);
      if (xs > 0 && reader_.pin(needed, L.unit)) {
        std::vector<eid_t> base(S, 0);
        pool.run(S, [&](std::size_t x) {
          std::vector<vid_t> tmp;
          eid_t cnt = 0;
          for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
            std::uint64_t deg = 0;
            const vid_t* cols = reader_.row_pinned(st.proxies[i], deg, tmp);
            for (std::uint64_t k = 0; k < deg; ++k)
              cnt += bits_[cols[k] >> 6] >> (cols[k] & 63) & 1;
          }
          base[x] = cnt;
        });
        eid_t total = 0;
        for (std::size_t x = 0; x < S; ++x) {
          const eid_t v = base[x];
          base[x] = total;
          total += v;
        }
        TS_CHECK(total <= C.capacity, "a block holds more columns than planned");
        pool.run(S, [&](std::size_t x) {
          std::vector<vid_t> tmp;
          eid_t cur = base[x];
          for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
            std::uint64_t deg = 0;
            const vid_t* cols = reader_.row_pinned(st.proxies[i], deg, tmp);
            for (std::uint64_t k = 0; k < deg; ++k) {
              const vid_t c = cols[k];
              if (bits_[c >> 6] >> (c & 63) & 1) C.cols[cur++] = rank(c);
            }
            C.offsets[i + 1] = cur;
          }
        });
        C.rows = xs;
        C.edges = total;
      } else {
        reader_.begin(std::move(needed), L.unit);
        std::uint64_t deg = 0;
        for (vid_t v : st.proxies) {
          const vid_t* cols = reader_.row(v, deg);
          for (std::uint64_t x = 0; x < deg; ++x) {
            const vid_t c = cols[x];
            if (bits_[c >> 6] >> (c & 63) & 1) C.push(rank(c));
          }
          C.end_row();
        }
      }
    }
    const std::uint64_t xs = st.proxies.size();
    L.blocks[L.a].col_space = xs;
    L.blocks[L.c].rows = xs;
    L.blocks[L.c].col_space = xs;
    L.blocks[L.c].edges = C.edges;  // exact now (the plan had a bound)
    if (per_vertex_) {
      L.num_spaces = 2;
      L.space_rows[0] = r1 - r0;
      L.space_rows[1] = xs;
      L.u_space = 0;
      L.v_space = L.w_space = 1;
    }
  }

  const GraphSource& g_;
  const Plan& plan_;
  Recorder& rec_;
  bool per_vertex_;
  RowReader reader_;
  ThreadPool& copy_pool_;
  unsigned threads_ = 1;
  int base_nice_ = 0;  // the run's base nice value (preload)
  std::uint64_t preload_spare_ = 0;
  StreamingBackend* backend_ = nullptr;
  // (before the blocks, which may live in it: it goes after them)
  PinnedArena arena_;
  // Direct uploads: on when the preload holds every block and the backend has its own device
  // memory; the cached blocks are then registered with it and uploaded from where they are.
  std::atomic<bool> direct_{false};
  std::vector<std::shared_ptr<const void>> keep_;  // the unit being prepared's cached blocks
  double waited_s_ = 0;                            // this unit's waits for the background preload
  // the background preload: row parts built so far, guarded by bmu_ (with blocks_)
  std::thread builder_;
  std::mutex bmu_;
  std::condition_variable bcv_;
  std::vector<char> part_ready_;
  bool preload_running_ = false;
  std::exception_ptr preload_error_;
  std::atomic<bool> stop_{false};
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> rank_;
  LruCache<BlockKey, std::shared_ptr<HostBlock>> blocks_;
  std::uint64_t block_cap_ = 0;
  unsigned coarse_shift_ = 0;
  std::vector<std::uint32_t> coarse_part_;
  bool use_block_cache_ = false;
  bool reuse_ok_ = true;
  std::size_t spans_seen_ = 0;
};

// ---- the CPU backend ---------------------------------------------------------------------------
class CpuBackend final : public StreamingBackend {
 public:
  CpuBackend(std::unique_ptr<Counter> counter, const CpuBackendOptions& o)
      : counter_(std::move(counter)), opts_(o) {
    TS_CHECK(counter_ != nullptr, "the CPU streaming backend needs a counter");
    worker_ = std::thread([this] { loop(); });
  }
  ~CpuBackend() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  std::string name() const override { return "cpu"; }
  std::string describe() const override { return counter_->describe(); }
  bool device_is_host() const override { return true; }
  std::uint64_t free_device_bytes() override { return opts_.simulated_device_bytes; }
  void set_clock_origin(double t) override { origin_ = t; }
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    const std::uint64_t need =
        static_cast<std::uint64_t>(slots) * (slot_bytes + pv_rows * sizeof(count_t));
    if (opts_.simulated_device_bytes && need > opts_.simulated_device_bytes)
      throw DeviceOutOfMemory("out of memory: " + std::to_string(need) + " bytes requested, " +
                                  std::to_string(opts_.simulated_device_bytes) +
                                  " available (simulated)",
                              need);
    for (int s = 0; s < 2; ++s) {
      slot_[s].mem.clear();
      slot_[s].pv.clear();
    }
    for (int s = 0; s < slots; ++s) {
      slot_[s].mem.assign(slot_bytes / 8 + kAlign / 8 + 1, 0);
      slot_[s].pv.assign(pv_rows, 0);
      slot_[s].pieces.clear();
    }
    slot_bytes_ = slot_bytes;
    staging_.clear();
    piece_bytes_ = 0;
  }
  unsigned char* host_slot(int s) override { return aligned(slot_[s].mem); }
  // Streamed staging on the CPU: the slots stay in host memory (they are the "device"), so this
  // saves nothing; the pieces are copied into them synchronously, which runs the driver's
  // streamed path exactly as on CUDA.
  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    TS_CHECK(buffers >= 1 && piece_bytes > 0, "streamed staging needs buffers");
    allocate(slots, slot_bytes, pv_rows);
    staging_.assign(static_cast<std::size_t>(buffers), {});
    for (auto& b : staging_) b.assign(piece_bytes / 8 + kAlign / 8 + 1, 0);
    piece_bytes_ = piece_bytes;
  }
  unsigned char* staging_buffer(int b) override {
    return aligned(staging_.at(static_cast<std::size_t>(b)));
  }
  void wait_staging(int) override {}  // the copies are synchronous
  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    TS_CHECK(bytes <= piece_bytes_ && at + bytes <= slot_bytes_,
             "a staging piece lies outside its slot");
    UploadPiece piece;
    piece.start = now_s() - origin_;
    std::memcpy(host_slot(s) + at, staging_buffer(b), bytes);
    piece.end = now_s() - origin_;
    piece.bytes = bytes;
    std::lock_guard<std::mutex> lk(mu_);
    slot_[s].pieces.push_back(piece);
  }
  void upload_async(int, const UnitLayout&) override {}  // the slot is the device memory
  void count_async(int s, const UnitLayout& L) override {
    std::lock_guard<std::mutex> lk(mu_);
    slot_[s].layout = L;
    slot_[s].pending = true;
    slot_[s].done = false;
    slot_[s].error = nullptr;
    queue_.push_back(s);
    cv_.notify_all();
  }
  bool poll(int s) override {
    std::lock_guard<std::mutex> lk(mu_);
    return !slot_[s].pending || slot_[s].done;
  }
  SlotResult wait(int s) override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return !slot_[s].pending || slot_[s].done; });
    slot_[s].pending = false;
    if (slot_[s].error) std::rethrow_exception(slot_[s].error);
    SlotResult r = slot_[s].result;
    r.upload_pieces.swap(slot_[s].pieces);
    slot_[s].pieces.clear();
    return r;
  }
  void release() override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
    for (auto& sl : slot_) {
      std::vector<std::uint64_t>().swap(sl.mem);
      std::vector<count_t>().swap(sl.pv);
      sl.pieces.clear();
      sl.pending = false;
    }
    std::vector<std::vector<std::uint64_t>>().swap(staging_);
    slot_bytes_ = piece_bytes_ = 0;
  }

 private:
  struct Slot {
    std::vector<std::uint64_t> mem;
    std::vector<count_t> pv;
    UnitLayout layout;
    bool pending = false, done = false;
    SlotResult result;
    std::exception_ptr error;
    std::vector<UploadPiece> pieces;  // streamed staging: this unit's copies so far
  };
  // The first kAlign-aligned byte of a buffer allocated with kAlign bytes to spare.
  static unsigned char* aligned(std::vector<std::uint64_t>& buf) {
    auto* p = reinterpret_cast<unsigned char*>(buf.data());
    return reinterpret_cast<unsigned char*>(align_up(reinterpret_cast<std::uintptr_t>(p)));
  }
  void loop() {
    for (;;) {
      int s;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (stop_ && queue_.empty()) return;
        s = queue_.front();
        queue_.pop_front();
        busy_ = true;
      }
      SlotResult r;
      std::exception_ptr err;
      try {
        run(s, r);
      } catch (...) {
        err = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        slot_[s].result = r;
        slot_[s].error = err;
        slot_[s].done = true;
        busy_ = false;
      }
      done_cv_.notify_all();
    }
  }
  void run(int s, SlotResult& r) {
    const UnitLayout& L = slot_[s].layout;
    unsigned char* base = host_slot(s);
    // Packed blocks: their images lie in the slot where the dense offsets go (or elsewhere in
    // host memory); copied aside, then expanded in place.
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (!b.packed || !L.uploads(bi)) continue;
      const PackedRows& hp = L.host_packed[bi];
      TS_CHECK(hp.valid() && hp.count == b.packed_rows && hp.edges() == b.edges,
               "a packed block without its host image");
      std::vector<vid_t> ids(hp.ids, hp.ids + hp.count);
      std::vector<eid_t> offs(hp.offsets, hp.offsets + hp.count + 1);
      expand_packed(PackedRows{hp.count, ids.data(), offs.data()}, b.rows,
                    reinterpret_cast<eid_t*>(base + b.offsets_at));
    }
    auto view = [&](int bi) {
      const SlotBlock& b = L.blocks[bi];
      return CsrView{b.rows, reinterpret_cast<const eid_t*>(base + b.offsets_at),
                     reinterpret_cast<const vid_t*>(base + b.cols_at), b.col_space};
    };
    PerVertexOut pv;
    count_t* spaces[3] = {nullptr, nullptr, nullptr};
    if (L.per_vertex) {
      std::uint64_t at = 0;
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = slot_[s].pv.data() + at;
        std::fill(spaces[x], spaces[x] + L.space_rows[x], 0);
        at += L.space_rows[x];
      }
      TS_CHECK(at <= slot_[s].pv.size(), "per-vertex arrays larger than planned");
      pv = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    std::vector<eid_t> window;
    const CsrView C = counted_c(L, view(L.c), window);
    r.kernel_start = now_s() - origin_;
    r.triangles = counter_->count(view(L.a), view(L.b), C, pv);
    r.kernel_end = now_s() - origin_;
    for (int x = 0; x < 3; ++x) r.per_vertex[x] = spaces[x];
  }

  std::unique_ptr<Counter> counter_;
  CpuBackendOptions opts_;
  Slot slot_[2];
  std::vector<std::vector<std::uint64_t>> staging_;  // streamed staging buffers
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  double origin_ = 0;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<int> queue_;
  bool stop_ = false, busy_ = false;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<StreamingBackend> make_cpu_streaming_backend(std::unique_ptr<Counter> counter,
                                                             const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(std::move(counter), options);
}

// ---- slices ------------------------------------------------------------------------------------
std::vector<std::uint64_t> slice_bounds(const UnitLayout& L, std::uint32_t slices) {
  TS_CHECK(slices >= 1, "a unit of no slices");
  const std::uint64_t a_rows = L.blocks[L.a].rows, c_rows = L.blocks[L.c].rows;
  const eid_t* a_off = L.host_offsets[L.a];
  const PackedRows& a_pk = L.host_packed[L.a];
  const eid_t* b_off = L.host_offsets[L.b];
  const PackedRows& b_pk = L.host_packed[L.b];
  const eid_t* c_off = L.host_offsets[L.c];
  const PackedRows& c_pk = L.host_packed[L.c];
  const vid_t* a_cols = L.host_cols[L.a];
  if ((!a_off && !a_pk.valid()) || (!b_off && !b_pk.valid()) || (!c_off && !c_pk.valid()) ||
      (!a_cols && L.blocks[L.a].edges > 0))
    throw Error(ErrorKind::Internal, "a unit's slices need the host images of A, B and C");
  // 1. The estimated work of every middle vertex v: hashing C(v), and probing it with B(u) for
  // each of its in-edges u -> v in A.
  std::vector<double> work(c_rows, 0.0);
  for (std::uint64_t v = 0; v < c_rows; ++v)
    work[v] = static_cast<double>(c_off ? c_off[v + 1] - c_off[v] : c_pk.degree(v));
  auto add_row = [&](std::uint64_t u, eid_t e0, eid_t e1) {
    const double probe = static_cast<double>(b_off ? b_off[u + 1] - b_off[u] : b_pk.degree(u)) + 1;
    for (eid_t e = e0; e < e1; ++e)
      if (a_cols[e] < c_rows) work[a_cols[e]] += probe;
  };
  if (a_off) {
    for (std::uint64_t u = 0; u < a_rows; ++u) add_row(u, a_off[u], a_off[u + 1]);
  } else {
    for (std::uint64_t x = 0; x < a_pk.count; ++x)
      add_row(a_pk.ids[x], a_pk.offsets[x], a_pk.offsets[x + 1]);
  }
  // 2. Boundary x: the first row before which at least x / slices of the work lies (by rows
  // when there is no work); boundary 0 is 0 and boundary `slices` is C's rows.
  double total = 0;
  for (double w : work) total += w;
  std::vector<std::uint64_t> bounds(slices + 1, c_rows);
  bounds[0] = 0;
  if (total <= 0) {
    for (std::uint32_t x = 1; x < slices; ++x) bounds[x] = c_rows * x / slices;
    return bounds;
  }
  double sum = 0;
  std::uint32_t x = 1;
  for (std::uint64_t v = 0; v < c_rows && x < slices; ++v) {
    while (x < slices && sum >= total * x / slices) bounds[x++] = v;
    sum += work[v];
  }
  return bounds;
}

// ---- the driver --------------------------------------------------------------------------------
CountReport run_plan(const GraphSource& g, const Plan& plan, StreamingBackend& backend,
                     const PipelineOptions& options) {
  CountReport rep;
  rep.plan = plan;
  PipelineStats& st = rep.stats;
  st.backend = backend.name();
  st.scheme = scheme_name(plan.partition.scheme);
  st.parts = plan.partition.p;
  st.device_budget = plan.device_budget;
  st.host_budget = plan.host_budget;
  st.slot_bytes = plan.slot_bytes;
  if (options.per_vertex) rep.per_vertex.assign(g.n(), 0);
  const double origin = now_s();
  Recorder rec;
  rec.origin = origin;
  rec.stats = &st;
  backend.set_clock_origin(origin);
  if (plan.units.empty()) {
    st.wall_s = now_s() - origin;
    st.finish_from_spans();
    return rep;
  }
  const unsigned threads = resolve_threads(options.threads);
  // the thread priorities (above): this thread drives the GPU; the copy pool works for it; the
  // pool builds blocks (the background preload's builder, or this thread's own prepares)
  PriorityBoost boost(kDriverBoost);
  ThreadPool pool(std::max(1u, threads), boost.base() + kBuilderDrop);
  ThreadPool copy_pool(std::max(1u, threads));
  Plan tuned;  // the plan with the tests' cache and staging overrides
  const Plan* use = &plan;
  if (options.chunk_cache_bytes >= 0 || options.block_cache_bytes >= 0 ||
      options.piece_bytes >= 0) {
    tuned = plan;
    if (options.chunk_cache_bytes >= 0)
      tuned.chunk_cache_bytes = static_cast<std::uint64_t>(options.chunk_cache_bytes);
    if (options.block_cache_bytes >= 0)
      tuned.block_cache_bytes = static_cast<std::uint64_t>(options.block_cache_bytes);
    if (options.piece_bytes >= 0) {
      const bool streamed = options.piece_bytes > 0 && plan.partition.p <= 1;
      tuned.piece_bytes = streamed ? static_cast<std::uint64_t>(options.piece_bytes) : 0;
      tuned.staging_buffers = streamed ? static_cast<std::uint32_t>(options.staging_buffers) : 0;
    }
    use = &tuned;
  }
  const bool streamed = use->streamed_staging();
  TS_CHECK(!streamed || (plan.partition.p <= 1 && use->staging_buffers >= 1),
           "streamed staging is planned for the in-core unit only");
  // The host budget's room the plan left unused (beyond its estimate and both caches) lets the
  // preload decompress more chunks at once; not when the tests force the caches' sizes.
  std::uint64_t spare = 0;
  if (use == &plan && plan.host_budget) {
    const std::uint64_t used = plan.host_bytes + plan.chunk_cache_bytes + plan.block_cache_bytes;
    spare = plan.host_budget > used ? plan.host_budget - used : 0;
  }
  Preparer prep(g, *use, pool, copy_pool, rec, options.per_vertex, spare, &backend);
  struct Guard {
    StreamingBackend& b;
    ~Guard() {
      try {
        b.release();
      } catch (...) {
      }
    }
  } guard{backend};
  const std::uint64_t pv_rows = options.per_vertex ? plan.per_vertex_rows : 0;
  // The device block cache (when the plan has one and the backend keeps blocks): every block
  // travels with its key and its next use.
  const bool device_cache =
      backend.use_device_cache(streamed ? 0 : plan.device_cache_bytes) && !streamed;
  // Units in flight: the two slots, or with the device block cache the plan's lanes (uploads
  // then run up to that many units ahead of the kernels).
  const int nslots = device_cache ? std::max(plan.slots, plan.in_flight) : plan.slots;
  TS_CHECK(nslots >= 1 && nslots <= 31, "units in flight out of range");
  std::vector<SlotState> slots(static_cast<std::size_t>(nslots));
  prep.set_slots(nslots);
  std::vector<std::uint64_t> next_use;
  if (device_cache) next_use = device_cache_next_uses(plan);
  auto mark_cached = [&](std::size_t u, UnitLayout& L) {
    const WorkUnit& w = plan.units[u];
    const BlockInfo* roles[3] = {&w.a, &w.b, &w.c};
    const int index[3] = {L.a, L.b, L.c};
    for (int r = 0; r < 3; ++r) {
      L.blocks[index[r]].cache_key = device_cache_key(plan, *roles[r]);
      L.blocks[index[r]].next_use = next_use[3 * u + static_cast<std::size_t>(r)];
    }
  };
  if (streamed)
    backend.allocate_streamed(nslots, plan.slot_bytes, pv_rows,
                              static_cast<int>(use->staging_buffers), use->piece_bytes);
  else
    backend.allocate(nslots, plan.slot_bytes, pv_rows);

  const Partition& P = plan.partition;
  auto collect = [&](int s) {
    SlotState& ss = slots[s];
    if (ss.unit < 0) return;
    const double w0 = now_s();
    SlotResult r = backend.wait(s);
    const double w1 = now_s();
    rec.span("wait", ss.unit, w0, w1, 0);
    rep.triangles += r.triangles;
    const UnitLayout& L = ss.layout;
    if (!r.upload_pieces.empty()) {  // streamed staging: a span per piece
      for (const UploadPiece& piece : r.upload_pieces)
        rec.span("upload", ss.unit, origin + piece.start, origin + piece.end, piece.bytes);
    } else if (r.upload_start >= 0) {
      const std::uint64_t up =
          r.uploaded_bytes >= 0 ? static_cast<std::uint64_t>(r.uploaded_bytes) : L.upload_bytes();
      rec.span("upload", ss.unit, origin + r.upload_start, origin + r.upload_end, up);
    }
    st.device_cache_hit_bytes += r.cache_hit_bytes;
    if (r.kernel_start >= 0)
      rec.span("kernel", ss.unit, origin + r.kernel_start, origin + r.kernel_end, L.bytes);
    if (options.per_vertex) {
      // Each space maps its rows to distinct vertices, so its rows are added in parallel pieces;
      // spaces one after another (a vertex scheme's proxies may include its own rows).
      for (int x = 0; x < L.num_spaces; ++x) {
        const count_t* c = r.per_vertex[x];
        if (!c) continue;
        const std::uint64_t rows = L.space_rows[x];
        copy_pool.parallel_for(rows, 65536, [&](std::uint64_t l0, std::uint64_t l1) {
          if (P.p <= 1) {
            for (std::uint64_t l = l0; l < l1; ++l) rep.per_vertex[l] += c[l];
          } else if (P.scheme == Scheme::Vertex) {
            if (x == 0)
              for (std::uint64_t l = l0; l < l1; ++l) rep.per_vertex[ss.row0 + l] += c[l];
            else
              for (std::uint64_t l = l0; l < l1; ++l) rep.per_vertex[ss.proxies[l]] += c[l];
          } else {
            const std::uint32_t part = ss.space_part[x];
            for (std::uint64_t l = l0; l < l1; ++l) rep.per_vertex[P.global_of(part, l)] += c[l];
          }
        });
      }
    }
    ++st.units;
    ss.unit = -1;
    if (options.on_unit_done) options.on_unit_done(st.units, plan.units.size(), now_s() - origin);
  };

  // More than two units in flight (the device block cache): units are collected in order, the
  // oldest early when the cache lacks room for the next unit's blocks. Only two host slots
  // exist; a unit that builds into one (not everything lent by the host block cache) takes
  // them in turn, after the unit that used the same one last has been collected.
  std::deque<std::size_t> flying;
  std::int64_t host_user[2] = {-1, -1};
  int next_host = 0;
  auto collect_through = [&](std::int64_t unit) {
    while (!flying.empty() && static_cast<std::int64_t>(flying.front()) <= unit) {
      collect(static_cast<int>(flying.front() % static_cast<std::size_t>(nslots)));
      flying.pop_front();
    }
  };
  auto uses_host_slot = [&](const UnitLayout& L, const unsigned char* h) {
    if (!h) return false;
    auto in = [&](const void* q) {
      const auto* c = static_cast<const unsigned char*>(q);
      return c && c >= h && c < h + plan.slot_bytes;
    };
    if (L.upload_from < L.bytes) return true;
    for (const DirectUpload& d : L.direct)
      if (in(d.host)) return true;
    for (int bi = 0; bi < L.num_blocks; ++bi)
      if (in(L.host_offsets[bi]) || in(L.host_packed[bi].ids) ||
          (L.blocks[bi].edges && in(L.host_cols[bi])))
        return true;
    return false;
  };

  // the slice boundaries of each sliced task (slice_bounds), from its first slice to its last
  std::map<std::array<std::uint32_t, 4>, std::vector<std::uint64_t>> slice_cache;
  prep.preload(boost.base());
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    if (interrupt_requested()) {
      rep.interrupted = true;
      break;
    }
    const int s = static_cast<int>(u % static_cast<std::size_t>(nslots));
    // the slot's previous unit (u - nslots) has finished before its memory is reused
    collect_through(static_cast<std::int64_t>(u) - nslots);
    // with more than two slots, the host slot whose turn it is (the slot's own otherwise)
    const int h = nslots > 2 ? next_host : s;
    if (nslots > 2) collect_through(host_user[h]);  // the host slot's last user has finished
    if (streamed) {
      Staging sg;
      sg.backend = &backend;
      sg.slot = s;
      sg.buffers = static_cast<int>(use->staging_buffers);
      sg.piece_bytes = use->piece_bytes;
      if (!prep.prepare(u, nullptr, slots[s], &sg)) {  // SIGINT between two pieces
        rep.interrupted = true;
        break;
      }
    } else {
      prep.prepare(u, backend.host_slot(h), slots[s]);
    }
    if (plan.units[u].slices > 1) {  // a slice: its middle vertices, cut once per task
      const WorkUnit& w = plan.units[u];
      const std::array<std::uint32_t, 4> key{w.i, w.j, w.k, w.slices};
      auto it = slice_cache.find(key);
      if (it == slice_cache.end())
        it = slice_cache.emplace(key, slice_bounds(slots[s].layout, w.slices)).first;
      UnitLayout& L = slots[s].layout;
      L.sliced = true;
      L.v_begin = it->second.at(w.slice);
      L.v_end = it->second.at(w.slice + 1);
      if (w.slice + 1 == w.slices) slice_cache.erase(it);  // the task's last slice
    }
    if (nslots > 2 && uses_host_slot(slots[s].layout, backend.host_slot(h))) {
      host_user[h] = static_cast<std::int64_t>(u);
      next_host ^= 1;
    }
    if (device_cache) {
      mark_cached(u, slots[s].layout);
      while (!flying.empty() && !backend.device_cache_fits(slots[s].layout))
        collect_through(static_cast<std::int64_t>(flying.front()));
    }
    backend.upload_async(s, slots[s].layout);
    backend.count_async(s, slots[s].layout);
    flying.push_back(u);
  }
  // drain in unit order
  if (!rep.interrupted) {
    collect_through(static_cast<std::int64_t>(plan.units.size()));
  } else {
    for (int s = 0; s < nslots; ++s) {
      try {
        collect(s);
      } catch (...) {
      }
    }
  }
  if (rep.interrupted)
    prep.stop_preload();
  else
    prep.finish_preload();
  st.chunk_cache_peak_bytes = prep.chunk_cache_peak_bytes();
  st.wall_s = now_s() - origin;
  st.finish_from_spans();
  return rep;
}

PlanOptions resolve_plan_options(const PipelineOptions& options, StreamingBackend* backend) {
  PlanOptions po;
  po.scheme = options.scheme;
  po.parts = options.parts;
  po.per_vertex = options.per_vertex;
  po.threads = options.threads;
  po.rates = options.plan_rates;
  po.device_is_host = backend ? backend->device_is_host() : true;
  if (options.gpu_memory) {
    po.device_budget = options.gpu_memory;
  } else if (backend) {
    const std::uint64_t free = backend->free_device_bytes();
    if (backend->device_is_host()) {
      po.device_budget = free;  // 0: no device limit beyond host memory
    } else if (free) {
      const std::uint64_t reserve = std::max<std::uint64_t>(512ull << 20, free / 16);
      po.device_budget = free > 2 * reserve ? free - reserve : free / 2;
    }
  }
  po.host_budget = options.host_memory ? options.host_memory : default_host_budget();
  return po;
}

CountReport count_with_backend(const GraphSource& g, const PipelineOptions& options,
                               StreamingBackend& backend) {
  PlanOptions po = resolve_plan_options(options, &backend);
  std::uint64_t replans = 0;
  for (;;) {
    const double t0 = now_s();
    Census census;
    Plan plan = plan_graph(g, po, &census);
    const double plan_s = now_s() - t0 - census.seconds;
    try {
      CountReport rep = run_plan(g, plan, backend, options);
      rep.stats.replans = replans;
      rep.stats.census_s = census.seconds;
      rep.stats.plan_s = plan_s;
      if (!options.trace_path.empty()) rep.stats.write_trace(options.trace_path);
      return rep;
    } catch (const DeviceOutOfMemory& e) {
      backend.release();
      if (static_cast<int>(replans) >= options.max_replans) throw;
      ++replans;
      const std::uint64_t had =
          po.device_budget ? std::min(po.device_budget, plan.device_bytes) : plan.device_bytes;
      po.device_budget = std::max<std::uint64_t>(had / 2, 1);
      po.parts = 0;  // let the planner choose a larger p
    }
  }
}

}  // namespace tristream

namespace tristream {

namespace {
unsigned degree_threads(unsigned threads) {
  return resolve_threads(threads);
}
}  // namespace

std::vector<eid_t> streamed_degrees(const GraphSource& g, unsigned threads) {
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  std::vector<eid_t> d(n);
  for (std::uint64_t u = 0; u < n; ++u) d[u] = off[u + 1] - off[u];
  ThreadPool pool(degree_threads(threads));
  const auto& chunks = g.chunks();
  pool.run(chunks.size(), [&](std::size_t k) {
    std::vector<vid_t> buf(chunks[k].edges);
    g.read_chunk(k, buf.data());
    for (vid_t v : buf) {
      TS_CHECK(v < n, "column id out of range");
      __atomic_fetch_add(&d[v], eid_t{1}, __ATOMIC_RELAXED);
    }
  });
  return d;
}

std::uint64_t streamed_degrees_bytes(const GraphSource& g, unsigned threads) {
  std::uint64_t max_chunk = 0;
  for (const auto& c : g.chunks())
    max_chunk = std::max<std::uint64_t>(max_chunk, c.edges * sizeof(vid_t));
  return g.n() * sizeof(eid_t) + degree_threads(threads) * max_chunk;
}

}  // namespace tristream
