// count.cpp — tristream::count and count_edges: resolve the input to a .tcsr file (converting an
// edge list or an edge array into a temporary one), run the streamed count (count_file), stream
// the degrees for the clustering figures, and gather the result in original-id order.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <numeric>
#include <optional>

#include "api/temp_dir.hpp"
#include "common/json.hpp"
#include "tristream/analysis.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"
#include "tristream/tristream.hpp"
#include "units.hpp"

namespace tristream {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The engine's options for a count (the command line's mapping of the same options).
PipelineOptions pipeline_options(const CountOptions& o) {
  if (o.parts > kMaxParts)
    throw Error(ErrorKind::Usage, "parts: at most " + std::to_string(kMaxParts) + " are supported");
  PipelineOptions po;
  po.backend = o.backend;
  po.counter.threads = o.threads;
  po.counter.kernel = o.kernel;
  po.counter.device = static_cast<int>(o.device);
  po.scheme = parse_scheme(o.scheme);
  po.parts = o.parts;
  po.gpu_memory = o.gpu_memory.bytes();
  po.host_memory = o.host_memory.bytes();
  po.threads = o.threads;
  po.per_vertex = o.per_vertex || o.clustering;
  po.trace_path = o.trace;
  po.handle_sigint = o.handle_sigint;  // off by default: the process's handlers are its own
  if (o.progress) po.on_unit_done = o.progress;
  return po;
}

ConvertOptions convert_options(const CountOptions& o, const std::string& tmp) {
  ConvertOptions c;
  c.format = o.format;
  c.quiet = o.quiet;
  c.threads = o.threads;
  c.tmp_dir = tmp;
  return c;
}

// The plan as `tristream count --json` reports it.
std::string plan_json(const Plan& plan) {
  JsonObject p;
  p.add("scheme", scheme_name(plan.partition.scheme))
      .add("parts", unsigned{plan.partition.p})
      .add("units", std::uint64_t{plan.units.size()})
      .add("slot_bytes", std::uint64_t{plan.slot_bytes})
      .add("staging", plan.streamed_staging() ? "streamed" : "full")
      .add("piece_bytes", std::uint64_t{plan.piece_bytes})
      .add("host_staging_bytes", std::uint64_t{plan.host_staging_bytes()})
      .add("device_bytes", std::uint64_t{plan.device_bytes})
      .add("bytes_moved", std::uint64_t{plan.bytes_moved})
      .add("in_flight", plan.in_flight)
      .add("tail_cover_units", std::uint64_t{plan.tail_cover_units})
      .add("tail_cover_slices", std::uint64_t{plan.tail_cover_slices})
      .add("reason", plan.reason);
  return p.str();
}

// The plan in one line: scheme, parts, units and the streamed staging when there is one.
std::string plan_line(const Plan& plan) {
  std::string s = scheme_name(plan.partition.scheme) + ", p = " + std::to_string(plan.partition.p) +
                  ", " + std::to_string(plan.units.size()) + " units";
  if (plan.streamed_staging())
    s += ", streamed staging in " + std::to_string(plan.staging_buffers) + " x " +
         format_bytes(plan.piece_bytes) + " pieces";
  return s;
}

