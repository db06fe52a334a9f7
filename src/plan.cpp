// plan.cpp — partitions, the block census and the planner (tristream/plan.hpp).
#include "tristream/plan.hpp"
#include "plan_internal.hpp"
#include "units.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <initializer_list>
#include <numeric>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "common/json.hpp"
#include "tristream/device_cache.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace {

constexpr std::uint64_t kAlign = 256;
// Hash blocks cut every row into p pieces and lose the rank order inside a block, so their
// kernels run slower per edge than range blocks of the same size: on the H100, Kronecker 25 at
// 1/4 of its footprint, hash p = 8 counted 1.80 s of kernel time where range p = 19 took 1.19 s
// (wall 4.30 s vs 3.44 s) while moving 12% fewer bytes. Their estimated bytes are scaled by this
// factor before the comparison (bench/RESULTS.md).
constexpr double kHashCostFactor = 1.25;
// Range cuts the planner tries for every p (build_plan's `variant`): balanced by out-edges, by
// out- plus in-edges, by bytes.
constexpr int kRangeCuts = 3;
std::uint64_t align_up(std::uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

unsigned resolve_threads(unsigned t) {
  if (t) return t;
  unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}

// ---- an in-memory source --------------------------------------------------------------------
class MemorySource final : public GraphSource {
 public:
  MemorySource(const OrientedGraph& g, std::uint64_t chunk_edges) : g_(g) {
    if (chunk_edges == 0) chunk_edges = 1;
    const eid_t m = g.m();
    const eid_t* off = g.csr.offsets.data();
    for (eid_t e = 0; e < m; e += chunk_edges) {
      tcsr::ChunkInfo c;
      c.first_edge = e;
      c.edges = std::min<eid_t>(chunk_edges, m - e);
      // first_row: the row holding edge e (the last row whose offset <= e with a non-empty row).
      c.first_row = static_cast<std::uint64_t>(std::upper_bound(off, off + g.n() + 1, e) - off - 1);
      const std::uint64_t last_row = static_cast<std::uint64_t>(
          std::upper_bound(off, off + g.n() + 1, e + c.edges - 1) - off - 1);
      c.rows = last_row - c.first_row + 1;
      c.raw_size = c.edges * sizeof(vid_t);
      c.compressed_size = c.raw_size;
      c.file_offset = e * sizeof(vid_t);
      chunks_.push_back(c);
    }
  }
  std::string name() const override { return "<memory>"; }
  std::uint64_t n() const override { return g_.n(); }
  eid_t m() const override { return g_.m(); }
  const eid_t* offsets() const override { return g_.csr.offsets.data(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return chunks_; }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    TS_CHECK(k < chunks_.size(), "chunk index out of range");
    const auto& c = chunks_[k];
    std::memcpy(out, g_.csr.cols.data() + c.first_edge, c.edges * sizeof(vid_t));
  }
  std::uint64_t compressed_bytes() const override { return g_.m() * sizeof(vid_t); }

 private:
  const OrientedGraph& g_;
  std::vector<tcsr::ChunkInfo> chunks_;
};

}  // namespace

std::unique_ptr<GraphSource> memory_source(const OrientedGraph& g, std::uint64_t chunk_edges) {
  return std::make_unique<MemorySource>(g, chunk_edges);
}

// ---- schemes and partitions -------------------------------------------------------------------
std::string scheme_name(Scheme s) {
  switch (s) {
    case Scheme::Auto:
      return "auto";
    case Scheme::Range:
      return "range";
    case Scheme::Hash:
      return "hash";
    case Scheme::Vertex:
      return "vertex";
  }
  return "?";
}

Scheme parse_scheme(const std::string& name) {
  if (name == "auto") return Scheme::Auto;
  if (name == "range") return Scheme::Range;
  if (name == "hash") return Scheme::Hash;
  if (name == "vertex") return Scheme::Vertex;
  throw Error(ErrorKind::Usage,
              "--scheme: unknown scheme '" + name + "' (use auto, range, hash or vertex)");
}

std::uint32_t Partition::part_of(std::uint64_t x) const {
  if (p <= 1) return 0;
  if (scheme == Scheme::Hash) return static_cast<std::uint32_t>(x % p);
  auto it = std::upper_bound(bounds.begin(), bounds.end(), x);
  return static_cast<std::uint32_t>(it - bounds.begin() - 1);
}

std::uint64_t Partition::local_of(std::uint64_t x) const {
  if (p <= 1) return x;
  if (scheme == Scheme::Hash) return x / p;
  return x - bounds[part_of(x)];
}

std::uint64_t Partition::global_of(std::uint32_t a, std::uint64_t l) const {
  if (p <= 1) return l;
  if (scheme == Scheme::Hash) return l * p + a;
  return bounds[a] + l;
}

std::uint64_t Partition::rows(std::uint32_t a) const {
  if (p <= 1) return n;
  if (scheme == Scheme::Hash) return a < n ? (n - a + p - 1) / p : 0;
  return bounds[a + 1] - bounds[a];
}

std::vector<std::uint64_t> balanced_bounds(std::uint64_t n, const eid_t* off, std::uint32_t p,
                                           bool by_wedges) {
  std::vector<std::uint64_t> b(p + 1, 0);
  b[p] = n;
  if (p <= 1) return b;
  auto weight = [&](std::uint64_t r) -> double {
    const double d = static_cast<double>(off[r + 1] - off[r]);
    return by_wedges ? d * (d - 1) / 2 + d : d;
  };
  double total = 0;
  if (by_wedges) {
    for (std::uint64_t r = 0; r < n; ++r) total += weight(r);
  } else {
    total = static_cast<double>(n ? off[n] - off[0] : 0);
  }
  if (total <= 0) {
    for (std::uint32_t a = 1; a < p; ++a) b[a] = n * a / p;
    return b;
  }
  if (!by_wedges) {
    for (std::uint32_t a = 1; a < p; ++a) {
      const eid_t target = off[0] + static_cast<eid_t>(std::ceil(total * a / p));
      // first row r whose prefix (edges of rows < r) reaches the target
      b[a] = static_cast<std::uint64_t>(std::lower_bound(off, off + n + 1, target) - off);
      b[a] = std::min<std::uint64_t>(std::max(b[a], b[a - 1]), n);
    }
    return b;
  }
  double acc = 0;
  std::uint32_t a = 1;
  for (std::uint64_t r = 0; r < n && a < p; ++r) {
    acc += weight(r);
    while (a < p && acc >= total * a / p) b[a++] = r + 1;
  }
  for (; a < p; ++a) b[a] = n;
  return b;
}

