// cmd_count.cpp — `tristream count INPUT`: counts the triangles of a .tcsr file or an edge list.
// Every output (--per-vertex, --trace) is opened before the work; the figures are printed before
// the outputs are committed, so a failing output never loses the count.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/json.hpp"
#include "input.hpp"
#include "per_vertex.hpp"
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

// The original ids 1..declared that no vertex of the graph has: the isolated vertices a Matrix
// Market size line (ids 1..rows) declares.
std::vector<orig_id_t> declared_isolated(const std::vector<orig_id_t>& ids,
                                         std::uint64_t declared) {
  std::vector<bool> present(declared + 1, false);
  for (orig_id_t id : ids)
    if (id >= 1 && id <= declared) present[id] = true;
  std::vector<orig_id_t> out;
  for (std::uint64_t id = 1; id <= declared; ++id)
    if (!present[id]) out.push_back(id);
  return out;
}

// Commits an output after the figures were printed: a failure is reported on stderr and turns
// into the exit status, the figures stay printed.
void commit_output(AtomicOutput* out, const std::function<void(std::FILE*)>& write, int* status) {
  if (!out) return;
  try {
    out->commit(write);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    *status = std::max(*status, e.exit_code());
  }
}

// The plan in the JSON output.
std::string plan_json(const Plan& plan) {
  JsonObject o;
  o.add("scheme", scheme_name(plan.partition.scheme))
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
  return o.str();
}

