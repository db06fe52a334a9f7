// count.cpp — tristream::count and count_edges: resolve the input to a .tcsr file (converting an
// edge list or an edge array into a temporary one), resolve the budgets once (resolve_budgets),
// run the streamed count (count_file), stream the degrees for the clustering figures, and gather
// the result in original-id order (api/per_vertex_order.cpp).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "api/count_image.hpp"
#include "api/input.hpp"
#include "api/per_vertex_order.hpp"
#include "api/temp_dir.hpp"
#include "common/host_memory_policy.hpp"
#include "common/host_peak.hpp"
#include "common/json.hpp"
#include "common/thread_pool.hpp"
#include "plan/host_model.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_in_core.hpp"
#include "stream/worker_plan.hpp"
#include "stream/workers.hpp"
#include "tristream/analysis.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"
#include "tristream/stats.hpp"
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
  po.per_vertex = o.per_vertex || o.clustering || o.count_isolated;
  po.trace_path = o.trace;
  po.chunk_spans = o.keep_trace;
  po.rank_split = o.rank_split;
  if (const char* e = std::getenv("TRISTREAM_IN_CORE_SLICES")) po.in_core_gpu_slices = *e == '1';
  if (const char* e = std::getenv("TRISTREAM_IN_CORE_SPLIT"))
    po.split_in_core_s = std::string(e) == "0" ? -1.0 : std::atof(e);
  if (const char* e = std::getenv("TRISTREAM_NO_PRELOAD")) po.preload = *e != '1';
  if (const char* e = std::getenv("TRISTREAM_IN_CORE_CLAIMS")) po.in_core_row_claims = std::atoi(e);
  if (!o.devices.empty() && o.backend == "cpu")
    throw Error(ErrorKind::Usage,
                "--devices names CUDA devices: leave out --backend cpu (or use --workers N)");
  if (o.cpu_workers > kMaxCpuWorkers)
    throw Error(ErrorKind::Usage, "cpu_workers (--workers): at most " +
                                      std::to_string(kMaxCpuWorkers) + " are supported, got " +
                                      std::to_string(o.cpu_workers));
  if (!o.devices.empty()) parse_devices(o.devices);  // bad ordinals fail before any work
  mpi_split(Plan{}, 1, o.rank_split);                // a bad mode fails before any work
  po.handle_sigint = o.handle_sigint;  // off by default: the process's handlers are its own
  if (o.progress) po.on_unit_done = o.progress;
  return po;
}