// ---- census ------------------------------------------------------------------------------------
Census take_census(const GraphSource& g, const CensusOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Census c;
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  const auto& chunks = g.chunks();
  // Fine range buckets: half cut by out-edges, half by rows (the high ranks hold few out-edges
  // but the hubs' columns), merged, without empty buckets.
  {
    const std::uint32_t F = static_cast<std::uint32_t>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(options.fine, std::max<std::uint64_t>(n, 1))));
    auto b = balanced_bounds(n, off, std::max<std::uint32_t>(1, F / 2), false);
    const std::uint32_t R = std::max<std::uint32_t>(1, F - F / 2);
    for (std::uint32_t a = 1; a < R; ++a) b.push_back(n * a / R);
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (b.size() < 2) b = {0, n};
    c.fine_bounds = std::move(b);
  }
  const std::uint32_t F = static_cast<std::uint32_t>(c.fine_bounds.size() - 1);
  const std::uint32_t H = std::max<std::uint32_t>(1, options.hash_mod);
  c.hash_mod = H;
  const std::uint32_t G = std::max<std::uint32_t>(1, options.vertex_groups);
  c.vertex_bounds = balanced_bounds(n, off, G, true);
  const std::uint64_t words = (n + 63) / 64;
  const bool want_vertex = options.vertex;
  std::vector<std::uint64_t> bitmaps(want_vertex ? static_cast<std::size_t>(G) * words : 0, 0);

  unsigned T = std::max<unsigned>(1, std::min<unsigned>(resolve_threads(options.threads),
                                                        std::max<std::size_t>(chunks.size(), 1)));
  if (options.max_bytes) {  // each thread holds an F x F histogram and one decompressed chunk
    std::uint64_t max_chunk = 0;
    for (const auto& ch : chunks)
      max_chunk = std::max<std::uint64_t>(max_chunk, ch.edges * sizeof(vid_t));
    const std::uint64_t fixed = bitmaps.size() * 8 + n * 2;
    const std::uint64_t per = static_cast<std::uint64_t>(F) * F * sizeof(eid_t) + max_chunk;
    const std::uint64_t room = options.max_bytes > fixed ? options.max_bytes - fixed : 0;
    T = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(T, room / per)));
  }
  std::vector<std::vector<eid_t>> fine_local(T), hash_local(T);
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> raw{0};
  std::vector<std::exception_ptr> errors(T);
  auto worker = [&](unsigned t) {
    try {
      auto& fh = fine_local[t];
      auto& hh = hash_local[t];
      fh.assign(static_cast<std::size_t>(F) * F, 0);
      hh.assign(static_cast<std::size_t>(H) * H, 0);
      std::vector<vid_t> buf;
      for (;;) {
        const std::uint64_t k = next.fetch_add(1);
        if (k >= chunks.size()) break;
        const auto& ch = chunks[k];
        buf.resize(ch.edges);
        g.read_chunk(k, buf.data());
        raw += ch.edges * sizeof(vid_t);
        const eid_t e0 = ch.first_edge, e1 = ch.first_edge + ch.edges;
        std::uint64_t r = ch.first_row;
        std::uint32_t fu = static_cast<std::uint32_t>(
            std::upper_bound(c.fine_bounds.begin(), c.fine_bounds.end(), r) -
            c.fine_bounds.begin() - 1);
        std::uint32_t gu = static_cast<std::uint32_t>(
            std::upper_bound(c.vertex_bounds.begin(), c.vertex_bounds.end(), r) -
            c.vertex_bounds.begin() - 1);
        for (; r < n && off[r] < e1; ++r) {
          const eid_t s = std::max(off[r], e0), e = std::min(off[r + 1], e1);
          if (s >= e) continue;
          while (fu + 1 < F && r >= c.fine_bounds[fu + 1]) ++fu;
          while (gu + 1 < G && r >= c.vertex_bounds[gu + 1]) ++gu;
          const vid_t* col = buf.data() + (s - e0);
          const std::size_t cnt = e - s;
          std::uint32_t fv = static_cast<std::uint32_t>(
              std::upper_bound(c.fine_bounds.begin(), c.fine_bounds.end(), col[0]) -
              c.fine_bounds.begin() - 1);
          eid_t* frow = fh.data() + static_cast<std::size_t>(fu) * F;
          eid_t* hrow = hh.data() + static_cast<std::size_t>(r % H) * H;
          if (want_vertex) {
            std::uint64_t* bm = bitmaps.data() + static_cast<std::size_t>(gu) * words;
            for (std::size_t x = 0; x < cnt; ++x) {
              const vid_t v = col[x];
              while (fv + 1 < F && v >= c.fine_bounds[fv + 1]) ++fv;
              ++frow[fv];
              ++hrow[v % H];
              __atomic_fetch_or(&bm[v >> 6], std::uint64_t{1} << (v & 63), __ATOMIC_RELAXED);
            }
          } else {
            for (std::size_t x = 0; x < cnt; ++x) {
              const vid_t v = col[x];
              while (fv + 1 < F && v >= c.fine_bounds[fv + 1]) ++fv;
              ++frow[fv];
              ++hrow[v % H];
            }
          }
        }
      }
    } catch (...) {
      errors[t] = std::current_exception();
      next = chunks.size();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < T; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  c.fine_hist.assign(static_cast<std::size_t>(F) * F, 0);
  c.hash_hist.assign(static_cast<std::size_t>(H) * H, 0);
  for (unsigned t = 0; t < T; ++t) {
    if (fine_local[t].empty()) continue;
    for (std::size_t x = 0; x < c.fine_hist.size(); ++x) c.fine_hist[x] += fine_local[t][x];
    for (std::size_t x = 0; x < c.hash_hist.size(); ++x) c.hash_hist[x] += hash_local[t][x];
  }
  c.decompressed_bytes = raw.load();
  if (!want_vertex) {
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
  }
  // Vertex candidates: every p dividing G, parts = unions of consecutive groups.
  std::vector<std::uint64_t> acc(words);
  std::vector<std::uint32_t> cand_p;
  for (std::uint32_t p = 1; p <= G; ++p) {
    if (G % p) continue;
    cand_p.push_back(p);
    Census::VertexParts vp;
    vp.p = p;
    const std::uint32_t per = G / p;
    for (std::uint32_t a = 0; a < p; ++a) {
      std::fill(acc.begin(), acc.end(), 0);
      for (std::uint32_t gi = a * per; gi < (a + 1) * per; ++gi) {
        const std::uint64_t* bm = bitmaps.data() + static_cast<std::size_t>(gi) * words;
        for (std::uint64_t w = 0; w < words; ++w) acc[w] |= bm[w];
      }
      std::uint64_t cnt = 0;
      eid_t deg = 0;
      for (std::uint64_t w = 0; w < words; ++w) {
        std::uint64_t x = acc[w];
        cnt += static_cast<std::uint64_t>(__builtin_popcountll(x));
        while (x) {
          const std::uint64_t v = w * 64 + static_cast<std::uint64_t>(__builtin_ctzll(x));
          deg += off[v + 1] - off[v];
          x &= x - 1;
        }
      }
      vp.proxies.push_back(cnt);
      vp.proxy_edges_bound.push_back(deg);
    }
    c.vertex.push_back(std::move(vp));
  }
  // Could any vertex candidate fit the device budget? At least two units of A_i (the rows of
  // V_i with their edges) plus the offsets of X_i each; when none can, the exact pass below
  // cannot change the plan (the upper bounds rule the candidates out too) and is skipped.
  bool may_fit = options.device_budget == 0;
  for (std::size_t ci = 0; ci < cand_p.size() && !may_fit; ++ci) {
    const std::uint32_t p = cand_p[ci], per = G / p;
    if (p < 2) continue;  // not a vertex candidate (that is the in-core plan)
    std::uint64_t unit = 0;
    for (std::uint32_t a = 0; a < p; ++a) {
      const std::uint64_t r0 = c.vertex_bounds[a * per], r1 = c.vertex_bounds[(a + 1) * per];
      unit = std::max(unit, block_bytes(r1 - r0, off[r1] - off[r0]) +
                                align_up((c.vertex[ci].proxies[a] + 1) * sizeof(eid_t)));
    }
    may_fit = 2 * unit <= options.device_budget;
  }
  // Exact proxy blocks (G <= 16): a second pass counts, for every candidate part, the edges
  // v -> w with both ends in X. mask[v] holds the groups whose X contains v; a per-candidate
  // table folds a group mask into a part mask.
  if (G <= 16 && n > 0 && may_fit) {
    c.vertex_exact = true;
    std::vector<std::uint16_t> mask(n, 0);
    for (std::uint32_t gi = 0; gi < G; ++gi) {
      const std::uint64_t* bm = bitmaps.data() + static_cast<std::size_t>(gi) * words;
      for (std::uint64_t w = 0; w < words; ++w)
        for (std::uint64_t x = bm[w]; x; x &= x - 1)
          mask[w * 64 + static_cast<std::uint64_t>(__builtin_ctzll(x))] |=
              static_cast<std::uint16_t>(1u << gi);
    }
    std::vector<std::uint64_t>().swap(bitmaps);
    const std::size_t C = cand_p.size();
    const std::size_t TM = std::size_t{1} << G;
    std::vector<std::uint16_t> table(C * TM, 0);
    for (std::size_t ci = 0; ci < C; ++ci) {
      const std::uint32_t per = G / cand_p[ci];
      for (std::size_t x = 0; x < TM; ++x) {
        std::uint16_t r = 0;
        for (std::uint32_t gi = 0; gi < G; ++gi)
          if (x >> gi & 1) r = static_cast<std::uint16_t>(r | (1u << (gi / per)));
        table[ci * TM + x] = r;
      }
    }
    std::vector<std::vector<eid_t>> counts(T, std::vector<eid_t>(C * 16, 0));
    next = 0;
    auto pass2 = [&](unsigned t) {
      try {
        auto& cnt = counts[t];
        std::vector<vid_t> buf;
        for (;;) {
          const std::uint64_t k = next.fetch_add(1);
          if (k >= chunks.size()) break;
          const auto& ch = chunks[k];
          bool any = false;
          for (std::uint64_t r = ch.first_row; r < n && r < ch.first_row + ch.rows; ++r)
            any |= mask[r] != 0;
          if (!any) continue;  // no proxy row here
          buf.resize(ch.edges);
          g.read_chunk(k, buf.data());
          raw += ch.edges * sizeof(vid_t);
          const eid_t e0 = ch.first_edge, e1 = ch.first_edge + ch.edges;
          for (std::uint64_t r = ch.first_row; r < n && off[r] < e1; ++r) {
            const std::uint16_t mv = mask[r];
            if (!mv) continue;
            const eid_t s0 = std::max(off[r], e0), s1 = std::min(off[r + 1], e1);
            for (eid_t e = s0; e < s1; ++e) {
              const std::uint16_t mw = mask[buf[e - e0]];
              if (!mw) continue;
              for (std::size_t ci = 0; ci < C; ++ci) {
                std::uint32_t x = table[ci * TM + mv] & table[ci * TM + mw];
                while (x) {
                  ++cnt[ci * 16 + static_cast<std::size_t>(__builtin_ctz(x))];
                  x &= x - 1;
                }
              }
            }
          }
        }
      } catch (...) {
        errors[t] = std::current_exception();
        next = chunks.size();
      }
    };
    std::vector<std::thread> pool2;
    for (unsigned t = 1; t < T; ++t) pool2.emplace_back(pass2, t);
    pass2(0);
    for (auto& th : pool2) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    for (std::size_t ci = 0; ci < C; ++ci)
      for (std::uint32_t a = 0; a < cand_p[ci]; ++a) {
        eid_t sum = 0;
        for (unsigned t = 0; t < T; ++t) sum += counts[t][ci * 16 + a];
        c.vertex[ci].proxy_edges_bound[a] = sum;  // exact
      }
    c.decompressed_bytes = raw.load();
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

const std::vector<eid_t>& Census::fine_prefix() const {
  const std::size_t F = fine_bounds.empty() ? 0 : fine_bounds.size() - 1;
  const std::size_t W = F + 1;
  if (fine_prefix_.size() == W * W) return fine_prefix_;
  fine_prefix_.assign(W * W, 0);
  for (std::size_t x = 0; x < F; ++x)
    for (std::size_t y = 0; y < F; ++y)
      fine_prefix_[(x + 1) * W + (y + 1)] = fine_hist[x * F + y] + fine_prefix_[x * W + (y + 1)] +
                                            fine_prefix_[(x + 1) * W + y] - fine_prefix_[x * W + y];
  return fine_prefix_;
}

// ---- planner -----------------------------------------------------------------------------------
std::uint64_t block_bytes(std::uint64_t rows, eid_t edges) {
  return device_block_bytes(rows, edges);
}

std::uint64_t packed_block_bytes(std::uint64_t rows, eid_t edges) {
  const std::uint64_t offsets =
      std::min(dense_offsets_bytes(rows), packed_bytes(std::min<std::uint64_t>(rows, edges)));
  return offsets + edges * sizeof(vid_t);
}

std::uint64_t in_core_bytes(std::uint64_t n, eid_t m, bool per_vertex) {
  return block_bytes(n, m) + (per_vertex ? n * sizeof(count_t) : 0);
}

namespace {

struct HostModel {
  std::uint64_t n = 0;
  std::uint64_t max_chunk_raw = 0;
  unsigned threads = 1;
};

// The host bytes of a plan: row offsets, staging (`staging` bytes: the full slots or the ring of
// streamed staging), the decompression window, per-vertex arrays, the vertex scheme's sets.
std::uint64_t host_need(const HostModel& h, const Plan& plan, bool per_vertex, bool vertex_scheme,
                        std::uint64_t max_proxies, std::uint32_t window, std::uint64_t staging) {
  std::uint64_t b = (h.n + 1) * sizeof(eid_t);                // the file's row offsets
  b += staging;                                               // staging slots or pieces
  b += static_cast<std::uint64_t>(window) * h.max_chunk_raw;  // decompressed chunks
  if (per_vertex) b += h.n * sizeof(count_t) + plan.slots * plan.per_vertex_rows * sizeof(count_t);
  if (vertex_scheme)  // per slot: bitmap + rank of X, the X list
    b += plan.slots * ((h.n + 63) / 64 * 12 + max_proxies * sizeof(vid_t));
  return b;
}

// Streamed staging for a candidate whose full host slots do not fit the host budget: the
// in-core plan (p = 1, one unit) with a device (not the CPU backend's host memory) may build and
// upload its unit in pieces through a ring of kStagingBuffers host buffers. The pieces take what
// the budget leaves after the offsets and a window of two chunks (the columns are decompressed
// straight into the pieces), up to max(threads x largest chunk, 16 MiB) so a piece's chunks keep
// every core busy, at most kMaxStagingPiece and never more than the slot; at least
// kMinStagingPiece (or the whole slot when it is smaller). When two buffers would leave pieces
// of fewer chunks than threads, one buffer of twice the size is used instead: a piece's chunks
// are decompressed in parallel and the next piece waits for its upload, which is far shorter
// than building it (Kronecker 25 under a cgroup: 41 MiB pieces held 5 chunks of 8 MiB for 16
// threads). On success sets the plan's staging fields, *window (2) and *host; otherwise leaves
// everything as it was.
void streamed_staging(const HostModel& hm, Plan& plan, const PlanOptions& o, bool vs,
                      std::uint64_t max_prox, std::uint32_t* window, std::uint64_t* host) {
  if (o.device_is_host || o.host_budget == 0 || plan.partition.p > 1 || plan.units.size() != 1)
    return;
  const std::uint64_t fixed = host_need(hm, plan, o.per_vertex, vs, max_prox, 2, 0);
  if (fixed >= o.host_budget) return;
  const std::uint64_t width = static_cast<std::uint64_t>(hm.threads) * hm.max_chunk_raw;
  const std::uint32_t buffers =
      (o.host_budget - fixed) / kStagingBuffers < width ? 1 : kStagingBuffers;
  const std::uint64_t room = (o.host_budget - fixed) / buffers;
  const std::uint64_t target =
      std::min<std::uint64_t>(kMaxStagingPiece, std::max<std::uint64_t>(16ull << 20, width));
  std::uint64_t piece = std::min({room, target, align_up(plan.slot_bytes)});
  piece = piece / kAlign * kAlign;
  if (piece == 0 || piece < std::min(kMinStagingPiece, align_up(plan.slot_bytes))) return;
  const std::uint64_t ring = static_cast<std::uint64_t>(buffers) * piece;
  if (fixed + ring >= *host) return;  // no saving (a slot smaller than the ring)
  plan.piece_bytes = piece;
  plan.staging_buffers = buffers;
  *window = 2;
  *host = fixed + ring;
}

struct Candidate {
  Plan plan;  // units dropped except for the best candidate (memory)
  std::size_t units = 0;
  bool feasible = false;
  std::uint64_t host = 0, device = 0;
  double cost = 0;
};

// Runs the device block cache over the plan's units (device_cache.hpp): sets every unit's
// upload_bytes to its blocks the cache does not hold, and returns their sum.
std::uint64_t simulate_device_cache(Plan& plan) {
  const std::vector<std::uint64_t> next = device_cache_next_uses(plan);
  DeviceBlockCache cache(plan.device_cache_bytes);
  std::uint64_t moved = 0;
  const std::size_t lanes = static_cast<std::size_t>(std::max(1, plan.in_flight));
  std::deque<std::size_t> flying;  // units in flight, oldest first (as the pipeline collects)
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    WorkUnit& w = plan.units[u];
    const int owner = static_cast<int>(u % lanes);
    w.upload_after = -1;
    if (!flying.empty() && flying.front() + lanes == u) {  // the lane's previous unit
      cache.release(owner);
      w.upload_after = static_cast<std::int64_t>(flying.front());
      flying.pop_front();
    }
    const BlockInfo* roles[3] = {&w.a, w.b_is_a ? nullptr : &w.b,
                                 w.c_is_a || w.c_is_b ? nullptr : &w.c};
    DeviceBlockCache::Request req[3];
    std::uint64_t up[3];
    int n = 0;
    for (int r = 0; r < 3; ++r)
      if (roles[r]) {
        req[n] = {device_cache_key(plan, *roles[r]), roles[r]->bytes, next[3 * u + r]};
        up[n++] = roles[r]->upload_bytes;
      }
    while (!cache.fits(req, n) && !flying.empty()) {  // collect the oldest early
      cache.release(static_cast<int>(flying.front() % lanes));
      w.upload_after = static_cast<std::int64_t>(flying.front());
      flying.pop_front();
    }
    bool hit[3];
    cache.admit(req, n, owner, hit);
    flying.push_back(u);
    w.upload_bytes = 0;
    for (int x = 0; x < n; ++x) w.upload_bytes += hit[x] ? 0 : up[x];
    moved += w.upload_bytes;
  }
  return moved;
}

void finish_units(Plan& plan, bool per_vertex, int in_flight = kDeviceCacheInFlight) {
  std::uint64_t slot = 0, pv = 0, moved = 0, dec = 0;
  double work = 0, maxw = 0;
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    auto& w = plan.units[u];
    // a field summed over the unit's distinct blocks (A, and B and C unless they are A or B)
    auto distinct = [&w](std::uint64_t BlockInfo::*f, bool with_a) {
      std::uint64_t sum = with_a ? w.a.*f : 0;
      if (!w.b_is_a) sum += w.b.*f;
      if (!w.c_is_a && !w.c_is_b) sum += w.c.*f;
      return sum;
    };
    const std::uint64_t blocks = distinct(&BlockInfo::bytes, true);
    w.slot_bytes = blocks;
    // per-vertex spaces: range/hash spaces are parts i, j, k; vertex: rows of V_i and X_i
    std::uint64_t rows = 0;
    if (per_vertex) {
      if (plan.partition.scheme == Scheme::Vertex && plan.partition.p > 1) {
        rows = w.a.rows + w.c.rows;
      } else {
        std::uint32_t parts[3] = {w.i, w.j, w.k};
        std::uint64_t prow[3] = {w.a.rows, w.c.rows, w.c.col_space};
        for (int s = 0; s < 3; ++s) {
          bool dup = false;
          for (int t = 0; t < s; ++t) dup |= parts[t] == parts[s];
          if (!dup) rows += prow[s];
        }
      }
    }
    w.device_bytes = blocks + rows * sizeof(count_t);
    w.reuse_a = false;
    if (u >= 2) {
      const auto& prev = plan.units[u - 2];
      w.reuse_a = plan.partition.scheme != Scheme::Vertex && plan.partition.p > 1 &&
                  prev.a.row_part == w.a.row_part && prev.a.col_part == w.a.col_part;
    }
    w.upload_bytes = distinct(&BlockInfo::upload_bytes, !w.reuse_a);
    slot = std::max(slot, blocks);
    pv = std::max(pv, rows);
    moved += w.upload_bytes;
    dec += w.decompress_bytes;
    work += w.work;
    maxw = std::max(maxw, w.work);
  }
  plan.slots = plan.units.size() >= 2 ? 2 : 1;
  plan.slot_bytes = slot;
  plan.per_vertex_rows = pv;
  plan.device_bytes = plan.slots * (slot + pv * sizeof(count_t));
  // The device block cache: the slots' bytes hold blocks for later units; a unit uploads only
  // the blocks the cache does not hold when its upload is planned (simulated here exactly as the
  // backend runs it).
  plan.device_cache_bytes = 0;
  plan.in_flight = plan.slots;
  if (plan.partition.scheme != Scheme::Vertex && plan.partition.p > 1) {
    plan.device_cache_bytes = plan.slots * slot;
    if (!per_vertex) plan.in_flight = std::max(plan.slots, in_flight);
    moved = simulate_device_cache(plan);
  }
  plan.bytes_moved = moved;
  plan.bytes_decompressed = dec;
  plan.total_work = work;
  plan.imbalance = plan.units.empty() || work <= 0 ? 1.0 : maxw / (work / plan.units.size());
}

// A unit's kernel seconds and an upload's seconds at the plan's rates (PlanRates).
double kernel_seconds(const Plan& plan, const WorkUnit& w) {
  return plan.rates.kernel_s_per_unit + w.work / plan.rates.kernel_work_per_s;
}
double upload_seconds(const Plan& plan, double bytes) {
  return bytes / plan.rates.upload_bytes_per_s;
}

double cold_upload_bytes(const WorkUnit& w) {
  double b = static_cast<double>(w.a.upload_bytes);
  if (!w.b_is_a) b += static_cast<double>(w.b.upload_bytes);
  if (!w.c_is_a && !w.c_is_b) b += static_cast<double>(w.c.upload_bytes);
  return b;
}

// The upload seconds the kernels do not hide, estimated: the copy engine and the compute engine
// as a two-stage line (a unit's kernel after its upload and the previous kernel; its upload
// after the previous upload and the kernel of the unit it waits for: WorkUnit::upload_after with
// the device block cache, whose room that replay follows, else the unit `in_flight` before it),
// each unit taking its estimated seconds; the host is assumed to keep up. *makespan gets the end
// of the last kernel.
double estimated_exposed_upload(const Plan& plan, double* makespan = nullptr) {
  const std::size_t U = plan.units.size();
  const std::size_t lanes = static_cast<std::size_t>(std::max(1, plan.in_flight));
  std::vector<double> ke(U, 0);
  double ue = 0, kend = 0, exposed = 0;
  for (std::size_t u = 0; u < U; ++u) {
    const double up = upload_seconds(plan, static_cast<double>(plan.units[u].upload_bytes));
    const std::int64_t after =
        plan.device_cache_bytes ? plan.units[u].upload_after
                                : static_cast<std::int64_t>(u) - static_cast<std::int64_t>(lanes);
    const double us = std::max(ue, after >= 0 ? ke[static_cast<std::size_t>(after)] : 0.0);
    ue = us + up;
    // the upload overlaps the kernels running in [us, ue): the previous kernels end by kend,
    // and run back to back from the first one that had not finished at us
    const double covered = std::max(0.0, std::min(ue, kend) - us);
    exposed += up - std::min(up, covered);
    const double ks = std::max(ue, kend);
    kend = ks + kernel_seconds(plan, plan.units[u]);
    ke[u] = kend;
  }
  if (makespan) *makespan = kend;
  return exposed;
}

// The tail cover's slices: at least this many seconds of kernel each (a launch's fixed cost is
// PlanRates::kernel_s_per_unit), at most this many per moved unit.
constexpr double kCoverSliceSeconds = 1e-3;
constexpr std::uint64_t kMaxCoverSlices = 128;

// With the device block cache and uploads running ahead of the kernels, an upload is hidden when
// kernels run beside it. Range orders end with the low row parts: millions of short rows, many
// bytes to upload and little work, so the tail of the order is upload-bound. This moves units
// of much work and few bytes from the head of the order into that tail, cut into slices
// spread so that each covers the uploads around it, when the estimate (estimated_exposed_upload,
// after the cache replay of the new order) says fewer upload seconds are left exposed. Returns the
// units moved.
std::size_t cover_upload_tail(Plan& plan, bool per_vertex) {
  std::vector<WorkUnit>& U = plan.units;
  if (plan.device_cache_bytes == 0 || plan.in_flight <= 2 || U.size() < 8) return 0;
  // a unit's upload seconds beyond its kernel's
  auto surplus = [&](std::size_t u) {
    return upload_seconds(plan, static_cast<double>(U[u].upload_bytes)) -
           kernel_seconds(plan, U[u]);
  };
  // 1. The suffix whose uploads exceed its kernels the most.
  double sum = 0, excess = 0;
  std::size_t tail = U.size();
  for (std::size_t x = U.size(); x-- > 0;) {
    sum += surplus(x);
    if (sum > excess) {
      excess = sum;
      tail = x;
    }
  }
  if (excess <= 0 || tail == 0) return 0;
  // 2. Donors from the head, most kernel time per second of a cold upload first, until their
  // net cover (kernel minus cold upload) reaches the excess.
  std::vector<std::size_t> cand(tail);
  std::iota(cand.begin(), cand.end(), std::size_t{0});
  auto net = [&](std::size_t u) {
    return kernel_seconds(plan, U[u]) - upload_seconds(plan, cold_upload_bytes(U[u]));
  };
  auto ratio = [&](std::size_t u) { return U[u].work / (cold_upload_bytes(U[u]) + 1.0); };
  std::stable_sort(cand.begin(), cand.end(),
                   [&](std::size_t x, std::size_t y) { return ratio(x) > ratio(y); });
  std::vector<char> donor(U.size(), 0);
  std::vector<std::size_t> donors;
  double got = 0;
  for (std::size_t c : cand) {
    if (got >= excess || net(c) <= 0) break;
    donor[c] = 1;
    donors.push_back(c);
    got += net(c);
  }
  if (donors.empty()) return 0;
  std::sort(donors.begin(), donors.end());  // they keep their relative order
  // 3. Each donor cut into slices (WorkUnit::slices) whose kernels are about what the tail
  // leaves exposed per unit, at least kCoverSliceSeconds each (a launch has its fixed cost): the
  // device's room lets uploads run only a few units ahead, so one long kernel hides the uploads
  // of the few units that fit beside it, while slices spread through the tail hide them all. The
  // slices of a donor keep its blocks on the device between them (their next use is near), so
  // only the first uploads.
  struct Piece {
    std::size_t unit;
    std::uint32_t slice, slices;
    double net;
  };
  const double per_tail_unit = excess / static_cast<double>(U.size() - tail);
  const double slice_s = std::max(kCoverSliceSeconds, per_tail_unit);
  std::vector<Piece> pieces;
  for (std::size_t d : donors) {
    const double work_s = kernel_seconds(plan, U[d]) - plan.rates.kernel_s_per_unit;
    std::uint64_t S = static_cast<std::uint64_t>(std::llround(std::max(1.0, work_s / slice_s)));
    S = std::min<std::uint64_t>({S, kMaxCoverSlices, std::max<std::uint64_t>(1, U[d].a.rows)});
    if (per_vertex || U[d].slices > 1) S = 1;
    for (std::uint64_t x = 0; x < S; ++x)
      pieces.push_back({d, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(S),
                        net(d) / static_cast<double>(S)});
  }
  auto piece_unit = [&](const Piece& pc) {
    return pc.slices > 1 ? plan_internal::unit_slice(U[pc.unit], pc.slice, pc.slices) : U[pc.unit];
  };
  auto first_slice = [](const Piece& pc) { return pc.slices > 1 && pc.slice == 0; };
  // 4. The new order: the head without the donors; then the first slice of each donor cut into
  // slices, which uploads all of the donor's blocks (the later slices find them on the device):
  // at the end of the head the head's last kernels hide that upload, while inside the tail it
  // could follow a drained device (the tail's units wait for the preload to build their row
  // part, and the driver issues units in order); then the tail, with a piece placed wherever
  // the tail's uploads since the last piece have outgrown its kernels by the piece's cover.
  std::vector<WorkUnit> order;
  order.reserve(U.size() + pieces.size());
  for (std::size_t u = 0; u < tail; ++u)
    if (!donor[u]) order.push_back(U[u]);
  for (const Piece& pc : pieces)
    if (first_slice(pc)) order.push_back(piece_unit(pc));
  std::size_t next = 0;
  double owed = 0;
  for (std::size_t u = tail; u < U.size(); ++u) {
    order.push_back(U[u]);
    owed += surplus(u);
    for (; next < pieces.size() && (first_slice(pieces[next]) || owed >= pieces[next].net); ++next)
      if (!first_slice(pieces[next])) {
        owed -= pieces[next].net;
        order.push_back(piece_unit(pieces[next]));
      }
  }
  for (; next < pieces.size(); ++next)
    if (!first_slice(pieces[next])) order.push_back(piece_unit(pieces[next]));
  // 5. Kept only when the estimate improves (the moved units may now miss the cache).
  const double before = estimated_exposed_upload(plan);
  Plan trial = plan;
  trial.units = std::move(order);
  finish_units(trial, per_vertex, plan.in_flight);
  const double after = estimated_exposed_upload(trial);
  if (after >= before) return 0;
  trial.tail_cover_slices = pieces.size();
  plan = std::move(trial);
  return donors.size();
}

// Reorders each range task's units (a run of one i) by k, then j: the column order
// (Plan::column_order). Units cut into slices keep their slices together.
void column_order(Plan& plan) {
  std::vector<WorkUnit>& U = plan.units;
  for (std::size_t x = 0; x < U.size();) {
    std::size_t y = x + 1;
    while (y < U.size() && U[y].i == U[x].i) ++y;
    std::stable_sort(
        U.begin() + static_cast<std::ptrdiff_t>(x), U.begin() + static_cast<std::ptrdiff_t>(y),
        [](const WorkUnit& a, const WorkUnit& b) { return a.k != b.k ? a.k < b.k : a.j < b.j; });
    x = y;
  }
  plan.column_order = true;
}

// Units of a range or hash partition from a p x p edge matrix.
void block_units(Plan& plan, const std::vector<eid_t>& E, const eid_t* off, eid_t m) {
  const Partition& P = plan.partition;
  const std::uint32_t p = P.p;
  const bool range = P.scheme == Scheme::Range;
  std::vector<eid_t> row_edges(p, 0);  // edges of the rows of each part
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = 0; b < p; ++b) row_edges[a] += E[a * p + b];
  auto block = [&](std::uint32_t a, std::uint32_t b) {
    BlockInfo bi;
    bi.row_part = a;
    bi.col_part = b;
    bi.rows = P.rows(a);
    bi.edges = E[a * p + b];
    bi.col_space = P.rows(b);
    bi.bytes = block_bytes(bi.rows, bi.edges);
    bi.upload_bytes = packed_block_bytes(bi.rows, bi.edges);
    return bi;
  };
  auto walk_bytes = [&](std::uint32_t a) -> std::uint64_t {
    // range rows are contiguous; hash rows are spread over (almost) every chunk
    return (range ? row_edges[a] : m) * sizeof(vid_t);
  };
  (void)off;
  // what the host block cache needs: all blocks of one row part, of every row part
  plan.row_part_max_bytes = plan.row_parts_bytes = plan.row_part_chunk_bytes = 0;
  plan.row_part_bytes.assign(p, 0);
  for (std::uint32_t a = 0; a < p; ++a) {
    // the blocks G_ab with b >= first_block(a) (range: those below the diagonal are empty),
    // each with dense or packed offsets, whichever is smaller
    std::uint64_t b = 0;
    for (std::uint32_t c = P.first_block(a); c < p; ++c)
      b += packed_block_bytes(P.rows(a), E[a * p + c]);
    plan.row_part_bytes[a] = b;
    plan.row_part_max_bytes = std::max(plan.row_part_max_bytes, b);
    plan.row_parts_bytes += b;
    plan.row_part_chunk_bytes = std::max<std::uint64_t>(plan.row_part_chunk_bytes, walk_bytes(a));
  }
  // Order: range tasks by descending i (the row part of A and B), then j >= i, then k >= j, so
  // that the units needing only row parts i..p-1 (A, B from row part i, C from row part j >= i)
  // come first and the pipeline counts them while lower row parts are still being built. The
  // high row parts are few rows holding the dense core: cheap to build and the most work, so
  // kernels start at once and the heavy units overlap the build of the low row parts (millions
  // of short rows, the longest to build and the least work). Hash tasks by i, j, k. Either way
  // A = G_ij stays for the run of k, and the slot keeps it (reuse_a).
  for (std::uint32_t x = 0; x < p; ++x)
    for (std::uint32_t y = range ? p - 1 - x : 0; y < p; ++y)
      for (std::uint32_t k = range ? y : 0; k < p; ++k) {
        const std::uint32_t i = range ? p - 1 - x : x, j = y;
        const eid_t eij = E[i * p + j], eik = E[i * p + k], ejk = E[j * p + k];
        if (eij == 0 || eik == 0 || ejk == 0) continue;  // pruned: no triangle possible
        WorkUnit w;
        w.i = i;
        w.j = j;
        w.k = k;
        w.a = block(i, j);
        w.b = block(i, k);
        w.c = block(j, k);
        w.b_is_a = j == k;
        w.c_is_a = i == j && j == k;
        w.c_is_b = i == j;
        w.decompress_bytes = walk_bytes(i) + (i == j ? 0 : walk_bytes(j));
        const double ri = std::max<double>(1, static_cast<double>(w.a.rows));
        const double rj = std::max<double>(1, static_cast<double>(w.c.rows));
        w.work = static_cast<double>(eij) *
                 (static_cast<double>(eik) / ri + static_cast<double>(ejk) / rj);
        plan.units.push_back(w);
      }
}

// The single in-core unit.
void in_core_unit(Plan& plan, std::uint64_t n, eid_t m, const eid_t* off) {
  plan.partition = Partition{};
  plan.partition.scheme = Scheme::Range;
  plan.partition.p = 1;
  plan.partition.n = n;
  plan.partition.bounds = {0, n};
  if (m == 0) return;
  WorkUnit w;
  BlockInfo b;
  b.rows = n;
  b.edges = m;
  b.col_space = n;
  b.bytes = b.upload_bytes = block_bytes(n, m);
  w.a = w.b = w.c = b;
  w.b_is_a = w.c_is_a = w.c_is_b = true;
  w.decompress_bytes = m * sizeof(vid_t);
  double wedges = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    const double d = static_cast<double>(off[r + 1] - off[r]);
    wedges += d * (d - 1) / 2;
  }
  w.work = wedges;
  plan.units.push_back(w);
}

