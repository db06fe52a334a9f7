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
// Memory: the mask (2 bytes per vertex), one F x F fine histogram (8 MiB at F = 1024) that the
// threads add their rows into, the fold tables, and per thread one histogram row, the hash
// histogram and the proxy edge counters.
#include <algorithm>

#include "common/thread_pool.hpp"
#include "plan/census_store.hpp"
#include "tristream/error.hpp"

namespace tristream::plan_internal {
namespace {

constexpr std::uint32_t kMaxGroups = 16;  // the mask's bits

std::uint32_t bucket_of(const std::vector<std::uint64_t>& bounds, std::uint64_t x) {
  return static_cast<std::uint32_t>(std::upper_bound(bounds.begin(), bounds.end(), x) -
                                    bounds.begin() - 1);
}

class StoredCensusRows final : public CensusRows {
 public:
  std::uint64_t memory_bytes(std::uint64_t n, unsigned threads) const override {
    const CensusOptions o = stored_census_options(n);
    const std::uint64_t F = o.fine, H = std::max<std::uint32_t>(1, o.hash_mod);
    const std::uint64_t tables = 5 * (std::uint64_t{1} << kMaxGroups) * 2;
    const std::uint64_t per_thread = F * 8 + H * H * 8 + 16 * 16 * 8 + 1024;
    return n * 2 + F * F * 8 + tables + threads * per_thread;
  }

  void start(std::uint64_t n, const eid_t* offsets, unsigned threads) override {
    n_ = n;
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
    F_ = static_cast<std::uint32_t>(c_.fine_bounds.size() - 1);
    H_ = c_.hash_mod;
    // 3. The candidates (every p dividing G) and their fold tables: a mask of groups -> the mask
    //    of the candidate's parts (part a = groups [a G/p, (a + 1) G/p)).
    for (std::uint32_t p = 1; p <= G; ++p)
      if (G % p == 0) cand_p_.push_back(p);
    const std::size_t TM = std::size_t{1} << G;
    table_.assign(cand_p_.size() * TM, 0);
    for (std::size_t ci = 0; ci < cand_p_.size(); ++ci) {
      const std::uint32_t per = G / cand_p_[ci];
      for (std::size_t x = 0; x < TM; ++x) {
        std::uint16_t r = 0;
        for (std::uint32_t gi = 0; gi < G; ++gi)
          if (x >> gi & 1) r = static_cast<std::uint16_t>(r | (1u << (gi / per)));
        table_[ci * TM + x] = r;
      }
    }
    mask_.assign(n, 0);
    fine_.assign(static_cast<std::size_t>(F_) * F_, 0);
    local_.resize(threads_);
    for (Local& l : local_) {
      l.frow.assign(F_, 0);
      l.hash.assign(static_cast<std::size_t>(H_) * H_, 0);
      l.exact.assign(cand_p_.size() * 16, 0);
    }
  }

  void mark_rows(std::uint64_t r0, std::uint64_t r1, const vid_t* cols) override {
    if (!supported_ || r0 >= r1) return;
    std::uint32_t g = bucket_of(c_.vertex_bounds, r0);
    const eid_t base = off_[r0];
    for (std::uint64_t r = r0; r < r1; ++r) {
      while (g + 1 < G_ && r >= c_.vertex_bounds[g + 1]) ++g;
      const std::uint16_t bit = static_cast<std::uint16_t>(1u << g);
      for (eid_t e = off_[r]; e < off_[r + 1]; ++e) mark(cols[e - base], bit);
    }
  }

  void mark_edges(const std::uint64_t* keys, std::size_t count) override {
    if (!supported_) return;
    for (std::size_t i = 0; i < count; ++i)
      mark(static_cast<vid_t>(keys[i]),
           static_cast<std::uint16_t>(1u << bucket_of(c_.vertex_bounds, keys[i] >> 32)));
  }

