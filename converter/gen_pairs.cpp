// gen_pairs.cpp — the Bernoulli-pair generator models (gen_models.hpp): every vertex pair of a
// pair space is an edge independently with probability p, drawn by geometric skips from one
// chosen pair to the next. The pair space is cut into pieces of about kDrawsPerPiece expected
// edges, each skipping with its own random stream, so the pieces are independent.
//
// - community (planted partition): `communities` groups of consecutive ids, sizes differing by at
//   most one; pairs inside a group with p_in, pairs across groups with p_out (the pass over all
//   pairs drops the pairs inside a group, so no pair is drawn twice). With p_in = 1 and p_out = 0
//   the graph is disjoint cliques.
// - hub: a uniform background of edge_factor * 2^scale draws (the uniform model) plus `hubs`
//   vertices (ids 0..hubs-1), each adjacent to every other vertex with probability hub_share.
#include <algorithm>
#include <cmath>
#include <string>

#include "gen_models.hpp"
#include "gen_random.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {
namespace {

using u128 = unsigned __int128;

// The pair (u, v), u < v, at index t of all pairs ordered by v then u: t = v(v-1)/2 + u.
GenEdge pair_at(std::uint64_t t) {
  std::uint64_t v = static_cast<std::uint64_t>(std::sqrt(2.0L * static_cast<long double>(t)));
  while (v > 0 && static_cast<u128>(v) * (v - 1) / 2 > t) --v;
  while (static_cast<u128>(v + 1) * v / 2 <= t) ++v;
  return {t - static_cast<std::uint64_t>(static_cast<u128>(v) * (v - 1) / 2), v};
}

// Bernoulli(p) over the pair indices [0, total), in pieces of `chunk` indices.
class BernoulliPairs {
 public:
  BernoulliPairs(std::uint64_t total, double p, std::uint64_t key)
      : total_(total), p_(p), key_(key) {
    const double chunk = std::ceil(static_cast<double>(kDrawsPerPiece) / std::max(p, 1e-300));
    chunk_ = chunk >= static_cast<double>(total) ? std::max<std::uint64_t>(total, 1)
                                                 : static_cast<std::uint64_t>(chunk);
  }
  std::uint64_t pieces() const { return p_ > 0 && total_ > 0 ? (total_ - 1) / chunk_ + 1 : 0; }
  double expected() const { return static_cast<double>(total_) * p_; }
  // emit(t) for every chosen index of piece c, in order.
  template <typename Emit>
  void piece(std::uint64_t c, Emit&& emit) const {
    std::uint64_t pos = c * chunk_;
    const std::uint64_t end = std::min(total_, pos + chunk_);
    const std::uint64_t key = mix64(key_ ^ (c * kGolden));
    for (std::uint64_t k = 0; pos < end; ++k) {
      const std::uint64_t gap = geometric_gap(word(key, k), p_, end - pos);
      if (gap >= end - pos) break;
      pos += gap;
      emit(pos);
      ++pos;
    }
  }

