// census_rows.cpp — the stored census taken from the rows a conversion writes (census_store.hpp:
// stored_census_rows), so that `convert` stores it without a second pass over the written file.
//
// take_census (census.cpp) reads the file twice: a first pass for the fine and hash histograms and
// the vertex groups' proxy sets X_g = N+(V_g), a second for the edges with both ends in a part's
// proxy set. Here the proxy sets come first, from the marks (every edge u -> v sets bit g(u) in
// mask[v], where g(u) is u's vertex group), so that one look at each row gives the histograms and
// the exact proxy edges together. Every figure is a sum of integers over the edges (or an OR), so
// the payload is the same for any thread count and any order of the calls, and the same as
// encode_stored_census of the written file (tests/converter/convert_census_test.cpp).
//
// Where the rows' sorter tallies them (tristream/row_tally.hpp: the buckets are the fine buckets,
// the groups the vertex groups, the fold table the same) the sums come from take_tally and no
// per-vertex word is made here.
//
// Memory: the mask and the fine bucket (4 bytes per vertex), one F x F fine histogram (8 MiB at F =
// 1024) that the threads add their rows into, the fold tables, and per thread one histogram row,
// the hash histogram and the proxy edge counters; at the end the payload, a copy of the
// histogram, before the histogram is freed.
#include <algorithm>
#include <array>
#include <mutex>

#include "common/thread_pool.hpp"
#include "plan/census_store.hpp"
#include "tristream/error.hpp"

namespace tristream::plan_internal {
namespace {

constexpr std::uint32_t kMaxGroups = 16;  // the mask's bits
constexpr std::size_t kAhead = 32;        // edges between a column's prefetch and its use

std::uint32_t bucket_of(const std::vector<std::uint64_t>& bounds, std::uint64_t x) {
  return static_cast<std::uint32_t>(std::upper_bound(bounds.begin(), bounds.end(), x) -
                                    bounds.begin() - 1);
}

class StoredCensusRows final : public CensusRows {
 public:
  std::uint64_t memory_bytes(std::uint64_t n, unsigned threads) const override {
    const CensusOptions o = stored_census_options(n);
    const std::uint64_t F = o.fine, H = std::max<std::uint32_t>(1, o.hash_mod);
    const std::uint64_t tables = (std::uint64_t{1} << kMaxGroups) * 4;
    const std::uint64_t per_thread = F * 8 + H * H * 8 + 32 * 8 + 1024;
    // (at the end the histogram and the payload that copies it)
    return n * 4 + 2 * F * F * 8 + tables + threads * per_thread;
  }

  void start(std::uint64_t n, const eid_t* offsets, unsigned threads,
             const WedgeSum& wedges) override {
    n_ = n;
    c_.has_wedges = true;
    c_.wedges = wedges;
    off_ = offsets;
    threads_ = std::max(1u, threads);
    o_ = stored_census_options(n);
    // 1. What this observer takes: the vertex statistics of at most 16 groups, exact (the stored
    //    options ask for no device budget, so take_census always runs its exact pass).
    const std::uint32_t G = std::max<std::uint32_t>(1, o_.vertex_groups);
    supported_ = o_.vertex && G <= kMaxGroups && o_.device_budget == 0;
    if (!supported_) return;
    // 2. The boundaries, as take_census draws them.
    c_.fine_bounds = fine_buckets(n, offsets, o_.fine);
    c_.hash_mod = std::max<std::uint32_t>(1, o_.hash_mod);
    c_.vertex_bounds = balanced_bounds(n, offsets, G, true);
    G_ = G;
    for (std::uint32_t b = 0; b < kMaxGroups; ++b)
      inner_[b] = b + 1 < G ? c_.vertex_bounds[b + 1] : ~std::uint64_t{0};
    F_ = static_cast<std::uint32_t>(c_.fine_bounds.size() - 1);
    H_ = c_.hash_mod;
    // 3. The candidates (every p dividing G) and one fold table: a mask of groups -> for every
    //    candidate the mask of its parts (part a = groups [a G/p, (a + 1) G/p)), side by side in
    //    one word, candidate ci's part a at bit first_[ci] + a (at most 31 bits for G <= 16).
    for (std::uint32_t p = 1; p <= G; ++p)
      if (G % p == 0) {
        first_.push_back(bits_);
        cand_p_.push_back(p);
        bits_ += p;
      }
    const std::size_t TM = std::size_t{1} << G;
    fold_.assign(TM, 0);
    for (std::size_t x = 0; x < TM; ++x)
      for (std::size_t ci = 0; ci < cand_p_.size(); ++ci) {
        const std::uint32_t per = G / cand_p_[ci];
        for (std::uint32_t gi = 0; gi < G; ++gi)
          if (x >> gi & 1) fold_[x] |= 1u << (first_[ci] + gi / per);
      }
    for (std::uint32_t x = 0; x < 256; ++x)
      for (std::uint32_t b = 0; b < 8; ++b)
        if (x >> b & 1) spread_[x] |= std::uint64_t{1} << (8 * b);
    // 4. The sums' arrays; the per-vertex words (vert_) are made by the first mark or count
    //    (a tally taken elsewhere needs none).
    if (F_ > 0xffff) {
      supported_ = false;
      return;
    }
    fine_.assign(static_cast<std::size_t>(F_) * F_, 0);
    local_.resize(threads_);
    for (Local& l : local_) {
      l.frow.assign(F_, 0);
      l.hash.assign(static_cast<std::size_t>(H_) * H_, 0);
      l.exact.assign(32, 0);
    }
  }

