// stream/workers.cpp — the count over several workers and processes (stream/workers.hpp).
#include "stream/workers.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <future>
#include <mutex>
#include <thread>

#include "common/thread_priority.hpp"
#include "plan/order.hpp"
#include "stream/clock.hpp"
#include "stream/in_core_image.hpp"
#include "stream/row_claims.hpp"
#include "stream/shared_blocks.hpp"
#include "stream/unit_queue.hpp"
#include "stream/worker_plan.hpp"

namespace tristream {

using stream::admit_cutoff;
using stream::make_shared_plan;
using stream::now_s;
using stream::plan_backend;
using stream::plan_claims_rows;
using stream::share_units;
using stream::split_gpus;
using stream::split_in_core;
using stream::UnitQueue;
using stream::worker_budgets;

namespace {

Communicator* g_comm = nullptr;

// The nice offset of the hybrid CPU worker's counting threads where the idle scheduling class is
// unsupported: below the GPU's decompressor (stream/clock.hpp: +8).
constexpr int kHybridCpuNice = 10;

// A worker's view of the shared queue.
class WorkerFeed final : public UnitFeed {
 public:
  WorkerFeed(UnitQueue& q, int w, bool preload, stream::HostBlockStore* shared,
             const std::vector<std::size_t>* units)
      : q_(q), w_(w), preload_(preload), shared_(shared), units_(units) {}
  std::int64_t next() override { return q_.next(w_); }
  void done(std::size_t unit, double) override { q_.done(w_, unit); }
  bool preload() const override { return preload_; }
  const std::vector<std::size_t>* preload_units() const override { return units_; }
  stream::HostBlockStore* shared_store() const override { return shared_; }
  // (a shared store's end is its owner's to report: run_workers)
  void preloaded() override {
    if (preload_ && !shared_) q_.release_cutoff();
  }

