// gen_draws.cpp — the fixed-count generator models (gen_models.hpp): edge_factor * 2^scale
// independent draws, edge i from the random words of (seed, i).
//
// - kronecker: Graph500 recursive quadrant choices with the initiator (A, B, C, D), endpoints
//   renamed by the seeded vertex scramble so that the hubs are not the low ids.
// - uniform: both endpoints uniform in [0, 2^scale).
// - powerlaw: Chung-Lu; both endpoints drawn independently with probability proportional to a
//   weight w(x) = (x + x0)^(-alpha), alpha = 1 / (gamma - 1), over the continuous [0, n) (x's
//   integer part is the vertex), by inverting its closed-form distribution; degrees then follow a
//   power law with exponent gamma. x0 = 1 is the natural cap; --max-degree raises x0 until the
//   heaviest vertex expects at most that many edge ends. Endpoints are scrambled too.
#include <algorithm>
#include <cmath>
#include <string>

#include "gen_models.hpp"
#include "gen_random.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {
namespace {

Error usage(const std::string& what) {
  return Error(ErrorKind::Usage, "generate: " + what);
}

// The Chung-Lu weight distribution's closed-form CDF over [0, n) and its inverse.
class PowerLawSampler {
 public:
  PowerLawSampler(double n, double alpha, double x0) : n_(n), alpha_(alpha), x0_(x0) {
    log_ = std::fabs(1.0 - alpha) < 1e-9;
    total_ = mass(n);
  }
  // Integral of w over [0, x).
  double mass(double x) const {
    if (log_) return std::log((x + x0_) / x0_);
    const double e = 1.0 - alpha_;
    return (std::pow(x + x0_, e) - std::pow(x0_, e)) / e;
  }
  // The vertex whose interval holds the u-quantile (u in (0, 1]).
  std::uint64_t vertex(double u) const {
    const double t = u * total_;
    double x;
    if (log_) {
      x = x0_ * std::exp(t) - x0_;
    } else {
      const double e = 1.0 - alpha_;
      x = std::pow(std::pow(x0_, e) + e * t, 1.0 / e) - x0_;
    }
    const double last = n_ - 1;
    return static_cast<std::uint64_t>(std::clamp(std::floor(x), 0.0, last));
  }
  // The expected share of all edge ends that vertex 0 takes.
  double top_share() const { return mass(1.0) / total_; }

 private:
  double n_, alpha_, x0_, total_ = 0;
  bool log_ = false;
};

// x0 such that vertex 0 expects at most `cap` of the `ends` edge ends (bisection; the share
// falls as x0 grows). 1 when the natural cap is already below it.
double offset_for_cap(double n, double alpha, double ends, double cap) {
  if (PowerLawSampler(n, alpha, 1.0).top_share() * ends <= cap) return 1.0;
  double lo = 1.0, hi = 1.0;
  while (PowerLawSampler(n, alpha, hi).top_share() * ends > cap && hi < 1e18) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (PowerLawSampler(n, alpha, mid).top_share() * ends > cap ? lo : hi) = mid;
  }
  return hi;
}

class DrawModel : public EdgeModel {
 public:
  explicit DrawModel(const GenerateOptions& o)
      : scale_(o.scale),
        total_(static_cast<std::uint64_t>(o.edge_factor) << o.scale),
        key_(seed_key(o.seed)),
        scramble_(key_, o.scale),
        sampler_(1, 1, 1) {
    if (o.kind == "kronecker") {
      kind_ = Kind::Kronecker;
      set_initiator(o);
    } else if (o.kind == "uniform") {
      kind_ = Kind::Uniform;
    } else {
      kind_ = Kind::PowerLaw;
      set_power_law(o);
    }
  }
  std::uint64_t pieces() const override { return (total_ + kDrawsPerPiece - 1) / kDrawsPerPiece; }
  std::uint64_t expected_edges() const override { return total_; }
  bool exact() const override { return true; }
  void piece(std::uint64_t c, std::vector<GenEdge>& out) const override {
    const std::uint64_t lo = c * kDrawsPerPiece, hi = std::min(total_, lo + kDrawsPerPiece);
    for (std::uint64_t i = lo; i < hi; ++i) {
      GenEdge e;
      edge(i, e.first, e.second);
      out.push_back(e);
    }
  }