  bool tally_spec(RowTallySpec* spec) const override {
    if (!supported_) return false;
    spec->buckets = c_.fine_bounds;
    spec->groups = c_.vertex_bounds;
    spec->hash_mod = H_;
    spec->fold = fold_;
    return true;
  }

  void take_tally(RowTallySums&& sums) override {
    TS_CHECK(supported_ && sums.pairs.size() == fine_.size() &&
                 sums.hashed.size() == local_[0].hash.size(),
             "a row tally of other sizes than the census's");
    fine_ = std::move(sums.pairs);
    local_[0].hash = std::move(sums.hashed);
    for (std::size_t b = 0; b < 32; ++b) {
      local_[0].exact[b] = sums.both[b];
      tally_proxies_[b] = sums.marked[b];
      tally_degrees_[b] = sums.marked_out[b];
    }
    tallied_ = true;
  }

  void mark_rows(std::uint64_t r0, std::uint64_t r1, const vid_t* cols) override {
    if (!supported_ || r0 >= r1) return;
    make_vert();
    std::uint32_t g = bucket_of(c_.vertex_bounds, r0);
    const eid_t base = off_[r0];
    const eid_t end = off_[r1];
    for (std::uint64_t r = r0; r < r1; ++r) {
      while (g + 1 < G_ && r >= c_.vertex_bounds[g + 1]) ++g;
      const std::uint32_t bit = 1u << g;
      for (eid_t e = off_[r]; e < off_[r + 1]; ++e) {
        // (the columns are spread over all vertices: their entries fetched some way ahead)
        if (e + kAhead < end) __builtin_prefetch(&vert_[cols[e + kAhead - base]]);
        mark(cols[e - base], bit);
      }
    }
  }

  void mark_edges(const std::uint64_t* keys, std::size_t count) override {
    if (!supported_) return;
    make_vert();
    for (std::size_t i = 0; i < count; ++i) {
      // (the columns come in no order: their entries fetched some way ahead)
      if (i + kAhead < count) __builtin_prefetch(&vert_[static_cast<vid_t>(keys[i + kAhead])]);
      mark(static_cast<vid_t>(keys[i]), 1u << group_of(keys[i] >> 32));
    }
  }

  void count_rows(unsigned t, std::uint64_t r0, std::uint64_t r1, const vid_t* cols) override {
    if (!supported_ || r0 >= r1) return;
    make_vert();
    if ((H_ & (H_ - 1)) == 0)
      count<true>(local_[t], r0, r1, cols);
    else
      count<false>(local_[t], r0, r1, cols);
  }

  bool taken() const override { return taken_; }

