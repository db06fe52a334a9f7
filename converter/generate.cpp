// generate.cpp — Graph500 Kronecker and Erdős–Rényi generators.
//
// Edge i depends only on (seed, i): its random words come from a counter-based generator (the
// SplitMix64 finaliser applied to a Weyl sequence keyed by the seed and the edge index), so any
// split of the index range over threads yields the same edges.
#include "tristream/generate.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/atomic_file.hpp"
#include "pipeline.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace conv {
namespace {

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// The model: edge(i) -> (u, v) in [0, 2^scale).
class Model {
 public:
  explicit Model(const GenerateOptions& o) : kron_(o.kind == "kronecker"), scale_(o.scale) {
    if (o.kind != "kronecker" && o.kind != "uniform")
      throw Error(ErrorKind::Usage,
                  "generate: kind must be kronecker or uniform, not '" + o.kind + "'");
    if (o.scale < 1 || o.scale > 32)
      throw Error(ErrorKind::Usage,
                  "generate: scale must be 1..32, got " + std::to_string(o.scale));
    key_ = mix64(o.seed * kGolden + 0x632be59bd9b4e019ull);
    mask_ = o.scale == 64 ? ~0ull : (std::uint64_t{1} << o.scale) - 1;
    m1_ = mix64(key_ ^ 0x1111) | 1;
    m2_ = mix64(key_ ^ 0x2222) | 1;
    k1_ = mix64(key_ ^ 0x3333) & mask_;
    k2_ = mix64(key_ ^ 0x4444) & mask_;
  }

  void edge(std::uint64_t i, std::uint64_t& u, std::uint64_t& v) const {
    const std::uint64_t base = mix64(key_ + i * kGolden);
    if (!kron_) {
      u = mix64(base + 1 * kGolden) >> (64 - scale_);
      v = mix64(base + 2 * kGolden) >> (64 - scale_);
      return;
    }
    // Graph500: A = 0.57, B = 0.19, C = 0.19, D = 0.05; per level the row bit is 1 with
    // probability C + D, and the column bit with D / (C + D) or B / (A + B).
    constexpr std::uint64_t kAB = static_cast<std::uint64_t>(0.76 * 4294967296.0);
    constexpr std::uint64_t kCNorm = static_cast<std::uint64_t>(0.19 / 0.24 * 4294967296.0);
    constexpr std::uint64_t kANorm = static_cast<std::uint64_t>(0.57 / 0.76 * 4294967296.0);
    std::uint64_t a = 0, b = 0;
    for (unsigned l = 0; l < scale_; ++l) {
      const std::uint64_t r = mix64(base + (l + 1) * kGolden);
      const std::uint64_t x = r >> 32, y = r & 0xffffffffu;
      const std::uint64_t ii = x >= kAB;
      const std::uint64_t jj = y >= (ii ? kCNorm : kANorm);
      a |= ii << l;
      b |= jj << l;
    }
    u = scramble(a);
    v = scramble(b);
  }

 private:
  // A bijection of [0, 2^scale) keyed by the seed (odd multipliers and xor-shifts mod 2^scale).
  std::uint64_t scramble(std::uint64_t x) const {
    const unsigned h = scale_ / 2 + 1;
    x = (x * m1_ + k1_) & mask_;
    x ^= x >> h;
    x = (x * m2_ + k2_) & mask_;
    x ^= x >> h;
    return x;
  }
  bool kron_;
  unsigned scale_;
  std::uint64_t key_, mask_, m1_, m2_, k1_, k2_;
};

std::uint64_t edge_count(const GenerateOptions& o) {
  return static_cast<std::uint64_t>(o.edge_factor) << o.scale;
}

class GenProducer : public Producer {
 public:
  GenProducer(const GenerateOptions& o, std::size_t job)
      : model_(o), total_(edge_count(o)), per_job_(std::max<std::size_t>(job / 16, 1024)) {}
  std::string name() const override { return "generator"; }
  std::uint64_t done() const override { return next_; }
  std::uint64_t total() const override { return total_; }
  std::uint64_t input_bytes() const override { return 0; }
  std::function<void(Block&)> next() override {
    if (next_ >= total_) return {};
    const std::uint64_t lo = next_, hi = std::min(total_, lo + per_job_);
    next_ = hi;
    const Model* model = &model_;
    return [model, lo, hi](Block& blk) {
      blk.edges.reserve(hi - lo);
      Edge64* w = blk.edges.data();
      std::uint64_t loops = 0, max_id = 0;
      for (std::uint64_t i = lo; i < hi; ++i) {
        std::uint64_t u, v;
        model->edge(i, u, v);
        if (u == v) {
          ++loops;
          continue;
        }
        if (u > v) std::swap(u, v);
        *w++ = Edge64{u, v};
        max_id = std::max(max_id, v);
      }
      blk.edges.resize(static_cast<std::size_t>(w - blk.edges.data()));
      blk.records = hi - lo;
      blk.loops = loops;
      blk.max_id = max_id;
    };
  }

