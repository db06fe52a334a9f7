// generate.cpp — `generate`: a generator model's edges (gen_models.hpp) in memory, into the
// converter as a Producer (.tcsr), or into a text or binary edge list.
//
// The models are lists of independent pieces whose edges depend only on (seed, piece), so every
// output is the same for a seed whatever the thread count: the converter takes the pieces' blocks
// in order, and the edge-list writer writes the pieces in order.
#include "tristream/generate.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "gen_models.hpp"
#include "pipeline.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace conv {

std::unique_ptr<EdgeModel> make_model(const GenerateOptions& o) {
  if (o.scale < 1 || o.scale > 32)
    throw Error(ErrorKind::Usage, "generate: scale must be 1..32, got " + std::to_string(o.scale));
  if (o.kind == "kronecker" || o.kind == "uniform" || o.kind == "powerlaw")
    return make_draw_model(o);
  if (o.kind == "mesh") return make_mesh_model(o);
  if (o.kind == "community" || o.kind == "hub") return make_pair_model(o);
  throw Error(ErrorKind::Usage,
              "generate: the model must be kronecker, uniform, powerlaw, mesh, community or hub, "
              "not '" +
                  o.kind + "'");
}

namespace {

// Pieces per job or per write batch: about `edges` expected edges, at least one piece.
std::uint64_t pieces_for(const EdgeModel& m, std::uint64_t edges) {
  const std::uint64_t pieces = std::max<std::uint64_t>(m.pieces(), 1);
  const std::uint64_t per_piece = std::max<std::uint64_t>(m.expected_edges() / pieces, 1);
  return std::max<std::uint64_t>(edges / per_piece, 1);
}

class GenProducer : public Producer {
 public:
  GenProducer(const GenerateOptions& o, std::size_t job)
      : model_(make_model(o)),
        per_job_(pieces_for(*model_, std::max<std::size_t>(job / 16, 1024))),
        scale_(o.scale) {}
  std::string name() const override { return "generator"; }
  std::uint64_t done() const override {
    const double share = static_cast<double>(next_.load(std::memory_order_relaxed)) /
                         static_cast<double>(std::max<std::uint64_t>(model_->pieces(), 1));
    return static_cast<std::uint64_t>(share * static_cast<double>(model_->expected_edges()));
  }
  std::uint64_t total() const override { return model_->expected_edges(); }
  std::uint64_t input_bytes() const override { return 0; }
  bool bounds(std::uint64_t* records, std::uint64_t* max_id) const override {
    if (!model_->exact()) return false;
    *records = model_->expected_edges();
    *max_id = (std::uint64_t{1} << scale_) - 1;  // (every model's ids are below 2^scale)
    return true;
  }
  std::function<void(Block&)> next() override {
    // Called by the reader thread only; done() reads next_ from the progress thread.
    const std::uint64_t lo = next_.load(std::memory_order_relaxed);
    if (lo >= model_->pieces()) return {};
    const std::uint64_t hi = std::min(model_->pieces(), lo + per_job_);
    next_.store(hi, std::memory_order_relaxed);
    const EdgeModel* model = model_.get();
    return [model, lo, hi](Block& blk) {
      // 1. The pieces' raw edges.
      std::vector<GenEdge> raw;
      for (std::uint64_t c = lo; c < hi; ++c) {
        throw_if_interrupted();  // the block's failure, carried to the pipeline
        model->piece(c, raw);
      }
      // 2. Canonical edges without the self-loops, as the parsers make them.
      EdgeWriter w(blk, raw.size() + 1);
      std::uint64_t loops = 0, max_id = 0;
      for (auto [u, v] : raw) {
        if (u == v) {
          ++loops;
          continue;
        }
        if (u > v) std::swap(u, v);
        w.add(u, v);
        max_id = std::max<std::uint64_t>(max_id, v);
      }
      w.finish();
      blk.records = raw.size();
      blk.loops = loops;
      blk.max_id = max_id;
    };
  }