  std::vector<unsigned char> finish() override {
    if (!supported_) return {};
    taken_ = true;
    // 1. The histograms and the exact proxy edges: the threads' sums.
    c_.fine_hist = std::move(fine_);
    c_.hash_hist.assign(static_cast<std::size_t>(H_) * H_, 0);
    std::vector<eid_t> exact(32, 0);
    for (const Local& l : local_) {
      for (std::size_t x = 0; x < c_.hash_hist.size(); ++x) c_.hash_hist[x] += l.hash[x];
      for (std::size_t x = 0; x < exact.size(); ++x) exact[x] += l.exact[x];
    }
    // 2. The proxy sets' sizes and out-degree sums: the tally's, or from the masks on all
    //    threads (one vertex at a time: only those some edge enters were ever marked).
    const std::size_t C = cand_p_.size();
    std::vector<std::vector<std::uint64_t>> proxies(threads_, std::vector<std::uint64_t>(32)),
        degrees(threads_, std::vector<std::uint64_t>(32));
    if (tallied_) {
      std::copy(tally_proxies_.begin(), tally_proxies_.end(), proxies[0].begin());
      std::copy(tally_degrees_.begin(), tally_degrees_.end(), degrees[0].begin());
    } else {
      make_vert();
      ThreadPool pool(threads_);
      const std::uint64_t pieces =
          std::min<std::uint64_t>(threads_, std::max<std::uint64_t>(n_, 1));
      pool.for_each_item(pieces, [&](std::size_t piece, unsigned t) {
        const std::uint64_t v0 = n_ * piece / pieces, v1 = n_ * (piece + 1) / pieces;
        std::uint64_t* px = proxies[t].data();
        std::uint64_t* dg = degrees[t].data();
        for (std::uint64_t v = v0; v < v1; ++v) {
          const std::uint32_t mv = vert_[v] & 0xffff;
          if (!mv) continue;
          const std::uint64_t d = off_[v + 1] - off_[v];
          for (std::uint32_t x = fold_[mv]; x; x &= x - 1) {
            const auto b = static_cast<std::size_t>(__builtin_ctz(x));
            ++px[b];
            dg[b] += d;
          }
        }
      });
    }
    // 3. The candidates, as take_census's vertex_candidates and exact_proxy_edges leave them.
    for (std::size_t ci = 0; ci < C; ++ci) {
      Census::VertexParts vp;
      vp.p = cand_p_[ci];
      for (std::uint32_t a = 0; a < vp.p; ++a) {
        std::uint64_t px = 0, dg = 0;
        const std::size_t b = first_[ci] + a;
        for (unsigned t = 0; t < threads_; ++t) {
          px += proxies[t][b];
          dg += degrees[t][b];
        }
        vp.proxies.push_back(px);
        vp.proxy_edges_upper.push_back(dg);
        vp.proxy_edges_bound.push_back(n_ > 0 ? exact[b] : dg);
      }
      c_.vertex.push_back(std::move(vp));
    }
    c_.vertex_exact = n_ > 0;
    std::vector<std::uint32_t>().swap(vert_);
    std::vector<unsigned char> payload = encode_census(c_, o_, n_, n_ ? off_[n_] : 0);
    c_ = Census();  // the histogram's megabytes, before the writer frames the payload
    return payload;
  }

 private:
  struct Local {
    std::vector<eid_t> frow;   // the fine histogram's row of the current row bucket
    std::vector<eid_t> hash;   // H x H
    std::vector<eid_t> exact;  // fold bit: edges with both ends in the part's proxy set
  };

  // Per vertex: its fine bucket (high half) beside its mask (low half), so that one load per edge
  // gives both; made once, by the first caller.
  void make_vert() {
    std::call_once(vert_made_, [this] {
      vert_.assign(n_, 0);
      for (std::uint32_t f = 0; f < F_; ++f)
        std::fill(vert_.begin() + static_cast<std::ptrdiff_t>(c_.fine_bounds[f]),
                  vert_.begin() + static_cast<std::ptrdiff_t>(c_.fine_bounds[f + 1]), f << 16);
    });
  }

  // The vertex group of u (bucket_of over vertex_bounds) without a branch: the inner bounds at or
  // below u, counted.
  std::uint32_t group_of(std::uint64_t u) const {
    std::uint32_t g = 0;
    for (std::uint32_t b = 0; b < kMaxGroups; ++b) g += u >= inner_[b];
    return g;
  }

  void mark(vid_t v, std::uint32_t bit) {
    // Read first: most marks repeat (a hub's column is marked by many rows of one group).
    if (!(__atomic_load_n(&vert_[v], __ATOMIC_RELAXED) & bit))
      __atomic_fetch_or(&vert_[v], bit, __ATOMIC_RELAXED);
  }

  // Adds the row bucket fu's counts of l into the shared fine histogram.
  void flush(Local& l, std::uint32_t fu, std::uint32_t lo, std::uint32_t hi) {
    eid_t* dst = fine_.data() + static_cast<std::size_t>(fu) * F_;
    for (std::uint32_t x = lo; x <= hi && x < F_; ++x)
      if (l.frow[x]) {
        __atomic_fetch_add(&dst[x], l.frow[x], __ATOMIC_RELAXED);
        l.frow[x] = 0;
      }
  }

