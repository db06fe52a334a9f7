// stream/count.cpp — the count entry points (tristream/pipeline.hpp): the backend choice, the
// budgets resolved once, planning, and re-planning with half the device budget when the backend
// runs out of device memory (DeviceOutOfMemory); the .tcsr Reader as a GraphSource; and the CUDA
// streaming backend's stub in a build without CUDA.
#include "common/interrupt.hpp"
#include "stream/clock.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

using stream::now_s;

namespace {

class ReaderSource final : public GraphSource {
 public:
  explicit ReaderSource(const tcsr::Reader& r) : r_(r) {
    for (const auto& c : r.chunks()) compressed_ += c.compressed_size;
  }
  std::string name() const override { return r_.path(); }
  std::uint64_t n() const override { return r_.n(); }
  eid_t m() const override { return r_.m(); }
  const eid_t* offsets() const override { return r_.offsets(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return r_.chunks(); }
  void read_chunk(std::uint64_t k, vid_t* out) const override { r_.read_chunk(k, out); }
  std::uint64_t compressed_bytes() const override { return compressed_; }
  bool stored_census(std::vector<unsigned char>* out, std::size_t limit) const override {
    if (!r_.has_census()) return false;
    *out = r_.census(limit);
    return true;
  }

 private:
  const tcsr::Reader& r_;
  std::uint64_t compressed_ = 0;
};

}  // namespace

std::unique_ptr<GraphSource> reader_source(const tcsr::Reader& reader) {
  return std::make_unique<ReaderSource>(reader);
}

std::unique_ptr<StreamingBackend> make_streaming_backend(const PipelineOptions& options) {
  const std::string& b = options.backend;
  if (b == "cpu" || (b == "auto" && cuda_device_count() == 0))
    return make_cpu_streaming_backend(make_cpu_counter(options.counter));
  if (b == "cuda" || b == "auto") return make_cuda_streaming_backend(options.counter);
  throw Error(ErrorKind::Usage, "--backend: unknown backend '" + b + "' (use auto, cpu or cuda)");
}

CountReport count_source(const GraphSource& g, const PipelineOptions& options,
                         StreamingBackend* backend) {
  std::unique_ptr<StreamingBackend> owned;
  if (!backend) {
    owned = make_streaming_backend(options);
    backend = owned.get();
  }
  SigintScope sigint(options.handle_sigint);
  return count_with_backend(g, options, *backend);
}

CountReport count_file(const tcsr::Reader& reader, const PipelineOptions& options,
                       StreamingBackend* backend) {
  auto src = reader_source(reader);
  return count_source(*src, options, backend);
}

#ifndef TRISTREAM_HAVE_CUDA
std::unique_ptr<StreamingBackend> make_cuda_streaming_backend(const CounterOptions&) {
  throw Error(ErrorKind::Usage,
              "the CUDA backend is not available: tristream was built without CUDA (no nvcc at "
              "configure time); use --backend cpu");
}
#endif

CountReport count_with_backend(const GraphSource& g, const PipelineOptions& options,
                               StreamingBackend& backend) {
  // 1. The budgets, once for the command (unless the caller resolved them already).
  PipelineOptions run = options;
  if (!run.budgets) run.budgets = resolve_budgets(budget_flags(options), &backend);
  PlanOptions po = plan_options(run, *run.budgets, &backend);
  // 2. Plan and run; on device out-of-memory, plan again with half the device budget.
  std::uint64_t replans = 0;
  for (;;) {
    const double t0 = now_s();
    Census census;
    Plan plan;
    double ahead_s = 0;  // census and planner seconds spent before this call (a ready plan)
    try {
      if (!take_ready_plan(run, po, replans, &plan, &census, &ahead_s))
        plan = plan_graph(g, po, &census);
    } catch (const Error& e) {  // SIGINT/SIGTERM during the census: nothing counted
      if (e.kind() != ErrorKind::Interrupted) throw;
      CountReport rep;
      rep.interrupted = true;
      return rep;
    }
    const double plan_s = now_s() - t0 - census.seconds;
    try {
      CountReport rep = run_plan(g, plan, backend, run);
      rep.stats.replans = replans;
      rep.stats.census_s = census.seconds;
      rep.stats.plan_s = plan_s;
      rep.stats.planned_ahead_s = ahead_s;
      rep.census = census.empty() ? "none" : census.stored ? "stored" : "pass";
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
