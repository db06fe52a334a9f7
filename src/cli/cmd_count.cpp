// cmd_count.cpp — `tristream count INPUT`: counts the triangles of a .tcsr file or an edge list.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <future>
#include <numeric>
#include <string>
#include <vector>

#include "args.hpp"
#include "atomic_file.hpp"
#include "commands.hpp"
#include "common/json.hpp"
#include "input.hpp"
#include "tristream/analysis.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::cli {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Writes "original_id triangles" lines ordered by original id.
void write_per_vertex(const std::string& path, const std::vector<orig_id_t>& perm,
                      const std::vector<count_t>& counts) {
  std::vector<std::uint64_t> order(counts.size());
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::uint64_t a, std::uint64_t b) { return perm[a] < perm[b]; });
  write_file_atomically(path, [&](std::FILE* f) {
    std::fprintf(f, "# vertex triangles\n");
    for (std::uint64_t v : order)
      std::fprintf(f, "%" PRIu64 " %" PRIu64 "\n", static_cast<std::uint64_t>(perm[v]),
                   static_cast<std::uint64_t>(counts[v]));
  });
}

// A one-line progress display for out-of-core runs on a terminal: units done, elapsed time and
// an estimate of the time left, redrawn at most four times a second.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { clear(); }
  void update(std::uint64_t done, std::uint64_t total, double sec) {
    if (!enabled_ || total < 2 || (sec - last_ < 0.25 && done < total)) return;
    last_ = sec;
    const double left =
        done ? sec * static_cast<double>(total - done) / static_cast<double>(done) : 0;
    std::fprintf(
        stderr, "\rcounting: %" PRIu64 "/%" PRIu64 " units (%.0f%%), %.1f s, about %.1f s left ",
        done, total, 100.0 * static_cast<double>(done) / static_cast<double>(total), sec, left);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  double last_ = -1;
};

}  // namespace