 private:
  enum class Kind { Kronecker, Uniform, PowerLaw };

  void set_initiator(const GenerateOptions& o) {
    const double a = o.kronecker_a, b = o.kronecker_b, c = o.kronecker_c, d = 1.0 - a - b - c;
    if (!(a > 0 && b >= 0 && c >= 0 && d >= -1e-12 && a + b < 1 && c + d > 0))
      throw usage(
          "the Kronecker initiator needs A > 0, B, C >= 0 and A + B + C <= 1 with "
          "C + D > 0 (got A " +
          std::to_string(a) + ", B " + std::to_string(b) + ", C " + std::to_string(c) + ")");
    // Per level the row bit is 1 with probability C + D, and the column bit with D / (C + D)
    // (row bit 1) or B / (A + B) (row bit 0); thresholds on 32-bit words.
    const double two32 = 4294967296.0;
    ab_ = static_cast<std::uint64_t>((a + b) * two32);
    c_norm_ = static_cast<std::uint64_t>(c / (c + std::max(d, 0.0)) * two32);
    a_norm_ = static_cast<std::uint64_t>(a / (a + b) * two32);
  }

  void set_power_law(const GenerateOptions& o) {
    if (!(o.exponent >= 1.5 && o.exponent <= 5))
      throw usage("--exponent: expected 1.5..5, got " + std::to_string(o.exponent));
    const double n = std::ldexp(1.0, static_cast<int>(o.scale));
    const double alpha = 1.0 / (o.exponent - 1.0);
    const double ends = 2.0 * static_cast<double>(total_);
    double x0 = 1.0;
    if (o.max_degree) {
      if (static_cast<double>(o.max_degree) < ends / n)
        throw usage("--max-degree " + std::to_string(o.max_degree) + " is below the mean degree " +
                    std::to_string(ends / n));
      x0 = offset_for_cap(n, alpha, ends, static_cast<double>(o.max_degree));
    }
    sampler_ = PowerLawSampler(n, alpha, x0);
  }

  void edge(std::uint64_t i, std::uint64_t& u, std::uint64_t& v) const {
    const std::uint64_t base = word(key_, i);
    if (kind_ == Kind::Uniform) {
      u = mix64(base + 1 * kGolden) >> (64 - scale_);
      v = mix64(base + 2 * kGolden) >> (64 - scale_);
      return;
    }
    if (kind_ == Kind::PowerLaw) {
      u = scramble_(sampler_.vertex(unit_open0(mix64(base + 1 * kGolden))));
      v = scramble_(sampler_.vertex(unit_open0(mix64(base + 2 * kGolden))));
      return;
    }
    std::uint64_t a = 0, b = 0;
    for (unsigned l = 0; l < scale_; ++l) {
      const std::uint64_t r = mix64(base + (l + 1) * kGolden);
      const std::uint64_t x = r >> 32, y = r & 0xffffffffu;
      const std::uint64_t ii = x >= ab_;
      const std::uint64_t jj = y >= (ii ? c_norm_ : a_norm_);
      a |= ii << l;
      b |= jj << l;
    }
    u = scramble_(a);
    v = scramble_(b);
  }

  Kind kind_ = Kind::Uniform;
  unsigned scale_;
  std::uint64_t total_, key_;
  Scramble scramble_;
  std::uint64_t ab_ = 0, c_norm_ = 0, a_norm_ = 0;
  PowerLawSampler sampler_;
};

}  // namespace

std::unique_ptr<EdgeModel> make_draw_model(const GenerateOptions& options) {
  return std::make_unique<DrawModel>(options);
}

}  // namespace tristream::conv