// The plan in one line of the text output.
std::string plan_line(const Plan& plan) {
  std::string s = scheme_name(plan.partition.scheme) + ", p = " + std::to_string(plan.partition.p) +
                  ", " + std::to_string(plan.units.size()) + " units";
  if (plan.streamed_staging())
    s += ", streamed staging in " + std::to_string(plan.staging_buffers) + " x " +
         format_bytes(plan.piece_bytes) + " pieces";
  return s;
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
  std::string scheme = "auto", trace_path, delimiter;
  std::uint64_t threads = 0, device = 0, gpu_memory = 0, host_memory = 0, parts = 0;
  bool json = false, clustering = false, quiet = false, count_isolated = false, header = false;
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
      .uint_option("device", "N", "CUDA device ordinal [0]", &device, 0, 1023)
      .uint_option("threads", "N",
                   "CPU threads for decompression and the CPU backend, 1..4096 [all cores]",
                   &threads, 1, kMaxThreads)
      .option("per-vertex", "", "FILE",
              "write vertex,degree,triangles,clustering per vertex, ordered by original id, as "
              "CSV (TSV when FILE ends in .tsv; '-' is standard output, the summary then goes to "
              "stderr)",
              &per_vertex_path)
      .flag("clustering", "", "also compute the average local clustering coefficient", &clustering)
      .flag("count-isolated", "",
            "count the isolated vertices the input declares (a Matrix Market size line) in "
            "vertices, the average clustering and --per-vertex, as networkx does",
            &count_isolated)
      .option("format", "", "FMT", "edge-list dialect of INPUT (see `tristream convert --help`)",
              &format)
      .option("delimiter", "", "C", "CSV column delimiter of INPUT (implies csv) [,]", &delimiter)
      .flag("header", "", "the first line of INPUT names the columns: skip it", &header)
      .option("tmp-dir", "", "DIR", "where a temporary .tcsr file goes [$TMPDIR or /tmp]", &tmp_dir)
      .size_option("gpu-memory",
                   "device budget for the two staging slots, e.g. 4G or 1.5G; a graph larger than "
                   "it is counted out of core [free GPU memory minus a reserve]",
                   &gpu_memory)
      .size_option("host-memory", kHostMemoryHelp, &host_memory)
      .option("scheme", "", "S",
              "out-of-core partition: auto, range (BBTC), hash (TRUST) or vertex (LSTC) [auto]",
              &scheme)
      .uint_option("parts", "P",
                   "force the number of parts, 1..4096 (1 = in-core) [chosen by the planner]",
                   &parts, 1, kMaxParts)
      .option("trace", "", "FILE", "write a Chrome trace of the pipeline (Perfetto) to FILE",
              &trace_path)
      .flag("json", "-j", "print one JSON object instead of text", &json)
      .flag("quiet", "-q", "no progress line on stderr (shown on a terminal for multi-unit runs)",
            &quiet)
      .epilog(
          "Output: the triangle count, the vertices and undirected simple edges after cleaning,\n"
          "the global clustering coefficient (transitivity), the backend and the seconds taken.\n"
          "The figures are defined in docs/outputs.md.\n"
          "Examples:\n"
          "  tristream count graph.tcsr\n"
          "  tristream count edges.txt --backend cpu --json\n"
          "  tristream count graph.tcsr --per-vertex triangles.csv\n"
          "  tristream count big.tcsr --gpu-memory 8G --trace run.json   (out of core)\n"
          "Interrupting (Ctrl-C) stops between work units and exits with status 130.");
  if (!p.parse(argc, argv)) return 0;
  const bool per_vertex = !per_vertex_path.empty() || clustering || count_isolated;

  // 1. Open the outputs before any work: a bad path (a directory, the input itself, an
  //    unwritable directory) fails now, not after the count.
  if (trace_path == "-")
    throw Error(ErrorKind::Usage, "--trace: give a file name ('-' is not supported)");
  std::unique_ptr<AtomicOutput> pv_out, trace_out;
  if (!per_vertex_path.empty())
    pv_out = std::make_unique<AtomicOutput>("--per-vertex", per_vertex_path,
                                            std::vector<std::string>{input});
  if (!trace_path.empty()) {
    if (!per_vertex_path.empty() && std::filesystem::weakly_canonical(trace_path) ==
                                        std::filesystem::weakly_canonical(per_vertex_path))
      throw Error(ErrorKind::Usage, "--trace and --per-vertex name the same file");
    trace_out =
        std::make_unique<AtomicOutput>("--trace", trace_path, std::vector<std::string>{input});
  }
  std::FILE* report = pv_out && pv_out->to_stdout() ? stderr : stdout;

  // 2. Resolve the input (convert an edge list into a temporary .tcsr file).
  const auto t0 = Clock::now();
  ConvertOptions conv;
  conv.format = format;
  conv.delimiter = delimiter;
  conv.header = header;
  conv.quiet = true;
  conv.threads = static_cast<unsigned>(threads);
  ResolvedInput resolved(input, conv, tmp_dir);
  const double convert_seconds = resolved.converted() ? seconds_since(t0) : 0.0;
  if (count_isolated && !resolved.converted())
    throw Error(ErrorKind::Usage,
                "--count-isolated: " + input +
                    " is a .tcsr file, which does not record the vertices its source declared; "
                    "count the source file (e.g. the .mtx) with --count-isolated instead");
  const std::uint64_t declared = count_isolated ? resolved.summary().declared_vertices : 0;
  if (count_isolated && declared == 0)
    std::fprintf(stderr,
                 "warning: --count-isolated: %s declares no vertex count (only a Matrix Market "
                 "size line does); no isolated vertices added\n",
                 input.c_str());

  // 3. Make the backend before reading the graph, so a missing backend fails fast.
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
  const auto streaming = make_streaming_backend(po);

  // 4. Count, streamed: the planner picks in-core (p = 1) or an out-of-core partition. The
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
  if (rep.interrupted) throw_interrupted();
  const double load_seconds = rep.stats.census_s + rep.stats.plan_s;
  const double count_seconds = rep.stats.wall_s;
  const count_t triangles = rep.triangles;
  std::vector<count_t> pv_counts = std::move(rep.per_vertex);

  // 5. Degrees and the derived figures. Declared isolated vertices (--count-isolated) add
  //    vertices of clustering 0: the average is over all of them, as networkx's is.
  const std::vector<eid_t> degrees =
      degrees_future.valid() ? degrees_future.get() : degrees_of_file();
  const double total_seconds = seconds_since(t0);
  std::vector<orig_id_t> ids, isolated;
  if (pv_out || declared) ids = reader.permutation();
  if (declared) isolated = declared_isolated(ids, declared);
  const std::uint64_t vertices = reader.n() + isolated.size();
  const double trans = transitivity(triangles, degrees);
  const double avg_cc = per_vertex && vertices
                            ? average_local_clustering(pv_counts, degrees) *
                                  static_cast<double>(reader.n()) / static_cast<double>(vertices)
                            : 0.0;

  // 6. The figures, then the outputs (none after a signal during the degrees).
  throw_if_interrupted();
  if (json) {
    JsonObject o;
    o.add("input", input)
        .add("triangles", std::uint64_t{triangles})
        .add("vertices", std::uint64_t{vertices})
        .add("edges", std::uint64_t{reader.m()})
        .add("backend", rep.stats.backend)
        .add("device", streaming->describe())
        .add("transitivity", trans);
    if (per_vertex)
      o.add("average_clustering", avg_cc);
    else
      o.add_null("average_clustering");
    if (count_isolated) o.add("isolated_vertices", std::uint64_t{isolated.size()});
    o.add("seconds", total_seconds)
        .add("convert_seconds", convert_seconds)
        .add("load_seconds", load_seconds)
        .add("count_seconds", count_seconds);
    o.raw("plan", plan_json(rep.plan)).raw("stats", rep.stats.to_json());
    std::fprintf(report, "%s\n", o.str().c_str());
  } else {
    std::fprintf(report, "triangles     %" PRIu64 "\n", static_cast<std::uint64_t>(triangles));
    std::fprintf(
        report, "vertices      %" PRIu64 "%s\n", vertices,
        count_isolated ? (" (" + std::to_string(isolated.size()) + " isolated)").c_str() : "");
    std::fprintf(report, "edges         %" PRIu64 "\n", static_cast<std::uint64_t>(reader.m()));
    std::fprintf(report, "transitivity  %s\n", json_number(trans).c_str());
    if (per_vertex)
      std::fprintf(report, "avg. local clustering  %s\n", json_number(avg_cc).c_str());
    std::fprintf(report, "backend       %s\n", streaming->describe().c_str());
    std::fprintf(report, "plan          %s\n", plan_line(rep.plan).c_str());
    std::fprintf(report, "pipeline      %s\n", rep.stats.summary().c_str());
    std::fprintf(report, "seconds       %.3f (plan %.3f, count %.3f", total_seconds, load_seconds,
                 count_seconds);
    if (resolved.converted()) std::fprintf(report, ", convert %.3f", convert_seconds);
    std::fprintf(report, ")\n");
    if (pv_out && !pv_out->to_stdout())
      std::fprintf(report, "per-vertex    %s\n", per_vertex_path.c_str());
  }
  std::fflush(report);
  int status = 0;
  commit_output(
      pv_out.get(),
      [&](std::FILE* f) {
        write_per_vertex(f, per_vertex_separator(per_vertex_path), ids, pv_counts, degrees,
                         isolated);
      },
      &status);
  commit_output(
      trace_out.get(), [&](std::FILE* f) { rep.stats.write_trace(f); }, &status);
  return status;
}

}  // namespace tristream::cli