 private:
  UnitQueue& q_;
  int w_;
  bool preload_;
  stream::HostBlockStore* shared_;
  const std::vector<std::size_t>* units_;  // this process's units, when known (null: any)
};

// The host block stores shared by the workers that preload (one process): one for the workers
// with device memory of their own (pinning through the first of them) and one for those on the
// host, each made where two workers or more of that kind preload and the store preloads
// (SharedBlocks). shared[w]: worker w's, or null (its own store).
struct SharedStores {
  std::vector<std::unique_ptr<stream::SharedBlocks>> stores;
  std::vector<stream::SharedBlocks*> of;
};

SharedStores share_blocks(const GraphSource& g, const std::vector<const Plan*>& plans,
                          const PipelineOptions& run, std::vector<Worker>& workers,
                          const std::vector<bool>& preloads, const std::vector<std::size_t>* units,
                          double origin) {
  SharedStores out;
  out.of.assign(workers.size(), nullptr);
  const unsigned threads = run.budgets ? run.budgets->threads : resolve_threads(run.threads);
  for (const bool host : {false, true}) {
    std::vector<std::size_t> group;
    for (std::size_t w = 0; w < workers.size(); ++w)
      if (preloads[w] && workers[w].backend->device_is_host() == host) group.push_back(w);
    if (group.size() < 2 || !stream::HostBlockStore::would_preload(*plans[group[0]], units))
      continue;
    HostRegistrar* registrar = host ? nullptr : workers[group[0]].backend.get();
    auto store =
        std::make_unique<stream::SharedBlocks>(g, *plans[group[0]], threads, registrar, origin,
                                               !run.trace_path.empty() || run.chunk_spans);
    // Out of core, pair's suffix blocks view the in-core image's columns, as with one GPU
    // (registered part by part through the first GPU; portable: every GPU copies from them).
    stream::InCoreImage* image = run.in_core_image.get();
    if (!host && image && image->n() == g.n() && image->m() == g.m())
      store->store().use_image(image, run.view_copy_bytes_per_s);
    for (std::size_t w : group) out.of[w] = store.get();
    out.stores.push_back(std::move(store));
  }
  return out;
}

// One worker's statistics from its report.
WorkerStats worker_stats(const Worker& w, const CountReport& rep) {
  WorkerStats s;
  s.backend = w.backend->name();
  s.device = w.backend->describe() + (w.cutoff ? " (cut-off)" : "");
  s.units = rep.stats.units;
  s.busy_s = rep.stats.kernel.busy_s;
  s.wall_s = rep.stats.wall_s;
  s.upload_bytes = rep.stats.upload.bytes;
  s.decompress_bytes = rep.stats.decompress.bytes;
  return s;
}

// Adds a worker's report to the merged one (spans moved onto the common clock).
void merge(CountReport& into, CountReport& rep, int worker, double offset) {
  into.triangles += rep.triangles;
  into.interrupted = into.interrupted || rep.interrupted;
  if (!rep.per_vertex.empty() && rep.stats.units > 0) {
    if (into.per_vertex.empty()) into.per_vertex.assign(rep.per_vertex.size(), 0);
    for (std::size_t v = 0; v < rep.per_vertex.size(); ++v) into.per_vertex[v] += rep.per_vertex[v];
  }
  PipelineStats& a = into.stats;
  const PipelineStats& b = rep.stats;
  a.units += b.units;
  a.units_skipped += b.units_skipped;
  a.reused_bytes += b.reused_bytes;
  a.device_cache_hit_bytes += b.device_cache_hit_bytes;
  a.chunk_cache_peak_bytes += b.chunk_cache_peak_bytes;
  for (auto [x, y] : {std::pair{&a.read, &b.read},
                      {&a.decompress, &b.decompress},
                      {&a.transform, &b.transform},
                      {&a.upload, &b.upload},
                      {&a.kernel, &b.kernel}}) {
    x->busy_s += y->busy_s;
    x->bytes += y->bytes;
    x->spans += y->spans;
  }
  for (TraceSpan s : b.spans) {
    s.worker = worker;
    s.start_s += offset;
    s.end_s += offset;
    a.spans.push_back(std::move(s));
  }
}

// Sums the triangles and per-vertex counts of every rank onto rank 0 (the triangles onto every
// rank's report through rank 0's broadcast), and the units counted.
void reduce_ranks(CountReport& rep, Communicator& comm) {
  std::uint64_t head[3] = {rep.triangles, rep.stats.units, rep.interrupted ? 1u : 0u};
  comm.sum_to_root(head, 3);
  if (!rep.per_vertex.empty()) comm.sum_to_root(rep.per_vertex.data(), rep.per_vertex.size());
  std::string t = std::to_string(head[0]) + " " + std::to_string(head[1]);
  comm.broadcast(t);
  rep.triangles = std::stoull(t.substr(0, t.find(' ')));
  rep.stats.units = std::stoull(t.substr(t.find(' ') + 1));
  rep.interrupted = rep.interrupted || head[2] > 0;
  rep.stats.ranks = comm.size();
  rep.stats.wall_s = comm.max_all(rep.stats.wall_s);
}

// Runs the plan on the workers that run (runs[w]; plans[w] is the plan worker w runs, the
// shared plan or a copy with a smaller host budget), each on its own thread; returns the merged
// report. With one worker running and `direct`, it runs the plan alone, without the queue.
// preload_units: the units this process will count, when known before (its preloads hold their
// row parts only; null: every unit, preloaded where the plan's block cache holds them all:
// HostBlockStore::would_preload). Rethrows the first failure after every worker stopped.
CountReport run_workers(const GraphSource& g, const Plan& plan,
                        const std::vector<const Plan*>& plans, const PipelineOptions& run,
                        std::vector<Worker>& workers, const std::vector<bool>& runs,
                        UnitQueue& queue, bool direct,
                        const std::vector<std::size_t>* preload_units) {
  const std::size_t W = workers.size();
  std::vector<CountReport> reps(W);
  std::vector<double> offsets(W, 0);
  std::exception_ptr failure;
  std::mutex mu;
  std::uint64_t units_done = 0;
  const double origin = now_s();
  const bool alone = direct && std::count(runs.begin(), runs.end(), true) == 1;
  // The workers that preload share their host blocks (workers of one plan: the cut-off
  // workers, which take no preload, may run a copy with a smaller host budget).
  std::vector<bool> preloads(W);
  for (std::size_t w = 0; w < W; ++w) preloads[w] = runs[w] && run.preload && !workers[w].cutoff;
  SharedStores shared;
  shared.of.assign(W, nullptr);
  if (!alone) shared = share_blocks(g, plans, run, workers, preloads, preload_units, origin);
  // The cut-off workers wait for the plain workers' preloads (UnitQueue::hold_cutoff): one
  // per worker with a store of its own, one per shared store.
  std::uint32_t holds = static_cast<std::uint32_t>(shared.stores.size());
  for (std::size_t w = 0; w < W; ++w) holds += preloads[w] && !shared.of[w] ? 1 : 0;
  queue.hold_cutoff(holds);
  for (auto& s : shared.stores) s->start([&queue] { queue.release_cutoff(); }, preload_units);
  auto body = [&](std::size_t w) {
    try {
      if (workers[w].idle_class) set_thread_idle_class();  // (best effort)
      WorkerFeed feed(queue, static_cast<int>(w), preloads[w],
                      shared.of[w] ? &shared.of[w]->store() : nullptr, preload_units);
      PipelineOptions wo = run;
      wo.feed = alone ? nullptr : &feed;
      wo.trace_path.clear();
      wo.on_unit_done = [&](std::uint64_t, std::uint64_t total, double) {
        std::lock_guard<std::mutex> lock(mu);
        ++units_done;
        if (run.on_unit_done) run.on_unit_done(units_done, total, now_s() - origin);
      };
      offsets[w] = now_s() - origin;
      reps[w] = run_plan(g, *plans[w], *workers[w].backend, wo);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
      queue.stop();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < W; ++w)
    if (runs[w]) threads.emplace_back(body, w);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);  // (the shared stores stop as they go)
  bool interrupted = false;
  for (const CountReport& r : reps) interrupted = interrupted || r.interrupted;
  for (auto& s : shared.stores) s->finish(interrupted);
  // The merged report: the plan's, every worker's counts and spans, one entry per worker.
  CountReport rep;
  rep.plan = plan;
  PipelineStats& st = rep.stats;
  st.backend = workers.front().backend->name();
  for (std::size_t w = 1; w < W; ++w)
    if (workers[w].backend->name() != st.backend) st.backend = "hybrid";
  st.scheme = scheme_name(plan.partition.scheme);
  st.parts = plan.partition.p;
  st.device_budget = plan.device_budget;
  st.host_budget = plan.host_budget;
  st.slot_bytes = plan.slot_bytes;
  for (std::size_t w = 0; w < W; ++w) {
    merge(rep, reps[w], static_cast<int>(w), offsets[w]);
    st.workers.push_back(worker_stats(workers[w], reps[w]));
    double work = queue.work_done(static_cast<int>(w));
    if (alone && runs[w])
      for (const WorkUnit& u : plan.units) work += std::max(u.work, 1.0);
    st.workers.back().work = work;
  }
  // The shared stores' decompression and builds, once (spans of worker -1).
  for (auto& s : shared.stores) {
    CountReport store_rep;
    store_rep.stats = std::move(s->stats());
    merge(rep, store_rep, -1, 0);
  }
  if (rep.per_vertex.empty() && run.per_vertex) rep.per_vertex.assign(g.n(), 0);
  // The wall as for one worker: from the start to the end of the last worker's units (each
  // worker's own wall, from its start); what came after (the workers giving their memory back,
  // the shared stores' end) is the release, as one worker's is.
  const double total = now_s() - origin;
  double wall = 0;
  for (std::size_t w = 0; w < W; ++w)
    if (runs[w]) wall = std::max(wall, offsets[w] + reps[w].stats.wall_s);
  st.wall_s = std::min(wall, total);
  st.release_s = total - st.wall_s;
  st.finish_from_spans();
  return rep;
}

}  // namespace

std::uint64_t ranks_per_gpu(const Communicator* comm) {
  const auto gpus = static_cast<std::uint64_t>(cuda_device_count());
  if (!comm || comm->size() <= 1 || gpus == 0) return 1;
  return (static_cast<std::uint64_t>(comm->local_size()) + gpus - 1) / gpus;
}

std::vector<int> parse_devices(const std::string& text) {
  std::vector<int> out;
  if (text == "all") {
    for (int d = 0; d < cuda_device_count(); ++d) out.push_back(d);
    if (out.empty())
      throw Error(ErrorKind::Device, "--devices all: no usable CUDA device; use --backend cpu");
    return out;
  }
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    if (item.empty() || item.size() > 4 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw Error(ErrorKind::Usage,
                  "--devices: expected 'all' or device ordinals like 0,1,3, got '" + text + "'");
    out.push_back(std::stoi(item));
    at = end + 1;
  }
  return out;
}

std::vector<Worker> make_workers(const PipelineOptions& options, const std::vector<int>& devices,
                                 unsigned cpu_workers, bool hybrid) {
  std::vector<Worker> out;
  // 1. The GPUs' backends, each device started on a thread of its own (its context, streams and
  //    the kernels' first launch take tenths of a second; the first on this thread), so that the
  //    starts overlap; a failure is the first device's in the list that failed, once every start
  //    has ended.
  auto make_gpu = [&options](int d) {
    CounterOptions c = options.counter;
    c.device = d;
    return make_cuda_streaming_backend(c);
  };
  std::vector<std::future<std::unique_ptr<StreamingBackend>>> others;
  for (std::size_t i = 1; i < devices.size(); ++i)
    others.push_back(std::async(std::launch::async, make_gpu, devices[i]));
  std::exception_ptr failure;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    try {
      out.push_back({i == 0 ? make_gpu(devices[0]) : others[i - 1].get(), false, devices[i]});
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  // 2. The CPU workers and --hybrid's cut-off worker.
  for (unsigned i = 0; i < cpu_workers; ++i)
    out.push_back({make_cpu_streaming_backend(make_cpu_counter(options.counter)), false, -1});
  if (out.empty()) {  // (the backend option's worker: a GPU one counts on options.counter.device)
    std::unique_ptr<StreamingBackend> b = make_streaming_backend(options);
    const int device = b->device_is_host() ? -1 : options.counter.device;
    out.push_back({std::move(b), false, device});
  }
  if (hybrid) {
    // The CPU counts only on the cores the threads that feed the GPUs leave idle: its counting
    // threads enter the idle scheduling class as they start (the nice offset stays where that
    // fails). They are made here, at the normal class: made by an idle-class thread, their
    // creation waited for a free core while the startup kept every core busy.
    CpuBackendOptions c;
    c.counter = options.counter;
    c.counter.nice = kHybridCpuNice;
    c.counter.idle_class = true;
    out.push_back({make_cpu_streaming_backend(make_cpu_counter(c.counter), c), true, -1, true});
  }
  return out;
}

Communicator* communicator() {
  return g_comm;
}
void set_communicator(Communicator* comm) {
  g_comm = comm;
}

CountReport count_with_workers(const GraphSource& g, const PipelineOptions& options,
                               std::vector<Worker>& workers, Communicator* comm) {
  TS_CHECK(!workers.empty(), "a count without workers");
  const bool many = comm && comm->size() > 1;
  if (workers.size() == 1 && !many) return count_with_backend(g, options, *workers[0].backend);
  // 1. The budgets, once: the smallest device budget, the host budget shared out.
  PipelineOptions run = options;
  run.budgets = worker_budgets(options, workers, comm);
  PlanOptions po = plan_options(run, *run.budgets, plan_backend(workers));
  std::vector<bool> cutoff;
  std::vector<int> gpus;  // the plain workers' GPUs, each once
  for (const Worker& w : workers) {
    cutoff.push_back(w.cutoff);
    if (!w.cutoff && w.device >= 0 && std::find(gpus.begin(), gpus.end(), w.device) == gpus.end())
      gpus.push_back(w.device);
  }
  // 2. Whether the GPUs may claim the in-core unit's rows: every process must be able to (a
  //    collective call), since each decides alike from the plan whether they do.
  bool claimable = stream::workers_claim_rows(g, run, workers, comm);
  if (many) claimable = comm->max_all(claimable ? 0.0 : 1.0) == 0.0;
  // 3. Plan, share the units, run every worker; on device out-of-memory (one process) plan
  //    again with half the device budget.
  for (std::uint64_t replans = 0;; ++replans) {
    const double t0 = now_s();
    Census census;
    Plan plan;
    bool planned = false;
    double ahead_s = 0;  // census and planner seconds spent before this call (a ready plan)
    // Several GPUs and a long in-core count: units they share instead (on rank 0 before the
    // plan's broadcast).
    const std::size_t sharing = split_gpus(gpus.size(), comm);
    // (unless the GPUs claim the in-core unit's rows: every process can, and the plan allows)
    auto split_long = [&](Plan* p, Census* c) {
      if (!(claimable && plan_claims_rows(run, *p)))
        split_in_core(g, run, po, sharing, p, c, &ahead_s);
    };
    try {
      if (!many && take_ready_plan(run, po, replans, &plan, &census, &ahead_s)) {
        planned = true;
        split_long(&plan, &census);
      } else {
        planned = make_shared_plan(g, po, comm, &plan, &census, split_long);
      }
    } catch (const Error& e) {  // nothing fits: say that the workers share the host budget
      if (e.kind() != ErrorKind::Usage || workers.size() < 2) throw;
      throw Error(ErrorKind::Usage,
                  std::string(e.what()) + " (the host budget is " + run.budgets->host_from + ")");
    }
    if (!planned) {
      CountReport rep;
      rep.interrupted = true;
      return rep;
    }
    // In core, the one unit is cut into a slice per worker that is not a cut-off worker, in
    // every process: each uploads the whole graph and counts the triangles of its slice. Workers
    // on one device (`--devices 0,0`) take one slice between them: each slice would upload the
    // whole graph to that device again, to count on the same chip; and so do the GPUs of one
    // process, unless options.in_core_gpu_slices.
    // (Several GPUs of one process: a GPU's slice costs the whole graph's upload and the image's
    // registration, and the slices' kernels are uneven, so one GPU alone counts in core sooner.)
    std::size_t plain = 0, cpu_slices = 0;
    bool plain_gpus = true;  // every plain worker has a device of its own (admit_cutoff, below)
    for (std::size_t w = 0; w < workers.size(); ++w) {
      if (cutoff[w]) continue;
      ++plain;
      if (workers[w].device < 0) ++cpu_slices;
      plain_gpus = plain_gpus && !workers[w].backend->device_is_host();
    }
    // With claims, a slice per GPU: each its turn to stream the image and count the rows it
    // claims (stream/row_claims.hpp; a slice taken after every row is claimed sends nothing).
    const bool claims = claimable && plan_claims_rows(run, plan);
    const std::size_t slicers = claims ? workers.size()
                                       : cpu_slices + (many || options.in_core_gpu_slices
                                                           ? gpus.size()
                                                           : std::min<std::size_t>(gpus.size(), 1));
    const std::size_t ranks = many ? static_cast<std::size_t>(comm->size()) : 1;
    (void)plan_internal::slice_in_core(plan, static_cast<std::uint32_t>(slicers * ranks),
                                       run.per_vertex);
    run.row_claims.reset();
    if (claims) {
      // (over processes the runs are fixed and the ranks' shared counter hands them out; the
      // plan is made and the GPUs wait for the image's rows: every thread decodes them now)
      stream::InCoreImage& image = *run.in_core_image;
      if (!std::getenv("TRISTREAM_NO_IMAGE_WIDEN")) image.widen();
      std::function<std::uint64_t()> next_run;
      if (many) next_run = [comm] { return comm->fetch_next(); };
      run.row_claims = std::make_shared<stream::RowClaims>(
          image.source_offsets(), image.n(), image.m(), static_cast<std::uint32_t>(slicers * ranks),
          0, std::move(next_run));
      plan.reason = "in core; the " + std::to_string(slicers * ranks) +
                    " GPUs each stream the graph in row pieces and count the rows they claim "
                    "(TRISTREAM_IN_CORE_CLAIMS=0 splits it instead): " +
                    plan.reason;
    }
    const double plan_s = now_s() - t0 - census.seconds;
    std::vector<std::size_t> units;
    UnitSplit split;
    // (claims: each rank its slices, statically; the shared counter is the claims')
    share_units(plan, comm, claims ? "static" : options.rank_split, &units, &split);
    // The cut-off workers run only when they may help and fit beside the others.
    Plan plain_plan;
    // (the plan's rates are a GPU's: with a plain worker on the host, no bound by seconds or
    // share)
    std::string cutoff_why;
    stream::CutoffGate gate;
    if (plain_gpus) {
      gate.min_probe_s = options.cutoff_min_probe_s;
      gate.min_share = options.cutoff_min_share;
    }
    gate.cpu_threads = resolve_threads(options.counter.threads);
    const bool admitted =
        admit_cutoff(plan, units, plain, workers.size() - plain, gate, &plain_plan, &cutoff_why);
    std::vector<bool> runs;
    std::vector<const Plan*> plans;
    for (bool c : cutoff) {
      runs.push_back(!c || admitted || plain == 0);
      plans.push_back(!c && admitted && plan.host_budget ? &plain_plan : &plan);
    }
    UnitQueue queue(plan, cutoff, units, !many);
    queue.set_min_probe_seconds(options.cutoff_min_probe_s);
    if (split.dynamic)
      queue.set_refill([&](std::vector<std::size_t>& out) {
        const std::uint64_t b = comm->fetch_next();
        if (b + 1 >= split.bounds.size()) return false;
        for (std::size_t u = split.bounds[b]; u < split.bounds[b + 1]; ++u) out.push_back(u);
        return true;
      });
    try {
      // (several processes: a rank's preload holds the row parts of its static share only; with
      // the dynamic split, whose units are not known before, every row part where they all fit)
      CountReport rep = run_workers(g, plan, plans, run, workers, runs, queue, !many,
                                    many && !split.dynamic ? &units : nullptr);
      rep.stats.replans = replans;
      rep.stats.census_s = census.seconds;
      rep.stats.plan_s = plan_s;
      rep.stats.planned_ahead_s = ahead_s;
      if (plain < workers.size()) rep.stats.cutoff = cutoff_why;
      rep.census = census.empty() ? "none" : census.stored ? "stored" : "pass";
      if (many) {
        reduce_ranks(rep, *comm);
        rep.stats.rank_split = split.dynamic ? "dynamic" : "static";
      }
      if (!options.trace_path.empty() && (!many || comm->rank() == 0))
        rep.stats.write_trace(options.trace_path);
      return rep;
    } catch (const DeviceOutOfMemory& e) {
      for (Worker& w : workers) w.backend->release();
      if (many || static_cast<int>(replans) >= options.max_replans) throw;
      run.ready_split_plan = {};  // (made for the first try's budget)
      const std::uint64_t had =
          po.device_budget ? std::min(po.device_budget, plan.device_bytes) : plan.device_bytes;
      po.device_budget = std::max<std::uint64_t>(had / 2, 1);
      po.parts = 0;
    }
  }
}

}  // namespace tristream
