// cmd_count.cpp — `tristream count INPUT`: counts the triangles of a .tcsr file or an edge list
// through the library's tristream::count (tristream.hpp): flags -> CountOptions -> CountResult ->
// text or JSON, the --per-vertex table and the --trace file. Every output is opened before the
// work; the figures are printed before the outputs are committed, so a failing output never loses
// the count.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/json.hpp"
#include "edge_sorter_choice.hpp"
#include "per_vertex.hpp"
#include "stream/communicator.hpp"
#include "stream/workers.hpp"  // parse_devices
#include "tristream/error.hpp"
#include "tristream/plan.hpp"  // kMaxParts
#include "tristream/tristream.hpp"

namespace tristream::cli {
namespace {

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

// Seconds since the process started (exec), from /proc/self/stat's start time (in clock ticks
// since boot, a 10 ms grain on Linux) against CLOCK_BOOTTIME; -1 where that is not available.
double seconds_since_process_start() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  const auto close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i)
    if (i == 22) {
      const long tick = ::sysconf(_SC_CLK_TCK);
      timespec now{};
      if (tick <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
      const double start = std::stod(f) / static_cast<double>(tick);
      const double t = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
      return std::max(0.0, t - start);
    }
  return -1;
}

// The device an edge list as INPUT is sorted on (edge_list_sorter): the one the count runs on
// (--device, or the first of --devices; "all" starts at 0), for a CUDA backend asked or chosen;
// none with --names (whose conversion never uses one), under mpirun (every rank would take a
// device for its own conversion) or with --gpu-memory (the sorter takes half the device's free
// memory, more than such a budget may allow). For a .tcsr input it returns none, but its device
// check has started the CUDA driver on this thread by then, before the count decodes the in-core
// image: started beside the decoding instead, the startup took 0.64-0.66 s against 0.34 + 0.17 s
// (Kronecker 28 in core, one H200, bench/RESULTS.md 2026-11-30 "Several workers").
std::unique_ptr<EdgeSorter> count_edge_sorter(const std::string& input, const std::string& backend,
                                              unsigned device, const std::string& devices,
                                              bool names, bool ranks, bool device_budget) {
  if (names || ranks || device_budget || backend == "cpu") return nullptr;
  const int ordinal = devices.empty() ? static_cast<int>(device) : parse_devices(devices).front();
  return edge_list_sorter(input, /*wanted=*/true, ordinal);
}

}  // namespace