Plan build_plan(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                const eid_t* off, const Census& census, bool per_vertex) {
  Plan plan;
  if (p <= 1 || m == 0) {
    in_core_unit(plan, n, m, off);
    finish_units(plan, per_vertex);
    return plan;
  }
  Partition& P = plan.partition;
  P.scheme = scheme;
  P.p = p;
  P.n = n;
  if (scheme == Scheme::Range) {
    const auto& fb = census.fine_bounds;
    const std::uint32_t F = static_cast<std::uint32_t>(fb.size() - 1);
    // group fine buckets into p parts balanced by out-edges (variant 0), by out- plus in-edges
    // (variant 1: blocks balanced as rows and as columns, BBTC's symmetric cut), or by bytes
    // (variant 2: 4 per column and 8 per row, an offsets entry — in rank order the first parts
    // hold millions of short rows, whose offsets, repeated in each of their blocks, make the
    // largest units; at Kronecker 24 and a quarter of the footprint this cut fits p = 17 where
    // the others need 20 and more, moving fewer bytes)
    std::vector<double> weight(F, 0);
    for (std::uint32_t x = 0; x < F; ++x) {
      for (std::uint32_t y = 0; y < F; ++y) {
        const double v = static_cast<double>(census.fine_hist[static_cast<std::size_t>(x) * F + y]);
        weight[x] += variant == 2 ? v * sizeof(vid_t) : v;
        if (variant == 1) weight[y] += v;
      }
      if (variant == 2) weight[x] += static_cast<double>(fb[x + 1] - fb[x]) * sizeof(eid_t);
    }
    double total = 0;
    for (double w : weight) total += w;
    std::vector<std::uint32_t> gidx(p + 1, 0);
    gidx[p] = F;
    {
      double acc = 0;
      std::uint32_t a = 1;
      for (std::uint32_t f = 0; f < F && a < p; ++f) {
        // cut before f when that lands closer to the target than cutting after it
        while (a < p && acc + weight[f] / 2 >= total * a / p) gidx[a++] = f;
        acc += weight[f];
      }
      for (; a < p; ++a) gidx[a] = F;
      for (std::uint32_t x = 1; x <= p; ++x) gidx[x] = std::max(gidx[x], gidx[x - 1]);
    }
    P.bounds.resize(p + 1);
    for (std::uint32_t a = 0; a <= p; ++a) P.bounds[a] = fb[gidx[a]];
    // block edges from the 2D prefix sums of the fine histogram
    const auto& S = census.fine_prefix();
    std::vector<eid_t> E(static_cast<std::size_t>(p) * p, 0);
    for (std::uint32_t a = 0; a < p; ++a)
      for (std::uint32_t b = 0; b < p; ++b) {
        const std::size_t x0 = gidx[a], x1 = gidx[a + 1], y0 = gidx[b], y1 = gidx[b + 1];
        const std::size_t W = F + 1;
        E[a * p + b] = S[x1 * W + y1] - S[x0 * W + y1] - S[x1 * W + y0] + S[x0 * W + y0];
      }
    block_units(plan, E, off, m);
  } else if (scheme == Scheme::Hash) {
    const std::uint32_t H = census.hash_mod;
    TS_CHECK(H % p == 0, "hash census does not match the number of parts");
    std::vector<eid_t> E(static_cast<std::size_t>(p) * p, 0);
    for (std::uint32_t x = 0; x < H; ++x)
      for (std::uint32_t y = 0; y < H; ++y) E[(x % p) * p + (y % p)] += census.hash_hist[x * H + y];
    block_units(plan, E, off, m);
  } else {  // vertex
    const Census::VertexParts* vp = nullptr;
    for (const auto& v : census.vertex)
      if (v.p == p) vp = &v;
    TS_CHECK(vp != nullptr, "vertex census does not match the number of parts");
    const std::uint32_t G = static_cast<std::uint32_t>(census.vertex_bounds.size() - 1);
    P.bounds.resize(p + 1);
    for (std::uint32_t a = 0; a <= p; ++a) P.bounds[a] = census.vertex_bounds[a * (G / p)];
    for (std::uint32_t i = 0; i < p; ++i) {
      const std::uint64_t r0 = P.bounds[i], r1 = P.bounds[i + 1];
      const eid_t ea = off[r1] - off[r0];
      if (ea == 0) continue;
      WorkUnit w;
      w.i = w.j = w.k = i;
      w.a.row_part = i;
      w.a.col_part = 0;
      w.a.rows = r1 - r0;
      w.a.edges = ea;
      w.a.col_space = vp->proxies[i];
      w.a.bytes = w.a.upload_bytes = block_bytes(w.a.rows, w.a.edges);
      w.b = w.a;
      w.b_is_a = true;
      w.c.row_part = i;
      w.c.col_part = 1;
      w.c.rows = vp->proxies[i];
      w.c.edges = vp->proxy_edges_bound[i];
      w.c.col_space = vp->proxies[i];
      w.c.bytes = w.c.upload_bytes = block_bytes(w.c.rows, w.c.edges);
      w.decompress_bytes = (ea + (m - (off[r0] - off[0]))) * sizeof(vid_t);
      double wedges = 0;
      for (std::uint64_t r = r0; r < r1; ++r) {
        const double d = static_cast<double>(off[r + 1] - off[r]);
        wedges += d * (d - 1) / 2;
      }
      w.work = wedges;
      plan.units.push_back(w);
    }
  }
  finish_units(plan, per_vertex);
  return plan;
}