 private:
  std::unique_ptr<EdgeModel> model_;
  std::uint64_t per_job_;
  unsigned scale_;
  std::atomic<std::uint64_t> next_{0};  // the next piece
};

// The edges as text (`u v` lines) or binary (uint64 pairs), appended to out.
void format_edges(const std::vector<GenEdge>& edges, bool text, std::string& out) {
  if (!text) {
    const std::size_t at = out.size();
    out.resize(at + edges.size() * 16);
    char* w = &out[at];
    for (const auto& [u, v] : edges) {
      std::memcpy(w, &u, 8);
      std::memcpy(w + 8, &v, 8);
      w += 16;
    }
    return;
  }
  const std::size_t at = out.size();
  out.resize(at + edges.size() * 42);
  char* w = &out[at];
  for (const auto& e : edges) {
    const std::uint64_t uv[2] = {e.first, e.second};
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

// Writes the generated edges as text or binary through a temporary file renamed at the end;
// returns the edges written.
std::uint64_t write_edge_file(const GenerateOptions& o, const std::string& output, bool text) {
  const auto model = make_model(o);
  const unsigned threads = resolve_threads(o.threads);
  const std::uint64_t per_batch = pieces_for(*model, std::uint64_t{1} << 20);
  const tristream::TempFile t = create_temp_beside(output);  // exclusive, unpredictable name
  const std::string tmp = t.path;
  std::FILE* f = ::fdopen(t.fd, "wb");
  if (!f) {
    ::close(t.fd);
    std::remove(tmp.c_str());
    throw Error(ErrorKind::Internal, output + ": cannot create: " + std::strerror(errno));
  }
  std::uint64_t written = 0;
  try {
    // Groups of `threads` batches made in parallel, written in order.
    std::vector<std::string> bytes(threads);
    std::vector<std::uint64_t> counts(threads);
    const std::uint64_t P = model->pieces();
    for (std::uint64_t lo = 0; lo < P; lo += per_batch * threads) {
      const std::uint64_t group_hi = std::min(P, lo + per_batch * threads);
      const std::size_t nb = static_cast<std::size_t>((group_hi - lo + per_batch - 1) / per_batch);
      parallel_for(threads, nb, 1, [&](std::size_t a, std::size_t b, unsigned) {
        for (std::size_t k = a; k < b; ++k) {
          const std::uint64_t s = lo + k * per_batch, e = std::min(group_hi, s + per_batch);
          std::vector<GenEdge> edges;
          for (std::uint64_t c = s; c < e; ++c) {
            throw_if_interrupted();  // parallel_for carries it out; the temporary is removed
            model->piece(c, edges);
          }
          bytes[k].clear();
          format_edges(edges, text, bytes[k]);
          counts[k] = edges.size();
        }
      });
      for (std::size_t k = 0; k < nb; ++k) {
        if (std::fwrite(bytes[k].data(), 1, bytes[k].size(), f) != bytes[k].size())
          throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
        written += counts[k];
      }
    }
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
      throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
    if (std::fclose(f) != 0) {
      f = nullptr;
      throw Error(ErrorKind::Internal, output + ": write failed: " + std::strerror(errno));
    }
    f = nullptr;
    throw_if_interrupted();
    if (std::rename(tmp.c_str(), output.c_str()) != 0)
      throw Error(ErrorKind::Internal, output + ": cannot rename: " + std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  return written;
}

}  // namespace
}  // namespace conv

std::vector<std::pair<std::uint64_t, std::uint64_t>> generate_edges(
    const GenerateOptions& options) {
  const auto model = conv::make_model(options);
  const std::uint64_t P = model->pieces();
  std::vector<std::vector<conv::GenEdge>> parts(static_cast<std::size_t>(P));
  conv::parallel_for(resolve_threads(options.threads), parts.size(), 1,
                     [&](std::size_t lo, std::size_t hi, unsigned) {
                       for (std::size_t c = lo; c < hi; ++c) model->piece(c, parts[c]);
                     });
  std::size_t total = 0;
  for (const auto& p : parts) total += p.size();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  out.reserve(total);
  for (auto& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
    std::vector<conv::GenEdge>().swap(p);
  }
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
