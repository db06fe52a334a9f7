// census.cpp — the block census (tristream/plan.hpp: take_census): exact edge counts between
// fine row buckets (range), between residues mod H (hash), and the vertex scheme's proxy sets
// X_i = N+(V_i) with their edges, from streamed passes over the columns. The passes run on a few
// threads, each with its own histograms, within the census's host budget.
//
// Contract: the census is a pure function of the graph and the options, whatever the thread
// count (the per-thread histograms are summed; the proxy bitmaps are OR-ed). SIGINT or SIGTERM
// (common/interrupt.hpp) stops a pass between chunks with Error(Interrupted).
#include <algorithm>
#include <atomic>
#include <chrono>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "plan/census_store.hpp"
#include "plan/sizes.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace plan_internal {

// Fine range buckets: half cut by out-edges, half by rows (the high ranks hold few out-edges but
// the hubs' columns), merged, without empty buckets.
std::vector<std::uint64_t> fine_buckets(std::uint64_t n, const eid_t* off, std::uint32_t fine) {
  const std::uint32_t F = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(fine, std::max<std::uint64_t>(n, 1))));
  auto b = balanced_bounds(n, off, std::max<std::uint32_t>(1, F / 2), false);
  const std::uint32_t R = std::max<std::uint32_t>(1, F - F / 2);
  for (std::uint32_t a = 1; a < R; ++a) b.push_back(n * a / R);
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  if (b.size() < 2) b = {0, n};
  return b;
}

// Could any vertex candidate fit the device budget? At least two units of A_i (the rows of V_i
// with their edges) plus the offsets of X_i each; when none can, the exact pass cannot change
// the plan (the upper bounds rule the candidates out too) and is skipped.
bool vertex_may_fit(const Census& c, const std::vector<std::uint32_t>& cand_p, std::uint32_t G,
                    const eid_t* off, std::uint64_t device_budget) {
  bool may_fit = device_budget == 0;
  for (std::size_t ci = 0; ci < cand_p.size() && !may_fit; ++ci) {
    const std::uint32_t p = cand_p[ci], per = G / p;
    if (p < 2) continue;  // not a vertex candidate (that is the in-core plan)
    std::uint64_t unit = 0;
    for (std::uint32_t a = 0; a < p; ++a) {
      const std::uint64_t r0 = c.vertex_bounds[a * per], r1 = c.vertex_bounds[(a + 1) * per];
      unit = std::max(unit, block_bytes(r1 - r0, off[r1] - off[r0]) +
                                align_up((c.vertex[ci].proxies[a] + 1) * sizeof(eid_t)));
    }
    may_fit = 2 * unit <= device_budget;
  }
  return may_fit;
}

}  // namespace plan_internal

namespace {

using plan_internal::align_up;
using plan_internal::fine_buckets;
using plan_internal::vertex_may_fit;

// The bucket of a sorted boundary list holding x.
std::uint32_t bucket_of(const std::vector<std::uint64_t>& bounds, std::uint64_t x) {
  return static_cast<std::uint32_t>(std::upper_bound(bounds.begin(), bounds.end(), x) -
                                    bounds.begin() - 1);
}

// The census's threads: at most one per chunk, and within max_bytes when it is set (each thread
// holds an F x F histogram and one decompressed chunk beside the shared bitmaps).
unsigned census_threads(const CensusOptions& o, const std::vector<tcsr::ChunkInfo>& chunks,
                        std::uint32_t F, std::uint64_t fixed_bytes) {
  unsigned T = std::max<unsigned>(
      1, std::min<unsigned>(resolve_threads(o.threads), std::max<std::size_t>(chunks.size(), 1)));
  if (o.max_bytes) {
    std::uint64_t max_chunk = 0;
    for (const auto& ch : chunks)
      max_chunk = std::max<std::uint64_t>(max_chunk, ch.edges * sizeof(vid_t));
    const std::uint64_t per = static_cast<std::uint64_t>(F) * F * sizeof(eid_t) + max_chunk;
    const std::uint64_t room = o.max_bytes > fixed_bytes ? o.max_bytes - fixed_bytes : 0;
    T = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(T, room / per)));
  }
  return T;
}

// The first pass's state: the census's boundaries, the per-thread histograms and the vertex
// groups' bitmaps (G bitmaps of `words` words: the columns of each group's rows, X of the group).
struct FirstPass {
  FirstPass(const GraphSource& g_, Census& c_, std::uint32_t G_, bool want_vertex_)
      : g(g_),
        c(c_),
        F(static_cast<std::uint32_t>(c_.fine_bounds.size() - 1)),
        H(c_.hash_mod),
        G(G_),
        words((g_.n() + 63) / 64),
        want_vertex(want_vertex_) {}
  const GraphSource& g;
  Census& c;
  std::uint32_t F, H, G;
  std::uint64_t words;
  bool want_vertex;
  std::vector<std::uint64_t> bitmaps;
  std::vector<std::uint32_t> in_degrees;  // with CensusOptions::wedges: every column counted
  std::vector<std::vector<eid_t>> fine_local, hash_local;
  std::vector<std::vector<vid_t>> buffers;
  std::atomic<std::uint64_t> raw{0};