// The order and the units in flight with the device cache. More units in flight let uploads
// run further ahead of the kernels but pin more blocks, so the cache holds fewer for later
// units. Tried: 2, 4, 8 or 16 in flight, each in the row order and (range) the column order
// (Plan::column_order), each with its tail cover; kept: the one whose estimated line
// (estimated_exposed_upload) ends first, the fewest exposed upload seconds on a tie, the row
// order and fewer units in flight on a tie of both. Run for the candidates that fit the budgets
// only: each try replays the cache over every unit. `plan` comes in the row order.
void choose_in_flight(Plan& plan, bool per_vertex) {
  if (plan.device_cache_bytes == 0 || plan.in_flight <= 2) return;
  const std::uint64_t decompressed = plan.bytes_decompressed;  // (the caller's estimate)
  const int orders = plan.partition.scheme == Scheme::Range ? 2 : 1;
  Plan best;
  double best_end = 0, best_exposed = 0;
  for (int column = 0; column < orders; ++column) {
    Plan base = plan;  // already finished for kDeviceCacheInFlight
    if (column) column_order(base);
    for (int f = 2; f <= kDeviceCacheInFlight; f *= 2) {
      Plan t = base;
      if (column || f != plan.in_flight) finish_units(t, per_vertex, f);
      t.tail_cover_units = cover_upload_tail(t, per_vertex);
      double end = 0;
      const double exposed = estimated_exposed_upload(t, &end);
      if ((column == 0 && f == 2) || end < best_end * 0.999 ||
          (end <= best_end * 1.001 && exposed < best_exposed * 0.999)) {
        best = std::move(t);
        best_end = end;
        best_exposed = exposed;
      }
    }
  }
  plan = std::move(best);
  plan.bytes_decompressed = decompressed;
}

}  // namespace