  void count_rows(unsigned t, std::uint64_t r0, std::uint64_t r1, const vid_t* cols) override {
    if (!supported_ || r0 >= r1) return;
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
    std::vector<eid_t> exact(cand_p_.size() * 16, 0);
    for (const Local& l : local_) {
      for (std::size_t x = 0; x < c_.hash_hist.size(); ++x) c_.hash_hist[x] += l.hash[x];
      for (std::size_t x = 0; x < exact.size(); ++x) exact[x] += l.exact[x];
    }
    // 2. The proxy sets' sizes and out-degree sums, from the masks, on all threads.
    const std::size_t C = cand_p_.size(), TM = std::size_t{1} << G_;
    std::vector<std::vector<std::uint64_t>> proxies(threads_, std::vector<std::uint64_t>(C * 16)),
        degrees(threads_, std::vector<std::uint64_t>(C * 16));
    ThreadPool pool(threads_);
    const std::uint64_t pieces = std::min<std::uint64_t>(threads_, std::max<std::uint64_t>(n_, 1));
    pool.for_each_item(pieces, [&](std::size_t piece, unsigned t) {
      const std::uint64_t v0 = n_ * piece / pieces, v1 = n_ * (piece + 1) / pieces;
      std::uint64_t* px = proxies[t].data();
      std::uint64_t* dg = degrees[t].data();
      for (std::uint64_t v = v0; v < v1; ++v) {
        const std::uint16_t mv = mask_[v];
        if (!mv) continue;
        const std::uint64_t d = off_[v + 1] - off_[v];
        for (std::size_t ci = 0; ci < C; ++ci)
          for (std::uint32_t x = table_[ci * TM + mv]; x; x &= x - 1) {
            const std::size_t a = ci * 16 + static_cast<std::size_t>(__builtin_ctz(x));
            ++px[a];
            dg[a] += d;
          }
      }
    });
    // 3. The candidates, as take_census's vertex_candidates and exact_proxy_edges leave them.
    for (std::size_t ci = 0; ci < C; ++ci) {
      Census::VertexParts vp;
      vp.p = cand_p_[ci];
      for (std::uint32_t a = 0; a < vp.p; ++a) {
        std::uint64_t px = 0, dg = 0;
        for (unsigned t = 0; t < threads_; ++t) {
          px += proxies[t][ci * 16 + a];
          dg += degrees[t][ci * 16 + a];
        }
        vp.proxies.push_back(px);
        vp.proxy_edges_upper.push_back(dg);
        vp.proxy_edges_bound.push_back(n_ > 0 ? exact[ci * 16 + a] : dg);
      }
      c_.vertex.push_back(std::move(vp));
    }
    c_.vertex_exact = n_ > 0;
    std::vector<std::uint16_t>().swap(mask_);
    return encode_census(c_, o_, n_, n_ ? off_[n_] : 0);
  }

 private:
  struct Local {
    std::vector<eid_t> frow;   // the fine histogram's row of the current row bucket
    std::vector<eid_t> hash;   // H x H
    std::vector<eid_t> exact;  // candidate x part: edges with both ends in the part's proxy set
  };

  void mark(vid_t v, std::uint16_t bit) {
    // Read first: most marks repeat (a hub's column is marked by many rows of one group).
    if (!(__atomic_load_n(&mask_[v], __ATOMIC_RELAXED) & bit))
      __atomic_fetch_or(&mask_[v], bit, __ATOMIC_RELAXED);
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

  template <bool kPow2>
  void count(Local& l, std::uint64_t r0, std::uint64_t r1, const vid_t* cols) {
    const std::size_t C = cand_p_.size(), TM = std::size_t{1} << G_;
    const std::uint32_t H = H_;
    const eid_t base = off_[r0];
    std::uint32_t fu = bucket_of(c_.fine_bounds, r0), lo = F_, hi = 0;
    std::uint16_t tv[16];
    for (std::uint64_t r = r0; r < r1; ++r) {
      const vid_t* col = cols + (off_[r] - base);
      const std::size_t cnt = off_[r + 1] - off_[r];
      if (cnt == 0) continue;
      if (fu + 1 < F_ && r >= c_.fine_bounds[fu + 1]) {
        flush(l, fu, lo, hi);
        lo = F_;
        hi = 0;
        while (fu + 1 < F_ && r >= c_.fine_bounds[fu + 1]) ++fu;
      }
      std::uint32_t fv = bucket_of(c_.fine_bounds, col[0]);
      lo = std::min(lo, fv);
      eid_t* hrow = l.hash.data() + static_cast<std::size_t>(kPow2 ? (r & (H - 1)) : r % H) * H;
      const std::uint16_t mv = mask_[r];
      for (std::size_t ci = 0; ci < C; ++ci) tv[ci] = mv ? table_[ci * TM + mv] : 0;
      for (std::size_t x = 0; x < cnt; ++x) {
        const vid_t v = col[x];
        while (fv + 1 < F_ && v >= c_.fine_bounds[fv + 1]) ++fv;
        ++l.frow[fv];
        ++hrow[kPow2 ? (v & (H - 1)) : v % H];
        const std::uint16_t mw = mv ? mask_[v] : 0;
        if (!mw) continue;
        for (std::size_t ci = 0; ci < C; ++ci)
          for (std::uint32_t y = tv[ci] & table_[ci * TM + mw]; y; y &= y - 1)
            ++l.exact[ci * 16 + static_cast<std::size_t>(__builtin_ctz(y))];
      }
      hi = std::max(hi, fv);
    }
    flush(l, fu, lo, hi);
  }

  std::uint64_t n_ = 0;
  const eid_t* off_ = nullptr;
  unsigned threads_ = 1;
  CensusOptions o_;
  bool supported_ = false, taken_ = false;
  Census c_;
  std::uint32_t G_ = 1, F_ = 1, H_ = 1;
  std::vector<std::uint32_t> cand_p_;
  std::vector<std::uint16_t> table_;
  std::vector<std::uint16_t> mask_;
  std::vector<eid_t> fine_;
  std::vector<Local> local_;
};

}  // namespace

std::unique_ptr<CensusRows> stored_census_rows() {
  return std::make_unique<StoredCensusRows>();
}

}  // namespace tristream::plan_internal
