// cmd_plan.cpp — `tristream plan FILE`: shows how a graph (a .tcsr file, or an edge list converted
// into a temporary one) would be partitioned and streamed for a device budget (and a host
// budget), without counting.
#include <cstdio>
#include <memory>
#include <string>

#include "api/input.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "common/host_peak.hpp"
#include "common/json.hpp"
#include "edge_sorter_choice.hpp"
#include "plan/host_model.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"
#include "tristream/plan.hpp"

namespace tristream::cli {

int cmd_plan(int argc, char** argv) {
  std::string input, scheme = "auto", backend = "auto", format = "auto", tmp_dir;
  std::uint64_t gpu_memory = 0, host_memory = 0, parts = 0, threads = 0, device = 0;
  bool json = false, per_vertex = false, names = false;
  ArgParser p("tristream plan",
              "Shows the partition plan for counting FILE (a .tcsr file): the scheme, the number\n"
              "of parts, the work units in execution order with their device bytes and estimated\n"
              "work, and the estimated bytes moved. Reads the file's metadata and, when the graph\n"
              "does not fit in-core, one streamed pass over the columns (the block census).\n"
              "An edge list is converted into a temporary .tcsr file first (as `count` does).");
  p.positional("FILE", "a .tcsr file or an edge list ('-' reads standard input)", &input)
      .size_option("gpu-memory",
                   "device budget for the work units and the device block cache, e.g. 4G [free "
                   "GPU memory minus a reserve; unlimited without a GPU]",
                   &gpu_memory)
      .size_option("host-memory", kHostMemoryHelp, &host_memory)
      .option("scheme", "", "S",
              "auto, range (BBTC), hash (TRUST), vertex (LSTC) or pair (range parts, one unit "
              "per pair of parts) [auto]",
              &scheme)
      .uint_option("parts", "P", "force the number of parts p, 1..4096 [chosen by the planner]",
                   &parts, 1, kMaxParts)
      .option("backend", "", "NAME", "whose memory to measure: auto, cpu or cuda [auto]", &backend)
      .uint_option("device", "N", "CUDA device ordinal [0]", &device, 0, 1023)
      .uint_option("threads", "N", "threads for the census pass, 1..4096 [all usable cores]",
                   &threads, 1, kMaxThreads)
      .option("format", "", "FMT", "edge-list dialect of FILE (see `tristream convert --help`)",
              &format)
      .flag("names", "", "the id columns of an edge-list FILE hold vertex names", &names)
      .option("tmp-dir", "", "DIR", "where a temporary .tcsr file goes [$TMPDIR or /tmp]", &tmp_dir)
      .flag("per-vertex", "", "plan room for per-vertex counts", &per_vertex)
      .flag("json", "-j", "print the plan as one JSON object", &json)
      .epilog(
          "Examples:\n"
          "  tristream plan graph.tcsr --gpu-memory 2G\n"
          "  tristream plan graph.tcsr --gpu-memory 512M --scheme vertex --json\n"
          "  tristream plan graph.tcsr --parts 4 --scheme range");
  if (!p.parse(argc, argv)) return 0;
  PipelineOptions o;
  o.scheme = parse_scheme(scheme);
  o.parts = static_cast<std::uint32_t>(parts);
  o.gpu_memory = gpu_memory;
  o.host_memory = host_memory;
  o.threads = static_cast<unsigned>(threads);
  o.per_vertex = per_vertex;
  o.counter.device = static_cast<int>(device);

  ConvertOptions conv;
  conv.format = format;
  conv.names = names;
  conv.quiet = true;
  conv.threads = static_cast<unsigned>(threads);
  const std::unique_ptr<EdgeSorter> sorter =
      edge_list_sorter(input, backend != "cpu" && !names, static_cast<int>(device));
  conv.edge_sorter = sorter.get();
  api::TcsrInput resolved(input, conv, tmp_dir);
  tcsr::Reader reader(resolved.tcsr_path());
  std::unique_ptr<StreamingBackend> be;
  const bool cuda = backend == "cuda" || (backend == "auto" && cuda_device_count() > 0);
  if (gpu_memory == 0 && cuda)
    be = make_cuda_streaming_backend(o.counter);
  else if (backend != "auto" && backend != "cpu" && backend != "cuda")
    throw Error(ErrorKind::Usage, "--backend: unknown backend '" + backend + "'");
  PlanOptions po = resolve_plan_options(o, be.get());
  // The plan `count` would run: the host budget less what the process holds beside the plan,
  // failing as `count` does when one of those parts does not fit (docs/memory.md).
  const std::uint64_t host_budget = po.host_budget;
  if (po.host_budget) {
    const CountHost host =
        count_host(reader.n(), reader.chunks(), po.threads, host_resident_bytes(), per_vertex,
                   false, reader.has_names(), po.host_budget);
    check_host_floor(host, po.host_budget);
    po.host_budget = host.plan_budget(po.host_budget);
  }
  // The plan of the backend named (or found), also with --gpu-memory: a CUDA plan may stream
  // its host staging, a CPU plan keeps its slots in host memory.
  po.device_is_host = !cuda;
  auto src = reader_source(reader);
  Census census;
  const Plan plan = plan_graph(*src, po, &census);

  if (json) {
    JsonObject j;
    j.add("file", input)
        .add("vertices", std::uint64_t{reader.n()})
        .add("edges", std::uint64_t{reader.m()})
        .add("census_s", census.seconds);
    // The plan's own fields (scheme, parts, units, bytes moved, ...) follow at the top level.
    std::string s = j.str();
    std::string pj = plan.to_json();
    std::printf("%s,%s\n", s.substr(0, s.size() - 1).c_str(), pj.substr(1).c_str());
  } else {
    std::printf("file          %s\n", input.c_str());
    std::printf("graph         n = %llu, m = %llu\n", static_cast<unsigned long long>(reader.n()),
                static_cast<unsigned long long>(reader.m()));
    std::printf("budgets       device %s, host %s\n",
                po.device_budget ? format_bytes(po.device_budget).c_str() : "unlimited",
                host_budget ? (format_bytes(host_budget) + " (" + format_bytes(po.host_budget) +
                               " for the plan)")
                                  .c_str()
                            : "unlimited");
    std::printf("%s", plan.summary().c_str());
    const std::size_t show = std::min<std::size_t>(plan.units.size(), 20);
    if (show) std::printf("units (first %zu of %zu):\n", show, plan.units.size());
    for (std::size_t u = 0; u < show; ++u) {
      const auto& w = plan.units[u];
      std::printf("  %4zu  task (%u,%u,%u)  %s on device, %s uploaded%s, work %.3g\n", u, w.i, w.j,
                  w.k, format_bytes(w.device_bytes).c_str(), format_bytes(w.upload_bytes).c_str(),
                  w.reuse_a ? " (A cached)" : "", w.work);
    }
  }
  return 0;
}

}  // namespace tristream::cli