  // Counts chunk k's edges into thread t's histograms (and ORs the columns into the bitmaps).
  void chunk(unsigned t, std::uint64_t k) {
    const std::uint64_t n = g.n();
    const eid_t* off = g.offsets();
    const auto& ch = g.chunks()[k];
    const vid_t* cols = g.resident_chunk(k);  // (decoded already: read in place)
    if (!cols) {
      std::vector<vid_t>& buf = buffers[t];
      buf.resize(ch.edges);
      g.read_chunk(k, buf.data());
      cols = buf.data();
    }
    raw += ch.edges * sizeof(vid_t);
    const eid_t e0 = ch.first_edge, e1 = ch.first_edge + ch.edges;
    std::uint64_t r = ch.first_row;
    std::uint32_t fu = bucket_of(c.fine_bounds, r), gu = bucket_of(c.vertex_bounds, r);
    for (; r < n && off[r] < e1; ++r) {
      if ((r & 0xfff) == 0) throw_if_interrupted();  // a chunk holds up to 2^21 edges
      const eid_t s = std::max(off[r], e0), e = std::min(off[r + 1], e1);
      if (s >= e) continue;
      while (fu + 1 < F && r >= c.fine_bounds[fu + 1]) ++fu;
      while (gu + 1 < G && r >= c.vertex_bounds[gu + 1]) ++gu;
      row(t, r, fu, gu, cols + (s - e0), e - s);
    }
  }

  void row(unsigned t, std::uint64_t r, std::uint32_t fu, std::uint32_t gu, const vid_t* col,
           std::size_t cnt) {
    std::uint32_t fv = bucket_of(c.fine_bounds, col[0]);
    eid_t* frow = fine_local[t].data() + static_cast<std::size_t>(fu) * F;
    eid_t* hrow = hash_local[t].data() + static_cast<std::size_t>(r % H) * H;
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
    if (!in_degrees.empty())
      for (std::size_t x = 0; x < cnt; ++x)
        __atomic_fetch_add(&in_degrees[col[x]], 1u, __ATOMIC_RELAXED);
  }

  // Sums the threads' histograms into the census.
  void merge() {
    c.fine_hist.assign(static_cast<std::size_t>(F) * F, 0);
    c.hash_hist.assign(static_cast<std::size_t>(H) * H, 0);
    for (std::size_t t = 0; t < fine_local.size(); ++t) {
      for (std::size_t x = 0; x < c.fine_hist.size(); ++x) c.fine_hist[x] += fine_local[t][x];
      for (std::size_t x = 0; x < c.hash_hist.size(); ++x) c.hash_hist[x] += hash_local[t][x];
    }
  }
};

// Vertex candidates: every p dividing G, parts = unions of consecutive groups; |X_i| and the sum
// of out-degrees over X_i (an upper bound of the proxy block's edges) from the bitmaps. Returns
// the candidates' p.
std::vector<std::uint32_t> vertex_candidates(Census& c, const FirstPass& fp, const eid_t* off) {
  const std::uint32_t G = fp.G;
  std::vector<std::uint64_t> acc(fp.words);
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
        const std::uint64_t* bm = fp.bitmaps.data() + static_cast<std::size_t>(gi) * fp.words;
        for (std::uint64_t w = 0; w < fp.words; ++w) acc[w] |= bm[w];
      }
      std::uint64_t cnt = 0;
      eid_t deg = 0;
      for (std::uint64_t w = 0; w < fp.words; ++w) {
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
  return cand_p;
}