int cmd_count(int argc, char** argv) {
  std::string input, backend = "auto", kernel = "auto", format = "auto", per_vertex_path, tmp_dir;
  std::string scheme = "auto", trace_path, delimiter, devices, rank_split = "auto";
  std::uint64_t threads = 0, device = 0, gpu_memory = 0, host_memory = 0, parts = 0, workers = 0;
  bool hybrid = false;
  bool json = false, clustering = false, quiet = false, count_isolated = false, header = false,
       names = false;
  ArgParser p("tristream count",
              "Counts the triangles of INPUT exactly. INPUT is a .tcsr file or any edge list that\n"
              "`tristream convert` reads; an edge list is converted into a temporary .tcsr file\n"
              "that is removed afterwards (with a CUDA backend, a large one on that GPU, as\n"
              "`convert --device auto` does).");
  p.positional("INPUT", "a .tcsr file or an edge list ('-' reads standard input)", &input)
      .option("backend", "", "NAME", "auto (GPU if present, else CPU), cpu or cuda [auto]",
              &backend)
      .option("kernel", "", "NAME",
              "CUDA kernel: auto, lstc, trust, trust:lite, trust:in, wedge, gui or bitmap [auto]",
              &kernel)
      .uint_option("device", "N", "CUDA device ordinal [0]", &device, 0, 1023)
      .option("devices", "", "LIST",
              "count on several GPUs: 'all' or ordinals like 0,1,3 (one worker each; an ordinal "
              "may repeat; in core, a long count's rows are claimed by the GPUs as the graph "
              "streams in, or it is planned in units the GPUs share)",
              &devices)
      .flag("hybrid", "",
            "the CPU counts beside the GPU(s): it takes a unit only when it would finish it "
            "before the GPUs (measured rates); not started where its estimated share of the work "
            "is under 2% or the GPUs' count too short (--json: stats.cutoff)",
            &hybrid)
      .option("rank-split", "", "MODE",
              "under mpirun: the ranks take contiguous runs of the units (static: each rank "
              "preloads the row parts of its own) or batches from a shared counter (dynamic: "
              "each rank preloads every row part where they fit); auto is static [auto]",
              &rank_split)
      .uint_option("workers", "N", "N CPU workers sharing the units (with --backend cpu) [1]",
                   &workers, 1, 64)
      .uint_option("threads", "N",
                   "CPU threads for decompression and the CPU backend, 1..4096 [all usable cores]",
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
      .flag("names", "",
            "the id columns of INPUT hold vertex names (see `tristream convert --help`); "
            "--per-vertex shows them",
            &names)
      .option("tmp-dir", "", "DIR", "where a temporary .tcsr file goes [$TMPDIR or /tmp]", &tmp_dir)
      .size_option("gpu-memory",
                   "device budget for the work units and the device block cache, e.g. 4G or "
                   "1.5G; a graph larger than it is counted out of core [free GPU memory minus "
                   "a reserve]",
                   &gpu_memory)
      .size_option("host-memory", kHostMemoryHelp, &host_memory)
      .option("scheme", "", "S",
              "out-of-core partition: auto, range (BBTC), hash (TRUST), vertex (LSTC) or pair "
              "(range parts, one unit per pair of parts) [auto]",
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
          "  tristream count big.tcsr --devices all --hybrid             (every GPU and the CPU)\n"
          "  mpirun -np 4 tristream count big.tcsr       (4 processes; rank 0 prints)\n"
          "Interrupting (Ctrl-C) stops between work units and exits with status 130.");
  if (!p.parse(argc, argv)) return 0;
  const bool per_vertex = !per_vertex_path.empty() || clustering || count_isolated;
  // Launched by mpirun, rank 0 prints and writes the outputs; the other ranks only count.
  const Communicator* comm = communicator();
  const bool root = !comm || comm->rank() == 0;
  if (!root) {
    per_vertex_path.clear();
    trace_path.clear();
  }

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

  // 2. The library's options, then the count: the input resolved (an edge list converted into a
  //    temporary .tcsr file), the budgets, the streamed count and the degrees. Ctrl-C stops it
  //    between work units.
  CountOptions opt;
  opt.backend = backend;
  opt.kernel = kernel;
  opt.device = static_cast<unsigned>(device);
  opt.devices = devices;
  opt.hybrid = hybrid;
  opt.rank_split = rank_split;
  opt.cpu_workers = workers > 1 ? static_cast<unsigned>(workers) : 0;
  opt.threads = static_cast<unsigned>(threads);
  opt.gpu_memory = gpu_memory;
  opt.host_memory = host_memory;
  opt.scheme = scheme;
  opt.parts = static_cast<std::uint32_t>(parts);
  opt.per_vertex = per_vertex;
  opt.clustering = false;  // the command prints the average only (per_vertex computes it)
  opt.count_isolated = count_isolated;
  opt.format = format;
  opt.delimiter = delimiter;
  opt.header = header;
  opt.names = names;
  opt.keep_trace = !trace_path.empty();  // written below by write_trace
  opt.tmp_dir = tmp_dir;
  const std::unique_ptr<EdgeSorter> sorter =
      count_edge_sorter(input, backend, static_cast<unsigned>(device), devices, names,
                        comm != nullptr, gpu_memory != 0);
  opt.edge_sorter = sorter.get();
  opt.quiet = true;          // the progress line below is the command's only progress output
  opt.handle_sigint = true;  // exit 130 on Ctrl-C, 143 on SIGTERM (below)
  ProgressLine progress(!quiet && ::isatty(STDERR_FILENO));
  opt.progress = [&](std::uint64_t done, std::uint64_t total, double sec) {
    progress.update(done, total, sec);
  };
  const double before_call = std::max(0.0, seconds_since_process_start());
  CountResult r = tristream::count(input, opt);
  progress.clear();
  // `seconds` is the whole command: the process's start (as near as it can be measured) to the
  // figures' output.
  r.timing.before_call = before_call;
  const double whole = seconds_since_process_start();
  if (whole > r.seconds) r.seconds = whole;
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  if (r.interrupted) throw_interrupted();  // main: "interrupted", exit 130 (SIGTERM: 143)
  if (count_isolated && r.declared_vertices == 0)
    std::fprintf(stderr,
                 "warning: --count-isolated: %s declares no vertex count (only a Matrix Market "
                 "size line does); no isolated vertices added\n",
                 input.c_str());

  // 3. The figures, then the outputs (none after a signal during the degrees).
  throw_if_interrupted();
  if (!root) return 0;
  if (json) {
    std::fprintf(report, "%s\n", r.to_json(input).c_str());
  } else {
    std::fprintf(report, "triangles     %" PRIu64 "\n", r.triangles);
    std::fprintf(
        report, "vertices      %" PRIu64 "%s\n", r.vertices,
        count_isolated ? (" (" + std::to_string(r.isolated_vertices) + " isolated)").c_str() : "");
    std::fprintf(report, "edges         %" PRIu64 "\n", r.edges);
    std::fprintf(report, "transitivity  %s\n", json_number(r.transitivity).c_str());
    if (per_vertex)
      std::fprintf(report, "avg. local clustering  %s\n",
                   json_number(r.average_clustering).c_str());
    std::fprintf(report, "backend       %s\n", r.device.c_str());
    std::fprintf(report, "plan          %s\n", r.plan_summary.c_str());
    std::fprintf(report, "pipeline      %s\n", r.stats_summary.c_str());
    std::fprintf(report, "seconds       %.3f (plan %.3f, count %.3f", r.seconds, r.plan_seconds,
                 r.count_seconds);
    if (r.converted)
      std::fprintf(report, ", convert %.3f sorted on %s", r.convert_seconds,
                   r.convert_sorter.c_str());
    std::fprintf(report, ")\n");
    if (pv_out && !pv_out->to_stdout())
      std::fprintf(report, "per-vertex    %s\n", per_vertex_path.c_str());
  }
  std::fflush(report);
  int status = 0;
  commit_output(
      pv_out.get(),
      [&](std::FILE* f) {
        write_per_vertex(f, per_vertex_separator(per_vertex_path), r.vertex_ids, r.per_vertex,
                         r.degrees, r.vertex_names.empty() ? nullptr : &r.vertex_names);
      },
      &status);
  commit_output(
      trace_out.get(), [&](std::FILE* f) { r.write_trace(f); }, &status);
  return status;
}

}  // namespace tristream::cli