namespace {
// The census options for a plan with these options (fine/hash_mod/vertex_groups chosen from the
// forced scheme and parts).
CensusOptions census_options(std::uint64_t n, const PlanOptions& o) {
  CensusOptions c;
  c.threads = o.threads;
  c.fine = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      std::max<std::uint64_t>(n, 1), std::max<std::uint32_t>(1024, o.parts * 8)));
  c.hash_mod = o.parts ? o.parts : 16;
  c.vertex_groups = o.parts ? o.parts : 16;
  // The vertex census keeps one n-bit bitmap per group: keep it within a quarter of the host.
  if (o.parts == 0 && o.host_budget) {
    while (c.vertex_groups > 2 && c.vertex_groups * ((n + 63) / 64 * 8) > o.host_budget / 4)
      c.vertex_groups /= 2;
  }
  c.max_bytes = o.host_budget;
  c.vertex = o.scheme == Scheme::Auto || o.scheme == Scheme::Vertex;
  c.device_budget = o.device_budget;
  return c;
}
}  // namespace

bool census_needed(std::uint64_t n, eid_t m, const PlanOptions& o, CensusOptions* out) {
  if (o.parts == 1 || m == 0) return false;
  if (o.parts == 0) {
    // In-core fits?  (then the planner picks p = 1 and needs no census). The host estimate is
    // rough (64 MiB for the window); plan_graph takes the census after all when make_plan
    // finds that the in-core plan does not fit.
    const std::uint64_t dev = in_core_bytes(n, m, o.per_vertex);
    const std::uint64_t fixed =
        (n + 1) * sizeof(eid_t) + (o.per_vertex ? 2 * n * sizeof(count_t) : 0) + (64ull << 20);
    const std::uint64_t host = fixed + (n + 1) * sizeof(eid_t) + m * sizeof(vid_t);
    // streamed staging: the ring of the smallest pieces instead of the full host slot, and a
    // window of two chunks (16 MiB at the default chunk size)
    const std::uint64_t host_streamed = o.device_is_host ? host
                                                         : fixed - (64ull << 20) + (16ull << 20) +
                                                               kStagingBuffers * kMinStagingPiece;
    const bool dev_ok = o.device_budget == 0 || dev <= o.device_budget;
    const bool host_ok = o.host_budget == 0 || std::min(host, host_streamed) <= o.host_budget;
    if (dev_ok && host_ok) return false;
  }
  if (out) *out = census_options(n, o);
  return true;
}