int cmd_count(int argc, char** argv) {
  std::string input, backend = "auto", kernel = "auto", format = "auto", per_vertex_path, tmp_dir;
  std::string scheme = "auto", trace_path;
  std::uint64_t threads = 0, device = 0, gpu_memory = 0, host_memory = 0, parts = 0;
  bool json = false, clustering = false, quiet = false;
  ArgParser p("tristream count",
              "Counts the triangles of INPUT exactly. INPUT is a .tcsr file or any edge list that\n"
              "`tristream convert` reads; an edge list is converted into a temporary .tcsr file\n"
              "that is removed afterwards.");
  p.positional("INPUT", "a .tcsr file or an edge list ('-' reads standard input)", &input)
      .option("backend", "", "NAME", "auto (GPU if present, else CPU), cpu or cuda [auto]",
              &backend)
      .option("kernel", "", "NAME",
              "CUDA kernel: auto, lstc, trust, trust:lite, trust:in, wedge, gui or bitmap [auto]",
              &kernel)
      .uint_option("device", "N", "CUDA device ordinal [0]", &device)
      .uint_option("threads", "N", "CPU threads for decompression and the CPU backend [all cores]",
                   &threads)
      .option("per-vertex", "", "FILE",
              "write each vertex's triangle count under its original id to FILE", &per_vertex_path)
      .flag("clustering", "", "also compute the average local clustering coefficient", &clustering)
      .option("format", "", "FMT", "edge-list dialect of INPUT (see `tristream convert --help`)",
              &format)
      .option("tmp-dir", "", "DIR", "where a temporary .tcsr file goes [$TMPDIR or /tmp]", &tmp_dir)
      .size_option("gpu-memory",
                   "device budget for the two staging slots, e.g. 4G; a graph larger than it is "
                   "counted out of core [free GPU memory minus a reserve]",
                   &gpu_memory)
      .size_option("host-memory", kHostMemoryHelp, &host_memory)
      .option("scheme", "", "S",
              "out-of-core partition: auto, range (BBTC), hash (TRUST) or vertex (LSTC) [auto]",
              &scheme)
      .uint_option("parts", "P",
                   "force the number of parts, at most 4096 (1 = in-core) [chosen by the planner]",
                   &parts)
      .option("trace", "", "FILE", "write a Chrome trace of the pipeline (Perfetto) to FILE",
              &trace_path)
      .flag("json", "", "print one JSON object instead of text", &json)
      .flag("quiet", "-q", "no progress line on stderr (shown on a terminal for multi-unit runs)",
            &quiet)
      .epilog(
          "Output: the triangle count, the vertices and undirected simple edges after cleaning,\n"
          "the global clustering coefficient (transitivity), the backend and the seconds taken.\n"
          "Examples:\n"
          "  tristream count graph.tcsr\n"
          "  tristream count edges.txt --backend cpu --json\n"
          "  tristream count graph.tcsr --per-vertex triangles.txt\n"
          "  tristream count big.tcsr --gpu-memory 8G --trace run.json   (out of core)\n"
          "Interrupting (Ctrl-C) stops between work units and exits with status 130.");
  if (!p.parse(argc, argv)) return 0;
  if (parts > kMaxParts)
    throw Error(ErrorKind::Usage,
                "--parts: at most " + std::to_string(kMaxParts) + " parts are supported");
  const bool per_vertex = !per_vertex_path.empty() || clustering;

  // 1. Resolve the input (convert an edge list into a temporary .tcsr file).
  const auto t0 = Clock::now();
  ConvertOptions conv;
  conv.format = format;
  conv.quiet = true;
  conv.threads = static_cast<unsigned>(threads);
  ResolvedInput resolved(input, conv, tmp_dir);
  const double convert_seconds = resolved.converted() ? seconds_since(t0) : 0.0;

  // 2. Make the backend before reading the graph, so a missing backend fails fast.
  PipelineOptions po;
  po.backend = backend;
  po.counter.threads = static_cast<unsigned>(threads);
  po.counter.kernel = kernel;
  po.counter.device = static_cast<int>(device);
  po.scheme = parse_scheme(scheme);
  po.parts = static_cast<std::uint32_t>(parts);
  po.gpu_memory = gpu_memory;
  po.host_memory = host_memory;
  po.threads = static_cast<unsigned>(threads);
  po.per_vertex = per_vertex;
  po.trace_path = trace_path;
  const auto streaming = make_streaming_backend(po);

  // 3. Count, streamed: the planner picks in-core (p = 1) or an out-of-core partition. The
  //    undirected degrees (for the clustering figures) are streamed from the file as well; with
  //    the GPU counting, on host threads at the same time, otherwise afterwards.
  tcsr::Reader reader(resolved.tcsr_path());
  const auto src = reader_source(reader);
  auto degrees_of_file = [&] { return streamed_degrees(*src, static_cast<unsigned>(threads)); };
  std::future<std::vector<eid_t>> degrees_future;
  po.budgets = resolve_budgets(budget_flags(po), streaming.get());  // once for the command
  if (streaming->name() == "cuda") {
    // The concurrent degree stream holds n degrees and a chunk per thread while the count runs:
    // both come out of the host budget the pipeline plans with.
    po.budgets = set_aside_host(
        *po.budgets, streamed_degrees_bytes(*src, static_cast<unsigned>(threads)), "the degrees");
    degrees_future = std::async(std::launch::async, degrees_of_file);
  }
  ProgressLine progress(!quiet && ::isatty(STDERR_FILENO));
  po.on_unit_done = [&](std::uint64_t done, std::uint64_t total, double sec) {
    progress.update(done, total, sec);
  };
  CountReport rep = count_file(reader, po, streaming.get());
  progress.clear();
  if (rep.interrupted) {
    std::fprintf(stderr, "error: interrupted\n");
    return 130;
  }
  const double load_seconds = rep.stats.census_s + rep.stats.plan_s;
  const double count_seconds = rep.stats.wall_s;
  const count_t triangles = rep.triangles;
  std::vector<count_t> pv_counts = std::move(rep.per_vertex);

  // 4. Degrees for the clustering figures.
  const std::vector<eid_t> degrees =
      degrees_future.valid() ? degrees_future.get() : degrees_of_file();
  const double total_seconds = seconds_since(t0);

  // 5. Derived quantities and outputs.
  const double trans = transitivity(triangles, degrees);
  const double avg_cc = per_vertex ? average_local_clustering(pv_counts, degrees) : 0.0;
  if (!per_vertex_path.empty()) write_per_vertex(per_vertex_path, reader.permutation(), pv_counts);

  if (json) {
    JsonObject o;
    o.add("input", input)
        .add("triangles", std::uint64_t{triangles})
        .add("vertices", std::uint64_t{reader.n()})
        .add("edges", std::uint64_t{reader.m()})
        .add("backend", rep.stats.backend)
        .add("device", streaming->describe())
        .add("transitivity", trans);
    if (per_vertex)
      o.add("average_clustering", avg_cc);
    else
      o.add_null("average_clustering");
    o.add("seconds", total_seconds)
        .add("convert_seconds", convert_seconds)
        .add("load_seconds", load_seconds)
        .add("count_seconds", count_seconds);
    JsonObject plan;
    plan.add("scheme", scheme_name(rep.plan.partition.scheme))
        .add("parts", unsigned{rep.plan.partition.p})
        .add("units", std::uint64_t{rep.plan.units.size()})
        .add("slot_bytes", std::uint64_t{rep.plan.slot_bytes})
        .add("staging", rep.plan.streamed_staging() ? "streamed" : "full")
        .add("piece_bytes", std::uint64_t{rep.plan.piece_bytes})
        .add("host_staging_bytes", std::uint64_t{rep.plan.host_staging_bytes()})
        .add("device_bytes", std::uint64_t{rep.plan.device_bytes})
        .add("bytes_moved", std::uint64_t{rep.plan.bytes_moved})
        .add("in_flight", rep.plan.in_flight)
        .add("tail_cover_units", std::uint64_t{rep.plan.tail_cover_units})
        .add("tail_cover_slices", std::uint64_t{rep.plan.tail_cover_slices})
        .add("reason", rep.plan.reason);
    o.raw("plan", plan.str()).raw("stats", rep.stats.to_json());
    std::printf("%s\n", o.str().c_str());
  } else {
    std::printf("triangles     %" PRIu64 "\n", static_cast<std::uint64_t>(triangles));
    std::printf("vertices      %" PRIu64 "\n", static_cast<std::uint64_t>(reader.n()));
    std::printf("edges         %" PRIu64 "\n", static_cast<std::uint64_t>(reader.m()));
    std::printf("transitivity  %.6g\n", trans);
    if (per_vertex) std::printf("avg. local clustering  %.6g\n", avg_cc);
    std::printf("backend       %s\n", streaming->describe().c_str());
    std::printf("plan          %s, p = %u, %zu units%s\n",
                scheme_name(rep.plan.partition.scheme).c_str(), rep.plan.partition.p,
                rep.plan.units.size(),
                rep.plan.streamed_staging()
                    ? (", streamed staging in " + std::to_string(rep.plan.staging_buffers) + " x " +
                       format_bytes(rep.plan.piece_bytes) + " pieces")
                          .c_str()
                    : "");
    std::printf("pipeline      %s\n", rep.stats.summary().c_str());
    std::printf("seconds       %.3f (plan %.3f, count %.3f%s)\n", total_seconds, load_seconds,
                count_seconds,
                resolved.converted()
                    ? (", convert " + std::to_string(convert_seconds).substr(0, 5)).c_str()
                    : "");
    if (!per_vertex_path.empty()) std::printf("per-vertex    %s\n", per_vertex_path.c_str());
  }
  return 0;
}

}  // namespace tristream::cli