ConvertOptions convert_options(const CountOptions& o, const std::string& tmp) {
  ConvertOptions c;
  c.format = o.format;
  c.delimiter = o.delimiter;
  c.header = o.header;
  c.names = o.names;
  c.quiet = o.quiet;
  c.threads = o.threads;
  c.tmp_dir = tmp;
  c.edge_sorter = o.edge_sorter;
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

// Counts the .tcsr file at `path`; t0 is the call's start (for CountResult::seconds);
// `conversion` is the summary of the conversion that wrote `path` (null for a .tcsr input): with
// count_isolated its declared vertices count, and it says where the edges were sorted.
CountResult count_tcsr(const std::string& path, const CountOptions& o, Clock::time_point t0,
                       const ConvertSummary* conversion, double convert_seconds) {
  const bool converted = conversion != nullptr;
  const std::uint64_t declared = conversion && o.count_isolated ? conversion->declared_vertices : 0;
  // 1. The workers' backends are made on their own thread (the devices' initialisation: CUDA
  //    contexts, streams, the kernels' first-launch costs), while this one opens the file; then
  //    the budgets, once for the call. A missing backend still fails before any count. Launched
  //    by mpirun, rank 0 reports the figures: the other ranks count their units only.
  PipelineOptions po = pipeline_options(o);
  Communicator* comm = communicator();
  const bool root = !comm || comm->rank() == 0;
  // Ranks on one machine take its GPUs in turn unless a device was named.
  if (comm && comm->size() > 1 && o.devices.empty() && o.device == 0 && cuda_device_count() > 0)
    po.counter.device = comm->local_rank() % cuda_device_count();
  const std::vector<int> devices =
      o.devices.empty() ? std::vector<int>{} : parse_devices(o.devices);
  const auto stage0 = Clock::now();
  double startup_s = 0;
  std::future<std::vector<Worker>> workers_future =
      std::async(std::launch::async, [&po, &devices, &o, &startup_s] {
        const auto b0 = Clock::now();
        std::vector<Worker> w = make_workers(po, devices, o.cpu_workers, o.hybrid);
        startup_s = seconds_since(b0);
        return w;
      });
  std::unique_ptr<tcsr::Reader> reader_owner;
  try {
    // (the row offsets' checksum on a thread of its own while the count starts; verified
    // below, before any figure is reported)
    tcsr::OpenOptions open;
    open.offsets_checksum_later = true;
    reader_owner = std::make_unique<tcsr::Reader>(path, open);
  } catch (...) {
    workers_future.wait();  // its failure, if any, is not the one to report
    throw;
  }
  const tcsr::Reader& reader = *reader_owner;
  // A cold file's adjacency is read into the page cache while the devices start, when it takes
  // at most half of the memory available (a larger file would push out what the count needs).
  std::uint64_t adjacency = 0;
  for (const auto& c : reader.chunks()) adjacency += c.compressed_size;
  const std::uint64_t room = available_host_memory();
  if (room > 0 && adjacency <= room / 2) reader.prefetch();
  const auto src = reader_source(reader);
  const std::uint64_t held_before_image = host_resident_bytes();
  std::vector<int> gpus = devices;  // the distinct GPUs of the workers
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  // (whether the plan is made beside the startup, below, when the image is kept)
  const bool plan_ahead = o.cpu_workers == 0 && (!comm || comm->size() <= 1) &&
                          (po.gpu_memory || gpus.size() > 1) &&
                          !std::getenv("TRISTREAM_NO_PLAN_AHEAD");
  // (asked only where the answer matters: an image above a quarter of the host memory, or many
  // ranks; it waits for the CUDA runtime that the workers' thread is starting)
  std::optional<bool> in_core_known;
  auto in_core = [&]() -> bool {
    if (!in_core_known)
      in_core_known = api::in_core_on_device(*src, o, po.per_vertex, comm,
                                             devices.empty() ? po.counter.device : devices.front());
    return *in_core_known;
  };
  std::shared_ptr<stream::InCoreImage> image =
      api::start_in_core_image(*src, o, comm, in_core, plan_ahead);
  // 2. The host budget covers the whole process: what it holds already (the program, the row
  //    offsets), the threads, the census, the degree pass and the per-vertex arrays beside the
  //    plan (plan/host_model.hpp). The image's bytes count as held from its start (it may still
  //    be decoding, so not yet all resident); one above a quarter of the host budget (half, in
  //    core) is dropped, the plan needs the room more.
  auto host_budgets = [&](Budgets b, bool* keep_image, CountHost* host) {
    const std::uint64_t budget = b.host_bytes;
    *keep_image = image && (!budget || api::image_fits(image->bytes(), budget, in_core));
    const std::uint64_t held =
        *keep_image ? std::max(host_resident_bytes(), held_before_image + image->bytes())
                    : host_resident_bytes();
    *host = count_host(reader.n(), reader.chunks(), b.threads, held, po.per_vertex, o.clustering,
                       reader.has_names(), budget, declared);
    if (budget) {
      b.host_bytes = host->plan_budget(budget);
      b.host_from += ", less what the process holds beside the plan";
    }
    return b;
  };
  // With the image (GPU workers, with --hybrid the CPU beside them, one process) the plan does
  // not wait for the devices: it is made now, beside the startup, with the host budget less a
  // margin for what the devices' startup adds to the process, shared by the GPU workers as
  // worker_budgets shares it. With --gpu-memory that is the count's plan; on several GPUs, when
  // the in-core plan calls for the split (stream/worker_plan.hpp), the split's plan too, from
  // the in-core plan at --gpu-memory or, without it, at no device limit (its device bytes do not
  // depend on the limit when it fits). count_with_backend, count_with_workers and split_in_core
  // take them when their options match.
  struct AheadRelease {
    std::shared_future<ReadyPlan>& ahead;
    std::shared_future<ReadyPlan>& split;
    PipelineOptions& po;
    ~AheadRelease() {
      if (ahead.valid()) ahead.wait();  // (the source goes after this)
      if (split.valid()) split.wait();
      po.ready_plan = {};
      po.ready_split_plan = {};
    }
  };
  std::shared_future<ReadyPlan> ahead, ahead_split;
  AheadRelease ahead_release{ahead, ahead_split, po};
  if (image && plan_ahead) {
    bool keep = false;
    CountHost h;
    Budgets early = host_budgets(resolve_budgets(budget_flags(po), nullptr), &keep, &h);
    if (keep) {
      // (the contexts' memory, and the image's pages taken from the available memory, an
      // eighth of which the default budget counts)
      const std::uint64_t margin = (std::uint64_t{1} << 30) + image->bytes() / 4;
      if (early.host_bytes) early.host_bytes -= std::min(early.host_bytes / 2, margin);
      if (early.host_bytes && devices.size() > 1) early.host_bytes /= devices.size();
      PlanOptions pop = plan_options(po, early, nullptr);
      pop.device_is_host = false;
      const GraphSource* g = src.get();
      auto plan_now = [g](const PlanOptions& opts) {
        ReadyPlan r;
        r.options = opts;
        const auto a0 = Clock::now();
        try {
          r.plan = plan_graph(*g, opts, &r.census);
          r.ok = true;
        } catch (...) {  // the count plans again and reports what failed
        }
        r.census_s = r.census.seconds;
        r.plan_s = std::max(0.0, seconds_since(a0) - r.census_s);
        return r;
      };
      if (po.gpu_memory) {
        ahead = std::async(std::launch::async, plan_now, pop).share();
        po.ready_plan = ahead;
      }
      if (gpus.size() > 1) {
        const std::size_t n_gpus = gpus.size();
        PipelineOptions rule;  // (what split_in_core_options reads of the options)
        rule.split_in_core_s = po.split_in_core_s;
        rule.in_core_gpu_slices = po.in_core_gpu_slices;
        auto split_plan = [plan_now, pop, in_core = ahead, n_gpus, rule] {
          ReadyPlan own;  // (the in-core plan at no device limit, without --gpu-memory)
          if (!in_core.valid()) {
            PlanOptions unlimited = pop;
            unlimited.device_budget = 0;
            own = plan_now(unlimited);
          }
          const ReadyPlan& first = in_core.valid() ? in_core.get() : own;
          PlanOptions shared;
          if (!first.ok ||
              !stream::split_in_core_options(rule, first.options, n_gpus, first.plan, &shared))
            return ReadyPlan{};
          ReadyPlan r = plan_now(shared);
          if (!in_core.valid()) r.plan_s += first.census_s + first.plan_s;
          return r;
        };
        ahead_split = std::async(std::launch::async, split_plan).share();
        po.ready_split_plan = ahead_split;
      }
    }
  }
  const double open_s = seconds_since(stage0);
  const auto wait0 = Clock::now();
  std::vector<Worker> workers = workers_future.get();
  const double wait_s = seconds_since(wait0);
  StreamingBackend* backend = workers.front().backend.get();
  const auto budgets0 = Clock::now();
  po.budgets = resolve_budgets(budget_flags(po), backend);
  // Ranks of one machine share its memory: without --host-memory each takes its share of the
  // default budget (rank 0's plan, which every rank runs, is made within it).
  if (comm && comm->local_size() > 1 && !po.host_memory && po.budgets->host_bytes) {
    po.budgets->host_bytes /= static_cast<std::uint64_t>(comm->local_size());
    po.budgets->host_from +=
        ", shared by the " + std::to_string(comm->local_size()) + " ranks on this machine";
  }
  // A budget below any part of the process fails now, before the work.
  const std::uint64_t host_budget = po.budgets->host_bytes;
  bool keep_image = false;
  CountHost host;
  po.budgets = host_budgets(*po.budgets, &keep_image, &host);
  if (!keep_image) image.reset();
  check_host_floor(host, host_budget);
  double budgets_s = seconds_since(budgets0);
  // The image is kept when the first worker is a GPU. When the in-core plan will fit the device it
  // is registered (pinned) with that GPU for the upload, unless it is large enough to be streamed
  // in row pieces (counted as they arrive, stream/unit_in_core.hpp: then only a ring of staging
  // buffers is pinned, and nothing waits for the whole image here); out of core every worker's
  // chunks are copied from it. The degrees come from it instead of a pass over the file.
  const auto image0 = Clock::now();
  if (image && backend->name() != "cuda") image.reset();
  const bool in_core_fits = o.parts <= 1 && (!po.budgets->device_bytes ||
                                             in_core_bytes(reader.n(), reader.m(), po.per_vertex) <=
                                                 po.budgets->device_bytes);
  if (image && in_core_fits && !stream::image_in_row_pieces(*image, *backend, po.row_pieces_from))
    image->register_with(*backend);
  po.in_core_image = image;
  // The image unregisters itself from the backend: it goes before the workers do, however the
  // count ends.
  struct ImageRelease {
    std::shared_ptr<stream::InCoreImage>& image;
    PipelineOptions& po;
    ~ImageRelease() {
      po.in_core_image.reset();
      image.reset();
    }
  } image_release{image, po};
  const std::unique_ptr<GraphSource> image_src = image ? image_source(*src, *image) : nullptr;
  const double image_s = image ? seconds_since(image0) : 0.0;

  // 3. Count; with the GPU counting, the degrees are streamed on host threads meanwhile: their
  //    n degrees and a chunk per thread come out of the host budget the pipeline plans with.
  //    When they would take more than a quarter of the plan's share, they follow the count (as
  //    on the CPU), within what the budget leaves then.
  const std::uint64_t degrees_bytes = streamed_degrees_bytes(*src, o.threads);
  const bool concurrent =
      backend->name() == "cuda" && (!host_budget || 4 * degrees_bytes <= po.budgets->host_bytes);
  auto degrees_of_file = [&] {
    return streamed_degrees(*src, o.threads, concurrent ? 0 : host.degrees_budget(host_budget));
  };
  std::future<std::vector<eid_t>> degrees_future;
  std::future<WedgeSum> wedges_future;
  // Without per-vertex figures the transitivity needs only the wedges, which a file converted
  // by this version stores (its census): no degree pass at all then.
  WedgeSum stored;
  const bool wedges_stored = root && !po.per_vertex && stored_wedges(*src, &stored);
  if (!wedges_stored && image && root) {
    // from the image, once it is whole, while the device uploads and counts
    if (po.per_vertex)
      degrees_future = std::async(std::launch::async, [&] { return image->degrees(o.threads); });
    else
      wedges_future = std::async(std::launch::async, [&] { return image->wedges(o.threads); });
  } else if (!wedges_stored && concurrent && root) {
    po.budgets = set_aside_host(*po.budgets, degrees_bytes, "the degrees");
    degrees_future = std::async(std::launch::async, degrees_of_file);
  }
  const auto count0 = Clock::now();
  CountReport rep;
  {
    SigintScope sigint(po.handle_sigint);
    rep = count_with_workers(image_src ? *image_src : *src, po, workers, comm);
  }
  const double count_s = seconds_since(count0);
  const auto finish0 = Clock::now();
  reader.verify_offsets();  // (a damaged offsets section: an input error, no figures)

  // 4. The result. An interrupted count stops here: its figures are incomplete.
  CountResult r;
  r.triangles = rep.triangles;
  r.vertices = reader.n();
  r.edges = reader.m();
  r.backend = rep.stats.backend;
  r.device = backend->describe();
  for (std::size_t w = 1; w < workers.size(); ++w)
    r.device += "; " + workers[w].backend->describe();
  r.stats = rep.stats.to_json();
  r.plan = plan_json(rep.plan);
  r.plan_summary = plan_line(rep.plan);
  r.stats_summary = rep.stats.summary();
  std::vector<WorkUnit>().swap(rep.plan.units);  // reported above; the degree pass comes next
  r.interrupted = rep.interrupted;
  r.plan_seconds = rep.stats.census_s + rep.stats.plan_s;
  r.count_seconds = rep.stats.wall_s;
  r.converted = converted;
  if (conversion) r.convert_sorter = conversion->sorter;
  r.convert_seconds = convert_seconds;
  r.has_per_vertex = po.per_vertex;
  r.counted_isolated = o.count_isolated;
  r.declared_vertices = declared;
  r.census = rep.census;
  if (rep.census == "pass" && !reader.has_census())
    r.note = path + " has no stored census: the plan passed over the graph first (" +
             std::to_string(rep.stats.census_s).substr(0, 5) + " s); `tristream reindex " + path +
             "` (or converting it again) stores one and makes planning fast";
  r.timing.startup = startup_s;
  r.timing.startup_wait = wait_s;
  r.timing.image = image_s;
  r.timing.open = open_s;
  r.timing.census = rep.stats.census_s;
  // What the count did besides the census and the pipeline: the budgets, the planner.
  r.timing.plan = budgets_s + std::max(0.0, count_s - rep.stats.census_s - rep.stats.wall_s -
                                                rep.stats.release_s);
  r.timing.release = rep.stats.release_s;
  r.timing.pipeline = rep.stats.wall_s;
  r.timing.plan_ahead = rep.stats.planned_ahead_s;
  r.pipeline_stats = std::make_shared<const PipelineStats>(std::move(rep.stats));
  r.host_budget_bytes = host_budget;
  if (r.interrupted || !root) {
    if (degrees_future.valid()) degrees_future.wait();
    if (wedges_future.valid()) wedges_future.wait();
    r.timing.finish = seconds_since(finish0);
    r.seconds = seconds_since(t0);
    r.host_peak_bytes = host_peak_bytes();
    return r;
  }
  if (wedges_stored) {
    r.transitivity = transitivity(rep.triangles, stored);
  } else if (wedges_future.valid()) {
    r.transitivity = transitivity(rep.triangles, wedges_future.get());
  } else if (!po.per_vertex && !degrees_future.valid()) {
    // only the wedges are wanted: the pass holds 32-bit in-degrees (count_host's degree pass)
    r.transitivity = transitivity(
        rep.triangles, streamed_wedges(*src, o.threads, host.degrees_budget(host_budget)));
  } else {
    std::vector<eid_t> degrees = degrees_future.valid() ? degrees_future.get() : degrees_of_file();
    r.transitivity = transitivity(rep.triangles, degrees);
    if (po.per_vertex)
      api::per_vertex_figures(reader.permutation(), std::move(rep.per_vertex), std::move(degrees),
                              declared, o.clustering, host.figures_budget(host_budget), &r);
  }
  if (po.per_vertex) {
    if (reader.has_names()) {
      r.vertex_names.resize(r.vertex_ids.size());
      for (std::size_t i = 0; i < r.vertex_ids.size(); ++i)
        r.vertex_names[i] = reader.name(r.vertex_ids[i]);
    }
    r.vertices += r.isolated_vertices;
  }
  r.timing.finish = seconds_since(finish0);
  r.seconds = seconds_since(t0);
  r.host_peak_bytes = host_peak_bytes();
  return r;
}

// count_tcsr's result once its workers, image and file are gone (they go as it returns, after
// its figures were taken): that time is the teardown, and `seconds` the whole call.
CountResult with_teardown(CountResult r, Clock::time_point t0) {
  const double all = seconds_since(t0);
  r.timing.teardown = std::max(0.0, all - r.seconds);
  r.seconds = std::max(r.seconds, all);
  return r;
}

template <class Id>
CountResult count_pairs(const Id* pairs, std::size_t m, const CountOptions& o) {
  const auto t0 = Clock::now();
  pipeline_options(o);  // bad options fail before the conversion
  if (o.count_isolated)
    throw Error(ErrorKind::Usage,
                "count_isolated: an edge array declares no vertex count; leave it off");
  api::TempDir tmp(o.tmp_dir);
  const std::string path = tmp.path() + "/graph.tcsr";
  const ConvertSummary conversion = convert_edges(pairs, m, path, convert_options(o, tmp.path()));
  return with_teardown(count_tcsr(path, o, t0, &conversion, seconds_since(t0)), t0);
}

}  // namespace

CountResult count(const std::string& input, const CountOptions& o) {
  const auto t0 = Clock::now();
  pipeline_options(o);  // bad options fail before the conversion
  // 1. A .tcsr file is counted as it is, an edge list converted into a temporary one first.
  const api::TcsrInput resolved(input, convert_options(o, ""), o.tmp_dir);
  const double convert_seconds = resolved.converted() ? seconds_since(t0) : 0.0;
  // 2. The declared isolated vertices come from the conversion's header.
  if (o.count_isolated && !resolved.converted())
    throw Error(ErrorKind::Usage,
                "--count-isolated: " + input +
                    " is a .tcsr file, which does not record the vertices its source declared; "
                    "count the source file (e.g. the .mtx) with --count-isolated instead");
  return with_teardown(
      count_tcsr(resolved.tcsr_path(), o, t0, resolved.converted() ? &resolved.summary() : nullptr,
                 convert_seconds),
      t0);
}

CountResult count_edges(const std::uint64_t* pairs, std::size_t m, const CountOptions& o) {
  return count_pairs(pairs, m, o);
}

CountResult count_edges(const std::uint32_t* pairs, std::size_t m, const CountOptions& o) {
  return count_pairs(pairs, m, o);
}

}  // namespace tristream