Plan make_plan(std::uint64_t n, eid_t m, const eid_t* offsets,
               const std::vector<tcsr::ChunkInfo>& chunks, const Census& census,
               const PlanOptions& o) {
  if (m == 0) {  // nothing to count, whatever the options
    Plan plan;
    in_core_unit(plan, n, m, offsets);
    finish_units(plan, o.per_vertex);
    plan.device_budget = o.device_budget;
    plan.host_budget = o.host_budget;
    plan.reason = "empty graph: nothing to count";
    return plan;
  }
  HostModel hm;
  hm.n = n;
  hm.threads = resolve_threads(o.threads);
  for (const auto& c : chunks)
    hm.max_chunk_raw = std::max<std::uint64_t>(hm.max_chunk_raw, c.edges * sizeof(vid_t));

  // candidate (scheme, p) pairs
  struct Cand {
    Scheme s;
    std::uint32_t p;
    int variant;
  };
  std::vector<Cand> cands;
  std::vector<Scheme> schemes;
  if (o.scheme == Scheme::Auto)
    schemes = {Scheme::Range, Scheme::Vertex, Scheme::Hash};
  else
    schemes = {o.scheme};
  if (o.parts) {
    for (Scheme s : schemes) {
      const int cuts = s == Scheme::Range && o.parts > 1 ? kRangeCuts : 1;
      for (int v = 0; v < cuts; ++v) cands.push_back({s, o.parts, v});
    }
  } else {
    cands.push_back({Scheme::Range, 1, 0});
    if (!census.empty()) {
      for (Scheme s : schemes) {
        if (s == Scheme::Range) {
          const std::uint32_t F = static_cast<std::uint32_t>(census.fine_bounds.size() - 1);
          for (std::uint32_t p = 2; p <= std::min<std::uint32_t>(F, 96); ++p) {
            for (int v = 0; v < kRangeCuts; ++v) cands.push_back({s, p, v});
          }
        } else if (s == Scheme::Hash) {
          for (std::uint32_t p = 2; p <= std::min<std::uint32_t>(census.hash_mod, 16); ++p)
            if (census.hash_mod % p == 0) cands.push_back({s, p, 0});
        } else {
          for (const auto& v : census.vertex)
            if (v.p >= 2) cands.push_back({s, v.p, 0});
        }
      }
    }
  }
  if (o.parts > 1 && census.empty())
    throw Error(ErrorKind::Internal, "the planner needs a block census for --parts > 1");

  // A unit's fixed kernel seconds cost what the copy engine uploads meanwhile: on the H100
  // (about 0.4 ms per unit, 40 GB/s) 16 MB, so one more part pays for itself only when it
  // saves 16 MB per unit it adds. (Charged as 1 MiB until session 10, which let Kronecker 25 at
  // 1/4 take p = 19 over p = 17 for 9% fewer bytes and 0.2 s more kernel.)
  const double unit_cost_bytes = o.rates.kernel_s_per_unit * o.rates.upload_bytes_per_s;
  std::vector<Candidate> all;
  std::ptrdiff_t best_index = -1;
  Plan best_plan;
  int after_feasible[4] = {-1, -1, -1, -1};  // per scheme: candidates evaluated since a fit
  for (const Cand& cand : cands) {
    const Scheme s = cand.s;
    const std::uint32_t p = cand.p;
    const int variant = cand.variant;
    const int si = static_cast<int>(s);
    if (p > 1 && after_feasible[si] >= 8) continue;  // more parts only move more bytes
    Candidate c;
    c.plan = build_plan(s, p, variant, n, m, offsets, census, o.per_vertex);
    c.plan.rates = o.rates;
    if (p <= 1 && o.scheme != Scheme::Auto) c.plan.partition.scheme = Scheme::Range;
    const bool vs = c.plan.partition.scheme == Scheme::Vertex && c.plan.partition.p > 1;
    std::uint64_t max_prox = 0;
    for (const auto& u : c.plan.units)
      max_prox = std::max<std::uint64_t>(max_prox, vs ? u.c.rows : 0);
    std::uint32_t window = std::max<std::uint32_t>(2, 2 * hm.threads);
    const std::uint64_t full_slots = static_cast<std::uint64_t>(c.plan.slots) * c.plan.slot_bytes;
    c.host = host_need(hm, c.plan, o.per_vertex, vs, max_prox, window, full_slots);
    if (o.host_budget && c.host > o.host_budget) {
      window = 2;
      c.host = host_need(hm, c.plan, o.per_vertex, vs, max_prox, window, full_slots);
    }
    if (o.host_budget && c.host > o.host_budget)
      streamed_staging(hm, c.plan, o, vs, max_prox, &window, &c.host);
    c.plan.window_chunks = window;
    c.plan.host_bytes = c.host;
    // What host memory is left keeps decompressed chunks for later units: with room for the
    // whole adjacency every chunk is decompressed once.
    const std::uint64_t raw_all = m * sizeof(vid_t);
    if (c.plan.partition.p > 1) {
      // The rest of the host budget keeps decompressed chunks and built blocks for later units.
      // Range and hash: the block cache pays off once it holds two row parts' blocks (the
      // row part of A and B stays while the row parts of C come and go) and the chunk cache one
      // row part's chunks (to build it in parallel); with room for every block they are all
      // built once, up front.
      Plan& pl = c.plan;
      const bool blocks = pl.partition.scheme != Scheme::Vertex;
      const std::uint64_t left = o.host_budget == 0
                                     ? ~std::uint64_t{0}
                                     : (o.host_budget > c.host ? o.host_budget - c.host : 0);
      const std::uint64_t need_chunks = pl.row_part_chunk_bytes + 2 * hm.max_chunk_raw;
      if (!blocks) {
        pl.chunk_cache_bytes = std::min(raw_all, left);
        pl.block_cache_bytes = 0;
      } else if (o.host_budget == 0) {
        pl.chunk_cache_bytes = raw_all;
        pl.block_cache_bytes = pl.row_parts_bytes;
      } else if (left >= need_chunks + 2 * pl.row_part_max_bytes) {
        pl.chunk_cache_bytes = std::min(raw_all, need_chunks);
        pl.block_cache_bytes = std::min(pl.row_parts_bytes, left - pl.chunk_cache_bytes);
      } else {
        pl.chunk_cache_bytes = std::min(raw_all, left / 2);
        pl.block_cache_bytes = left / 2;
      }
      const bool chunks_fit = pl.chunk_cache_bytes >= std::min(raw_all, need_chunks);
      if (blocks && chunks_fit && pl.block_cache_bytes >= pl.row_parts_bytes) {
        pl.bytes_decompressed = std::min<std::uint64_t>(pl.bytes_decompressed, raw_all);
      } else if (blocks && chunks_fit && pl.block_cache_bytes >= 2 * pl.row_part_max_bytes) {
        const double walks =
            pl.partition.scheme == Scheme::Range ? (pl.partition.p + 1) / 2.0 : 1.0;
        pl.bytes_decompressed = std::min<std::uint64_t>(
            pl.bytes_decompressed,
            static_cast<std::uint64_t>(walks * static_cast<double>(raw_all)));
      } else if (pl.chunk_cache_bytes >= raw_all) {
        pl.bytes_decompressed = std::min<std::uint64_t>(pl.bytes_decompressed, raw_all);
      }
    }
    c.device = c.plan.device_bytes;
    const bool dev_ok = o.device_budget == 0 || c.device <= o.device_budget;
    const bool host_ok = o.host_budget == 0 || c.host <= o.host_budget;
    c.feasible = dev_ok && host_ok;
    // bytes moved, plus a fixed charge per unit (its launches, synchronisation and small-kernel
    // inefficiency: PlanRates::kernel_s_per_unit, priced as the bytes uploaded meanwhile); of
    // the partition's own order, before the units in flight and the tail cover tune it (its
    // slices and their bytes would tip the choice of p towards plans whose order needs no cover)
    c.cost = static_cast<double>(c.plan.bytes_moved + c.plan.bytes_decompressed) +
             static_cast<double>(c.plan.units.size()) * unit_cost_bytes;
    // (the units in flight only for a candidate that fits: they change its bytes moved)
    if (c.feasible) choose_in_flight(c.plan, o.per_vertex);
    if (c.plan.partition.scheme == Scheme::Hash) c.cost *= kHashCostFactor;
    if (p > 1 && (c.feasible || after_feasible[si] >= 0)) ++after_feasible[si];
    c.units = c.plan.units.size();
    const bool better =
        c.feasible && (best_index < 0 || c.cost < all[best_index].cost * 0.999 ||
                       (c.cost <= all[best_index].cost * 1.001 &&
                        (c.plan.imbalance < all[best_index].plan.imbalance * 0.99 ||
                         (c.plan.imbalance <= all[best_index].plan.imbalance * 1.01 &&
                          c.units < all[best_index].units))));
    if (better) {
      best_index = static_cast<std::ptrdiff_t>(all.size());
      best_plan = c.plan;
    }
    std::vector<WorkUnit>().swap(c.plan.units);
    all.push_back(std::move(c));
  }
  const Candidate* best = best_index >= 0 ? &all[best_index] : nullptr;
  if (!best) {
    // Name the smallest requirement and the largest row.
    const Candidate* small = nullptr;  // the smallest out-of-core candidate, else in-core
    for (const auto& c : all)
      if (c.plan.partition.p > 1 && (!small || c.device < small->device)) small = &c;
    if (!small)
      for (const auto& c : all)
        if (!small || c.device < small->device) small = &c;
    std::uint64_t big_row = 0;
    eid_t big_deg = 0;
    for (std::uint64_t r = 0; r < n; ++r)
      if (offsets[r + 1] - offsets[r] > big_deg) {
        big_deg = offsets[r + 1] - offsets[r];
        big_row = r;
      }
    std::ostringstream msg;
    msg << "no partition fits: device budget "
        << (o.device_budget ? format_bytes(o.device_budget) : std::string("unlimited"))
        << " (two work units at once), host budget "
        << (o.host_budget ? format_bytes(o.host_budget) : std::string("unlimited"));
    if (small)
      msg << "; the smallest candidate (" << scheme_name(small->plan.partition.scheme)
          << ", p = " << small->plan.partition.p << ") needs " << small->device
          << " device bytes and " << small->host << " host bytes";
    msg << "; the largest row, " << big_row << ", has " << big_deg << " out-neighbours ("
        << block_bytes(1, big_deg) << " bytes as a block), and one work unit holds whole rows"
        << "; raise --gpu-memory / --host-memory" << (o.parts ? " or choose a larger --parts" : "");
    throw Error(ErrorKind::Usage, msg.str());
  }
  Plan plan = std::move(best_plan);
  plan.device_budget = o.device_budget;
  plan.host_budget = o.host_budget;
  std::ostringstream why;
  if (m == 0) {
    why << "empty graph: nothing to count";
  } else if (plan.partition.p == 1) {
    why << "in-core: the whole graph (" << format_bytes(plan.device_bytes)
        << ") fits the device budget ("
        << (o.device_budget ? format_bytes(o.device_budget) : std::string("unlimited")) << ")";
    if (o.parts == 1) why << " (--parts 1)";
    if (plan.streamed_staging())
      why << "; streamed staging: the host budget (" << format_bytes(o.host_budget)
          << ") cannot hold a full " << format_bytes(plan.slot_bytes)
          << " host slot, so the unit is built and uploaded in pieces through "
          << plan.staging_buffers << " x " << format_bytes(plan.piece_bytes)
          << " host staging buffers";
  } else {
    why << (o.parts ? "forced p = " + std::to_string(o.parts) + "; " : std::string())
        << scheme_name(plan.partition.scheme) << " with p = " << plan.partition.p << ": "
        << plan.units.size() << " units, 2 x " << format_bytes(plan.slot_bytes) << " slots fit "
        << format_bytes(o.device_budget ? o.device_budget : plan.device_bytes) << "; moves "
        << format_bytes(plan.bytes_moved) << " up and decompresses "
        << format_bytes(plan.bytes_decompressed) << ", work imbalance "
        << std::to_string(plan.imbalance).substr(0, 4);
    // the runner-ups per scheme
    for (Scheme s : {Scheme::Range, Scheme::Vertex, Scheme::Hash}) {
      const Candidate* bs = nullptr;
      for (const auto& c : all)
        if (c.feasible && c.plan.partition.scheme == s && c.plan.partition.p > 1 &&
            (!bs || c.cost < bs->cost))
          bs = &c;
      if (bs && bs->plan.partition.scheme != plan.partition.scheme)
        why << "; best " << scheme_name(s) << " (p = " << bs->plan.partition.p << ") would move "
            << format_bytes(bs->plan.bytes_moved + bs->plan.bytes_decompressed);
    }
    bool any_one = false;
    for (const auto& c : all) any_one |= c.plan.partition.p == 1;
    if (any_one && !o.parts) why << "; the in-core plan needs " << format_bytes(all.front().device);
  }
  plan.reason = why.str();
  return plan;
}