 private:
  std::uint64_t total_;
  double p_;
  std::uint64_t key_;
  std::uint64_t chunk_ = 1;
};

Error usage(const std::string& what) {
  return Error(ErrorKind::Usage, "generate: " + what);
}

double checked_probability(const char* name, double p) {
  if (!(p >= 0 && p <= 1))
    throw usage(std::string(name) + ": expected 0..1, got " + std::to_string(p));
  return p;
}

// Groups of consecutive ids: the first r = n mod K groups have s + 1 vertices, the rest s.
struct Groups {
  std::uint64_t n, K, s, r;
  std::uint64_t big_pairs() const { return (s + 1) * s / 2; }
  std::uint64_t small_pairs() const { return s * (s - 1) / 2; }
  std::uint64_t inside_pairs() const { return r * big_pairs() + (K - r) * small_pairs(); }
  std::uint64_t start(std::uint64_t g) const { return g * s + std::min(g, r); }
  std::uint64_t of(std::uint64_t v) const {
    return v < r * (s + 1) ? v / (s + 1) : r + (v - r * (s + 1)) / s;
  }
  // The pair at index t of the pairs inside groups (group by group).
  GenEdge inside_pair(std::uint64_t t) const {
    std::uint64_t g;
    if (t < r * big_pairs()) {
      g = t / big_pairs();
      t %= big_pairs();
    } else {
      t -= r * big_pairs();
      g = r + t / small_pairs();
      t %= small_pairs();
    }
    const GenEdge e = pair_at(t);
    return {start(g) + e.first, start(g) + e.second};
  }
};

class CommunityModel : public EdgeModel {
 public:
  explicit CommunityModel(const GenerateOptions& o)
      : n_(std::uint64_t{1} << o.scale),
        groups_(make_groups(o, n_)),
        inside_(groups_.inside_pairs(), checked_probability("--p-in", o.p_in), seed_key(o.seed, 1)),
        across_(static_cast<std::uint64_t>(static_cast<u128>(n_) * (n_ - 1) / 2),
                o.p_out < 0 ? std::min(1.0, 4.0 / static_cast<double>(n_))
                            : checked_probability("--p-out", o.p_out),
                seed_key(o.seed, 2)) {}
  std::uint64_t pieces() const override { return inside_.pieces() + across_.pieces(); }
  std::uint64_t expected_edges() const override {
    return static_cast<std::uint64_t>(inside_.expected() + across_.expected());
  }
  void piece(std::uint64_t c, std::vector<GenEdge>& out) const override {
    if (c < inside_.pieces()) {
      inside_.piece(c, [&](std::uint64_t t) { out.push_back(groups_.inside_pair(t)); });
      return;
    }
    across_.piece(c - inside_.pieces(), [&](std::uint64_t t) {
      const GenEdge e = pair_at(t);
      if (groups_.of(e.first) != groups_.of(e.second)) out.push_back(e);
    });
  }

 private:
  static Groups make_groups(const GenerateOptions& o, std::uint64_t n) {
    const std::uint64_t K = o.communities ? o.communities : std::max<std::uint64_t>(1, n / 64);
    if (K > n)
      throw usage("--communities: at most 2^scale = " + std::to_string(n) + ", got " +
                  std::to_string(K));
    return Groups{n, K, n / K, n % K};
  }
  std::uint64_t n_;
  Groups groups_;
  BernoulliPairs inside_, across_;
};

class HubModel : public EdgeModel {
 public:
  explicit HubModel(const GenerateOptions& o)
      : n_(std::uint64_t{1} << o.scale), background_(make_background(o)) {
    if (o.hubs < 1 || o.hubs > n_ || o.hubs > (std::uint64_t{1} << 62) / n_)
      throw usage("--hubs: expected 1..2^scale (and hubs * 2^scale < 2^62), got " +
                  std::to_string(o.hubs));
    pairs_ = std::make_unique<BernoulliPairs>(
        o.hubs * n_, checked_probability("--hub-share", o.hub_share), seed_key(o.seed, 3));
  }
  std::uint64_t pieces() const override { return background_->pieces() + pairs_->pieces(); }
  std::uint64_t expected_edges() const override {
    return background_->expected_edges() + static_cast<std::uint64_t>(pairs_->expected());
  }
  void piece(std::uint64_t c, std::vector<GenEdge>& out) const override {
    if (c < background_->pieces()) {
      background_->piece(c, out);
      return;
    }
    pairs_->piece(c - background_->pieces(), [&](std::uint64_t t) {
      const std::uint64_t h = t / n_, v = t % n_;
      if (v != h) out.push_back({h, v});
    });
  }

 private:
  static std::unique_ptr<EdgeModel> make_background(const GenerateOptions& o) {
    GenerateOptions u = o;
    u.kind = "uniform";
    return make_draw_model(u);
  }
  std::uint64_t n_;
  std::unique_ptr<EdgeModel> background_;
  std::unique_ptr<BernoulliPairs> pairs_;
};

}  // namespace

std::unique_ptr<EdgeModel> make_pair_model(const GenerateOptions& options) {
  if (options.kind == "community") return std::make_unique<CommunityModel>(options);
  return std::make_unique<HubModel>(options);
}

}  // namespace tristream::conv