  // One look at rows [r0, r1): the fine histogram's row, the hash histogram and the exact proxy
  // edges. An edge r -> v with both ends in proxy sets adds 1 to every (candidate, part) bit of
  // fold[mask r] & fold[mask v]: the bits are added as bytes (spread), 255 edges at a time, into
  // four words of byte counters.
  template <bool kPow2>
  void count(Local& l, std::uint64_t r0, std::uint64_t r1, const vid_t* cols) {
    const std::uint32_t H = H_;
    const eid_t base = off_[r0];
    const vid_t* const last = cols + (off_[r1] - base);
    const std::uint64_t* bounds = c_.fine_bounds.data();  // rows: the row buckets
    std::uint32_t fu = bucket_of(c_.fine_bounds, r0), lo = F_, hi = 0;
    std::uint64_t lanes[4] = {0, 0, 0, 0};
    unsigned pending = 0;
    auto drain = [&] {
      for (unsigned w = 0; w < 4; ++w)
        for (unsigned b = 0; b < 8; ++b) l.exact[w * 8 + b] += lanes[w] >> (8 * b) & 0xff;
      lanes[0] = lanes[1] = lanes[2] = lanes[3] = 0;
      pending = 0;
    };
    for (std::uint64_t r = r0; r < r1; ++r) {
      const vid_t* col = cols + (off_[r] - base);
      const std::size_t cnt = off_[r + 1] - off_[r];
      if (cnt == 0) continue;
      if (fu + 1 < F_ && r >= bounds[fu + 1]) {
        flush(l, fu, lo, hi);
        lo = F_;
        hi = 0;
        while (fu + 1 < F_ && r >= bounds[fu + 1]) ++fu;
      }
      lo = std::min(lo, vert_[col[0]] >> 16);  // the columns are sorted
      hi = std::max(hi, vert_[col[cnt - 1]] >> 16);
      eid_t* hrow = l.hash.data() + static_cast<std::size_t>(kPow2 ? (r & (H - 1)) : r % H) * H;
      const std::uint32_t tv = fold_[vert_[r] & 0xffff];
      for (std::size_t x = 0; x < cnt; ++x) {
        if (col + x + kAhead < last) __builtin_prefetch(&vert_[col[x + kAhead]]);
        const vid_t v = col[x];
        const std::uint32_t w = vert_[v];
        ++l.frow[w >> 16];
        ++hrow[kPow2 ? (v & (H - 1)) : v % H];
        if (tv) {
          const std::uint32_t y = tv & fold_[w & 0xffff];
          lanes[0] += spread_[y & 0xff];
          lanes[1] += spread_[y >> 8 & 0xff];
          lanes[2] += spread_[y >> 16 & 0xff];
          lanes[3] += spread_[y >> 24];
          if (++pending == 255) drain();
        }
      }
    }
    drain();
    flush(l, fu, lo, hi);
  }

  std::uint64_t n_ = 0;
  const eid_t* off_ = nullptr;
  unsigned threads_ = 1;
  CensusOptions o_;
  bool supported_ = false, taken_ = false;
  Census c_;
  std::uint32_t G_ = 1, F_ = 1, H_ = 1;
  std::uint64_t inner_[kMaxGroups] = {};       // vertex_bounds[1, G), then ~0 (group_of)
  std::vector<std::uint32_t> cand_p_, first_;  // the candidates' p and their first fold bit
  std::uint32_t bits_ = 0;
  std::vector<std::uint32_t> fold_;  // 2^G: group mask -> candidate part bits
  std::uint64_t spread_[256] = {};   // bit b of a byte -> byte b of a word
  std::vector<std::uint32_t> vert_;  // per vertex: fine bucket << 16 | mask of groups
  std::once_flag vert_made_;
  bool tallied_ = false;  // take_tally gave the sums
  std::array<std::uint64_t, 32> tally_proxies_{}, tally_degrees_{};
  std::vector<eid_t> fine_;
  std::vector<Local> local_;
};

}  // namespace

std::unique_ptr<CensusRows> stored_census_rows() {
  return std::make_unique<StoredCensusRows>();
}

}  // namespace tristream::plan_internal