Plan plan_graph(const GraphSource& g, const PlanOptions& options, Census* census_out) {
  CensusOptions co;
  Census census;
  const bool took = census_needed(g.n(), g.m(), options, &co);
  if (took) census = take_census(g, co);
  Plan plan;
  try {
    plan = make_plan(g.n(), g.m(), g.offsets(), g.chunks(), census, options);
  } catch (const Error& e) {
    // census_needed's estimate expected the in-core plan to fit, but it does not: plan again
    // with the census (the out-of-core candidates).
    if (took || e.kind() != ErrorKind::Usage || options.parts != 0 || g.m() == 0) throw;
    census = take_census(g, census_options(g.n(), options));
    plan = make_plan(g.n(), g.m(), g.offsets(), g.chunks(), census, options);
  }
  if (census_out) *census_out = std::move(census);
  return plan;
}

// ---- output ------------------------------------------------------------------------------------
namespace plan_internal {
void finish_units(Plan& plan, bool per_vertex, int in_flight) {
  tristream::finish_units(plan, per_vertex, in_flight);
}
double estimated_exposed_upload(const Plan& plan, double* makespan) {
  return tristream::estimated_exposed_upload(plan, makespan);
}
std::size_t cover_upload_tail(Plan& plan, bool per_vertex) {
  return tristream::cover_upload_tail(plan, per_vertex);
}
void column_order(Plan& plan) {
  tristream::column_order(plan);
}
void choose_in_flight(Plan& plan, bool per_vertex) {
  tristream::choose_in_flight(plan, per_vertex);
}
WorkUnit unit_slice(const WorkUnit& w, std::uint32_t slice, std::uint32_t slices) {
  WorkUnit s = w;
  s.slice = slice;
  s.slices = slices;
  s.work = w.work / slices;
  if (slice > 0) s.decompress_bytes = 0;  // its blocks were built for the first slice
  return s;
}
}  // namespace plan_internal