// Exact proxy blocks (G <= 16): a second pass counts, for every candidate part, the edges
// v -> w with both ends in X. mask[v] holds the groups whose X contains v; a per-candidate table
// folds a group mask into a part mask. Frees the bitmaps.
void exact_proxy_edges(Census& c, FirstPass& fp, const std::vector<std::uint32_t>& cand_p,
                       ThreadPool& pool) {
  const unsigned T = pool.threads();
  const GraphSource& g = fp.g;
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  const auto& chunks = g.chunks();
  const std::uint32_t G = fp.G;
  c.vertex_exact = true;
  std::vector<std::uint16_t> mask(n, 0);
  for (std::uint32_t gi = 0; gi < G; ++gi) {
    const std::uint64_t* bm = fp.bitmaps.data() + static_cast<std::size_t>(gi) * fp.words;
    for (std::uint64_t w = 0; w < fp.words; ++w)
      for (std::uint64_t x = bm[w]; x; x &= x - 1)
        mask[w * 64 + static_cast<std::uint64_t>(__builtin_ctzll(x))] |=
            static_cast<std::uint16_t>(1u << gi);
  }
  std::vector<std::uint64_t>().swap(fp.bitmaps);
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
  pool.for_each_item(chunks.size(), [&](std::uint64_t k, unsigned t) {
    auto& cnt = counts[t];
    std::vector<vid_t>& buf = fp.buffers[t];
    const auto& ch = chunks[k];
    bool any = false;
    for (std::uint64_t r = ch.first_row; r < n && r < ch.first_row + ch.rows; ++r)
      any |= mask[r] != 0;
    if (!any) return;                         // no proxy row here
    const vid_t* cols = g.resident_chunk(k);  // (decoded already: read in place)
    if (!cols) {
      buf.resize(ch.edges);
      g.read_chunk(k, buf.data());
      cols = buf.data();
    }
    fp.raw += ch.edges * sizeof(vid_t);
    const eid_t e0 = ch.first_edge, e1 = ch.first_edge + ch.edges;
    for (std::uint64_t r = ch.first_row; r < n && off[r] < e1; ++r) {
      if ((r & 0xfff) == 0) throw_if_interrupted();
      const std::uint16_t mv = mask[r];
      if (!mv) continue;
      const eid_t s0 = std::max(off[r], e0), s1 = std::min(off[r + 1], e1);
      for (eid_t e = s0; e < s1; ++e) {
        const std::uint16_t mw = mask[cols[e - e0]];
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
  });
  for (std::size_t ci = 0; ci < C; ++ci)
    for (std::uint32_t a = 0; a < cand_p[ci]; ++a) {
      eid_t sum = 0;
      for (unsigned t = 0; t < T; ++t) sum += counts[t][ci * 16 + a];
      c.vertex[ci].proxy_edges_upper.push_back(c.vertex[ci].proxy_edges_bound[a]);
      c.vertex[ci].proxy_edges_bound[a] = sum;  // exact
    }
}

}  // namespace

Census take_census(const GraphSource& g, const CensusOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Census c;
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  // 1. The boundaries: fine range buckets, hash residues, vertex groups balanced by wedges.
  c.fine_bounds = fine_buckets(n, off, options.fine);
  c.hash_mod = std::max<std::uint32_t>(1, options.hash_mod);
  const std::uint32_t G = std::max<std::uint32_t>(1, options.vertex_groups);
  c.vertex_bounds = balanced_bounds(n, off, G, true);
  FirstPass fp(g, c, G, options.vertex);
  fp.bitmaps.assign(fp.want_vertex ? static_cast<std::size_t>(G) * fp.words : 0, 0);
  if (options.wedges) fp.in_degrees.assign(n, 0);
  // 2. The threads the host budget allows.
  const unsigned T = census_threads(options, g.chunks(), fp.F,
                                    fp.bitmaps.size() * 8 + n * 2 + fp.in_degrees.size() * 4);
  fp.fine_local.assign(T, std::vector<eid_t>(static_cast<std::size_t>(fp.F) * fp.F, 0));
  fp.hash_local.assign(T, std::vector<eid_t>(static_cast<std::size_t>(fp.H) * fp.H, 0));
  fp.buffers.resize(T);
  // 3. The first pass: the range and hash histograms and the vertex groups' bitmaps.
  ThreadPool pool(T);
  pool.for_each_item(g.chunks().size(), [&fp](std::uint64_t k, unsigned t) { fp.chunk(t, k); });
  fp.merge();
  std::vector<std::vector<eid_t>>().swap(fp.fine_local);
  std::vector<std::vector<eid_t>>().swap(fp.hash_local);
  if (options.wedges) {
    // 3b. The wedges of the undirected graph: out-degree plus in-degree per vertex.
    for (std::uint64_t v = 0; v < n; ++v)
      c.wedges.add_degree(off[v + 1] - off[v] + fp.in_degrees[v]);
    c.has_wedges = true;
    std::vector<std::uint32_t>().swap(fp.in_degrees);
  }
  if (fp.want_vertex) {
    // 4. The vertex candidates' proxy sets and their bounds.
    const std::vector<std::uint32_t> cand_p = vertex_candidates(c, fp, off);
    // 5. Their exact proxy edges when some vertex candidate may fit the device.
    if (G <= 16 && n > 0 && vertex_may_fit(c, cand_p, G, off, options.device_budget))
      exact_proxy_edges(c, fp, cand_p, pool);
  }
  c.decompressed_bytes = fp.raw.load();
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

}  // namespace tristream