 private:
  Model model_;
  std::uint64_t total_, next_ = 0;
  std::size_t per_job_;
};

// Writes the generated edges as text or binary through a temporary file renamed at the end.
std::uint64_t write_edge_file(const GenerateOptions& o, const std::string& output, bool text) {
  const Model model(o);
  const std::uint64_t total = edge_count(o);
  const unsigned threads = resolve_threads(o.threads);
  const tristream::TempFile t = create_temp_beside(output);  // exclusive, unpredictable name
  const std::string tmp = t.path;
  std::FILE* f = ::fdopen(t.fd, "wb");
  if (!f) {
    ::close(t.fd);
    std::remove(tmp.c_str());
    throw Error(ErrorKind::Internal, output + ": cannot create: " + std::strerror(errno));
  }
  try {
    const std::uint64_t per_piece = 1 << 20;
    std::vector<std::string> pieces(threads);
    for (std::uint64_t lo = 0; lo < total; lo += per_piece * threads) {
      const std::uint64_t group_hi = std::min(total, lo + per_piece * threads);
      const std::size_t np = static_cast<std::size_t>((group_hi - lo + per_piece - 1) / per_piece);
      parallel_for(threads, np, 1, [&](std::size_t a, std::size_t b, unsigned) {
        for (std::size_t p = a; p < b; ++p) {
          const std::uint64_t s = lo + p * per_piece, e = std::min(group_hi, s + per_piece);
          std::string& out = pieces[p];
          out.clear();
          if (!text) {
            out.resize((e - s) * 16);
            char* w = &out[0];
            for (std::uint64_t i = s; i < e; ++i, w += 16) {
              std::uint64_t u, v;
              model.edge(i, u, v);
              std::memcpy(w, &u, 8);
              std::memcpy(w + 8, &v, 8);
            }
            continue;
          }
          out.resize((e - s) * 42);
          char* w = &out[0];
          for (std::uint64_t i = s; i < e; ++i) {
            std::uint64_t uv[2];
            model.edge(i, uv[0], uv[1]);
            for (int k = 0; k < 2; ++k) {
              char digits[24];
              int nd = 0;
              std::uint64_t x = uv[k];
              do {
                digits[nd++] = static_cast<char>('0' + x % 10);
                x /= 10;
              } while (x);
              while (nd) *w++ = digits[--nd];
              *w++ = k == 0 ? ' ' : '\n';
            }
          }
          out.resize(static_cast<std::size_t>(w - out.data()));
        }
      });
      for (std::size_t p = 0; p < np; ++p)
        if (std::fwrite(pieces[p].data(), 1, pieces[p].size(), f) != pieces[p].size())
          throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
    }
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
      throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
    if (std::fclose(f) != 0) {
      f = nullptr;
      throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
    }
    f = nullptr;
    if (std::rename(tmp.c_str(), output.c_str()) != 0)
      throw Error(ErrorKind::Internal, output + ": cannot rename: " + std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  return total;
}

}  // namespace
}  // namespace conv

std::vector<std::pair<std::uint64_t, std::uint64_t>> generate_edges(
    const GenerateOptions& options) {
  const conv::Model model(options);
  const std::uint64_t total = conv::edge_count(options);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out(total);
  conv::parallel_for(conv::resolve_threads(options.threads), total, 1 << 16,
                     [&](std::size_t lo, std::size_t hi, unsigned) {
                       for (std::size_t i = lo; i < hi; ++i)
                         model.edge(i, out[i].first, out[i].second);
                     });
  return out;
}

ConvertSummary generate(const GenerateOptions& options, const std::string& output,
                        const ConvertOptions& convert_options) {
  const double t0 = conv::now_seconds();
  if (conv::has_suffix(output, ".tcsr")) {
    ConvertOptions co = convert_options;
    if (co.threads == 0) co.threads = options.threads;
    conv::GenProducer producer(options, conv::job_bytes(co));
    return conv::run_conversion(producer, output, co, t0);
  }
  const bool text = conv::has_suffix(output, ".el") || conv::has_suffix(output, ".txt");
  if (!text && !conv::has_suffix(output, ".bin"))
    throw Error(ErrorKind::Usage,
                "generate: the output must end in .tcsr, .el (text) or .bin "
                "(uint64 pairs): " +
                    output);
  ConvertSummary s;
  s.input_edges = conv::write_edge_file(options, output, text);
  s.seconds = conv::now_seconds() - t0;
  return s;
}

}  // namespace tristream