std::uint64_t device_cache_key(const Plan& plan, const BlockInfo& b) {
  if (plan.device_cache_bytes == 0) return 0;
  const std::uint64_t stride = std::max<std::uint64_t>(plan.partition.p, 2);
  return std::uint64_t{b.row_part} * stride + b.col_part + 1;
}

std::vector<std::uint64_t> device_cache_next_uses(const Plan& plan) {
  std::vector<std::uint64_t> next(3 * plan.units.size(), kNeverUsed);
  std::unordered_map<std::uint64_t, std::uint64_t> seen;  // key -> the next unit using it
  for (std::size_t u = plan.units.size(); u-- > 0;) {
    const WorkUnit& w = plan.units[u];
    const BlockInfo* roles[3] = {&w.a, &w.b, &w.c};
    std::uint64_t keys[3];
    for (int r = 0; r < 3; ++r) {
      keys[r] = device_cache_key(plan, *roles[r]);
      const auto it = seen.find(keys[r]);
      next[3 * u + r] = it == seen.end() ? kNeverUsed : it->second;
    }
    for (int r = 0; r < 3; ++r) seen[keys[r]] = u;
  }
  return next;
}

namespace {
// A JSON array of unsigned integers.
template <typename T>
std::string json_uints(std::initializer_list<T> xs) {
  std::string out = "[";
  for (const T& x : xs) out += (out.size() > 1 ? "," : "") + std::to_string(x);
  return out + "]";
}
std::string unit_json(const WorkUnit& w) {
  JsonObject o;
  o.raw("task", json_uints<std::uint32_t>({w.i, w.j, w.k}))
      .add("device_bytes", w.device_bytes)
      .add("upload_bytes", w.upload_bytes)
      .add("decompress_bytes", w.decompress_bytes)
      .add("work", w.work)
      .raw("edges", json_uints<std::uint64_t>({w.a.edges, w.b.edges, w.c.edges}))
      .add("reuse_a", w.reuse_a)
      .raw("slice", json_uints<std::uint32_t>({w.slice, w.slices}));
  return o.str();
}
}  // namespace

std::string Plan::to_json() const {
  JsonObject o;
  o.add("scheme", scheme_name(partition.scheme))
      .add("parts", partition.p)
      .add("slots", slots)
      .add("slot_bytes", slot_bytes)
      .add("staging", streamed_staging() ? "streamed" : "full")
      .add("piece_bytes", piece_bytes)
      .add("staging_buffers", staging_buffers)
      .add("host_staging_bytes", host_staging_bytes())
      .add("device_bytes", device_bytes)
      .add("host_bytes", host_bytes)
      .add("device_budget", device_budget)
      .add("host_budget", host_budget)
      .add("bytes_moved", bytes_moved)
      .add("bytes_decompressed", bytes_decompressed)
      .add("total_estimated_bytes", bytes_moved + bytes_decompressed)
      .add("chunk_cache_bytes", chunk_cache_bytes)
      .add("block_cache_bytes", block_cache_bytes)
      .add("device_cache_bytes", device_cache_bytes)
      .add("in_flight", in_flight)
      .add("unit_order", column_order ? "column" : "row")
      .add("tail_cover_units", std::uint64_t{tail_cover_units})
      .add("tail_cover_slices", std::uint64_t{tail_cover_slices})
      .add("total_work", total_work)
      .add("imbalance", imbalance)
      .add("reason", reason);
  std::string bounds = "[";
  for (std::size_t x = 0; x < partition.bounds.size(); ++x)
    bounds += (x ? "," : "") + std::to_string(partition.bounds[x]);
  o.raw("bounds", bounds + "]");
  std::string us = "[";
  for (std::size_t u = 0; u < units.size(); ++u) us += (u ? "," : "") + unit_json(units[u]);
  o.raw("units", us + "]");
  return o.str();
}

std::string Plan::summary() const {
  std::ostringstream o;
  o << "scheme " << scheme_name(partition.scheme) << ", p = " << partition.p << ", " << units.size()
    << " units\n";
  o << "slots: " << slots << " x " << format_bytes(slot_bytes) << " (device "
    << format_bytes(device_bytes) << ", host about " << format_bytes(host_bytes) << ")\n";
  if (device_cache_bytes)
    o << "device block cache: blocks stay in the slots' " << format_bytes(device_cache_bytes)
      << " between units; a unit uploads only the blocks not there, up to " << in_flight
      << " units ahead of the kernels\n";
  if (column_order)
    o << "order: inside each task by k, then j (each new block of row part i is followed by the "
         "units that reuse it)\n";
  if (tail_cover_units)
    o << "order: " << tail_cover_units
      << " units of much work and few bytes moved into the upload-bound tail, to hide its "
         "uploads, as "
      << tail_cover_slices << " slices\n";
  if (streamed_staging())
    o << "host staging: streamed, " << staging_buffers << " x " << format_bytes(piece_bytes)
      << " pieces (" << format_bytes(host_staging_bytes()) << ") instead of full host slots\n";
  o << "estimated bytes moved: " << format_bytes(bytes_moved) << " uploaded, "
    << format_bytes(bytes_decompressed) << " decompressed; work imbalance " << imbalance << "\n";
  o << "reason: " << reason << "\n";
  return o.str();
}

}  // namespace tristream