// Counts the .tcsr file at `path`; t0 is the call's start (for CountResult::seconds).
CountResult count_tcsr(const std::string& path, const CountOptions& o, Clock::time_point t0,
                       double convert_seconds) {
  // 1. Make the backend before reading the graph, so a missing backend fails fast.
  PipelineOptions po = pipeline_options(o);
  const auto backend = make_streaming_backend(po);
  tcsr::Reader reader(path);
  const auto src = reader_source(reader);

  // 2. Count; with the GPU counting, the degrees are streamed on host threads meanwhile (their
  //    bytes come out of the host budget, as on the command line).
  auto degrees_of_file = [&] { return streamed_degrees(*src, o.threads); };
  std::future<std::vector<eid_t>> degrees_future;
  if (backend->name() == "cuda") {
    const std::uint64_t budget = po.host_memory ? po.host_memory : default_host_budget();
    if (budget) {
      const std::uint64_t d = streamed_degrees_bytes(*src, o.threads);
      po.host_memory = budget > 2 * d ? budget - d : budget / 2;
    }
    degrees_future = std::async(std::launch::async, degrees_of_file);
  }
  CountReport rep = count_file(reader, po, backend.get());
  const std::vector<eid_t> degrees =
      degrees_future.valid() ? degrees_future.get() : degrees_of_file();

  // 3. The result; per-vertex figures in original-id order.
  CountResult r;
  r.triangles = rep.triangles;
  r.vertices = reader.n();
  r.edges = reader.m();
  r.transitivity = transitivity(rep.triangles, degrees);
  r.backend = rep.stats.backend;
  r.device = backend->describe();
  r.stats = rep.stats.to_json();
  r.plan = plan_json(rep.plan);
  r.plan_summary = plan_line(rep.plan);
  r.stats_summary = rep.stats.summary();
  r.interrupted = rep.interrupted;
  r.plan_seconds = rep.stats.census_s + rep.stats.plan_s;
  r.count_seconds = rep.stats.wall_s;
  r.convert_seconds = convert_seconds;
  if (po.per_vertex) {
    const std::vector<orig_id_t> perm = reader.permutation();
    std::vector<std::uint64_t> order(rep.per_vertex.size());
    std::iota(order.begin(), order.end(), std::uint64_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::uint64_t a, std::uint64_t b) { return perm[a] < perm[b]; });
    r.vertex_ids.resize(order.size());
    r.per_vertex.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      r.vertex_ids[i] = perm[order[i]];
      r.per_vertex[i] = rep.per_vertex[order[i]];
    }
    if (o.clustering) {
      r.clustering.resize(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        const double d = static_cast<double>(degrees[order[i]]);
        r.clustering[i] = d < 2 ? 0.0 : 2.0 * static_cast<double>(r.per_vertex[i]) / (d * (d - 1));
      }
    }
    r.average_clustering = average_local_clustering(rep.per_vertex, degrees);
  }
  r.seconds = seconds_since(t0);
  return r;
}

template <class Id>
CountResult count_pairs(const Id* pairs, std::size_t m, const CountOptions& o) {
  const auto t0 = Clock::now();
  pipeline_options(o);  // bad options fail before the conversion
  api::TempDir tmp(o.tmp_dir);
  const std::string path = tmp.path() + "/graph.tcsr";
  convert_edges(pairs, m, path, convert_options(o, tmp.path()));
  return count_tcsr(path, o, t0, seconds_since(t0));
}

}  // namespace

CountResult count(const std::string& input, const CountOptions& o) {
  const auto t0 = Clock::now();
  pipeline_options(o);  // bad options fail before the conversion
  // 1. A .tcsr file is counted as it is.
  if (input != "-") {
    struct stat st {};
    if (::stat(input.c_str(), &st) != 0)
      throw Error(ErrorKind::Input, input + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, input + ": is a directory");
    if (tcsr::has_tcsr_magic(input)) return count_tcsr(input, o, t0, 0.0);
  }
  // 2. An edge list is converted into a temporary .tcsr file first.
  api::TempDir tmp(o.tmp_dir);
  const std::string path = tmp.path() + "/graph.tcsr";
  convert(input, path, convert_options(o, tmp.path()));
  return count_tcsr(path, o, t0, seconds_since(t0));
}

CountResult count_edges(const std::uint64_t* pairs, std::size_t m, const CountOptions& o) {
  return count_pairs(pairs, m, o);
}

CountResult count_edges(const std::uint32_t* pairs, std::size_t m, const CountOptions& o) {
  return count_pairs(pairs, m, o);
}

std::string CountResult::to_json(const std::string& input) const {
  JsonObject o;
  o.add("input", input)
      .add("triangles", triangles)
      .add("vertices", vertices)
      .add("edges", edges)
      .add("backend", backend)
      .add("device", device)
      .add("transitivity", transitivity);
  if (!per_vertex.empty())
    o.add("average_clustering", average_clustering);
  else
    o.add_null("average_clustering");
  o.add("seconds", seconds)
      .add("convert_seconds", convert_seconds)
      .add("load_seconds", plan_seconds)
      .add("count_seconds", count_seconds);
  o.raw("plan", plan.empty() ? "null" : plan).raw("stats", stats.empty() ? "null" : stats);
  return o.str();
}

}  // namespace tristream
