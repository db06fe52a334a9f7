// workers_test.cpp — the count over several workers (stream/workers.hpp): several CPU workers
// give exactly the single worker's count and per-vertex counts for every scheme; the hybrid
// queue's cut-off hands a slow GPU (a CPU backend that sleeps per unit) few units and the CPU
// the rest, and leaves a slow CPU its probes only; a CPU that cannot help is not run (no unit
// small enough for a probe, or the GPUs' estimated seconds too few: stats.cutoff says which); the
// hand-out among simulated workers on a simulated clock (the CPU's probes, the cut-off at the
// tail, never later than the GPU alone, a fair share for a comparable CPU); the host block store
// the workers share (every chunk decompressed once, pair's row parts viewed in the in-core image)
// and the per-worker decompressed bytes; the unit split between processes; the plan's wire form.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/thread_priority.hpp"
#include "fake_backend.hpp"
#include "pipeline_util.hpp"
#include "plan/plan_wire.hpp"
#include "stream/clock.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_queue.hpp"
#include "stream/worker_plan.hpp"
#include "stream/workers.hpp"

namespace tristream::stream_test {
namespace {

// A backend around the CPU backend whose wait() sleeps first: a worker of a known slow rate.
class SlowBackend final : public StreamingBackend {
 public:
  SlowBackend(std::unique_ptr<StreamingBackend> inner, int sleep_ms)
      : in_(std::move(inner)), ms_(sleep_ms) {}
  std::string name() const override { return "slow"; }
  std::string describe() const override { return "slow " + in_->describe(); }
  bool device_is_host() const override { return in_->device_is_host(); }
  std::uint64_t free_device_bytes() override { return in_->free_device_bytes(); }
  void allocate(int slots, std::uint64_t bytes, std::uint64_t pv) override {
    in_->allocate(slots, bytes, pv);
  }
  unsigned char* host_slot(int slot) override { return in_->host_slot(slot); }
  void allocate_streamed(int slots, std::uint64_t bytes, std::uint64_t pv, int buffers,
                         std::uint64_t piece) override {
    in_->allocate_streamed(slots, bytes, pv, buffers, piece);
  }
  unsigned char* staging_buffer(int b) override { return in_->staging_buffer(b); }
  void wait_staging(int b) override { in_->wait_staging(b); }
  void upload_piece_async(int slot, std::uint64_t at, int b, std::uint64_t bytes) override {
    in_->upload_piece_async(slot, at, b, bytes);
  }
  void upload_async(int slot, const UnitLayout& L) override { in_->upload_async(slot, L); }
  bool register_host(void* p, std::uint64_t bytes) override { return in_->register_host(p, bytes); }
  void unregister_host(void* p) noexcept override { in_->unregister_host(p); }
  void count_async(int slot, const UnitLayout& L) override { in_->count_async(slot, L); }
  SlotResult wait(int slot) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return in_->wait(slot);
  }
  void release() override { in_->release(); }

 private:
  std::unique_ptr<StreamingBackend> in_;
  int ms_;
};

std::vector<Worker> cpu_workers(int n) {
  std::vector<Worker> w;
  for (int i = 0; i < n; ++i) w.push_back({cpu_backend(), false});
  return w;
}

TEST(Workers, SeveralCpuWorkersCountExactlyForEveryScheme) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(c.edges);
    auto src = memory_source(g, 16);
    for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair})
      for (std::uint32_t p : {1u, 2u, 3u, 7u})
        for (int workers : {2, 3}) {
          SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p) + " x" + std::to_string(workers));
          auto ws = cpu_workers(workers);
          CountReport r = count_with_workers(*src, popts(s, p, true), ws);
          EXPECT_EQ(r.triangles, oracle);
          ASSERT_EQ(r.per_vertex.size(), n);
          EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
          EXPECT_EQ(r.stats.units, r.plan.units.size());
          ASSERT_EQ(r.stats.workers.size(), static_cast<std::size_t>(workers));
          std::uint64_t units = 0;
          for (const WorkerStats& w : r.stats.workers) units += w.units;
          EXPECT_EQ(units, r.plan.units.size());
        }
  }
}

// In core (p = 1) the one unit is cut into a slice per worker: every worker counts one slice
// (it uploads the whole graph and counts the triangles of its middle vertices), and together
// they count exactly. (Workers that take 100 ms per unit: each takes its first slice before
// any has finished one.)
TEST(Workers, InCoreTheWorkersShareTheUnitBySlices) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 5));
  auto src = memory_source(g, 64);
  for (int workers : {2, 3, 4}) {
    SCOPED_TRACE(workers);
    std::vector<Worker> ws;
    for (int i = 0; i < workers; ++i)
      ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 100), false});
    const CountReport r = count_with_workers(*src, popts(Scheme::Range, 1, true), ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    ASSERT_EQ(r.plan.units.size(), static_cast<std::size_t>(workers));
    EXPECT_EQ(r.plan.slots, 1);  // one slot per worker, as in core
    for (std::size_t u = 0; u < r.plan.units.size(); ++u) {
      EXPECT_EQ(r.plan.units[u].slice, u);
      EXPECT_EQ(r.plan.units[u].slices, static_cast<std::uint32_t>(workers));
    }
    ASSERT_EQ(r.stats.workers.size(), static_cast<std::size_t>(workers));
    for (const WorkerStats& w : r.stats.workers) EXPECT_EQ(w.units, 1u);
  }
}

// Workers on one device (`--devices 0,0`) share a slice: a second slice would upload the whole
// graph to the same chip again. The GPUs of one process share one too, unless
// in_core_gpu_slices asks for a slice per device: two workers on device 0 and one on device 1
// then take two slices. Either way counted exactly, each slice taken by one worker.
TEST(Workers, InCoreWorkersOnOneDeviceShareASlice) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 7));
  auto src = memory_source(g, 64);
  for (bool per_device : {false, true})
    for (const std::vector<int>& devices :
         {std::vector<int>{0, 0}, std::vector<int>{0, 0, 1}, std::vector<int>{0, 1, 2},
          std::vector<int>{0, -1, -1}}) {
      std::vector<Worker> ws;
      for (int d : devices) {
        Worker w{std::make_unique<SlowBackend>(cpu_backend(), 100), false};
        w.device = d;
        ws.push_back(std::move(w));
      }
      std::size_t slices = 0, gpu_slices = 0;
      std::vector<int> seen;
      for (int d : devices)
        if (d < 0) {
          ++slices;
        } else if (std::find(seen.begin(), seen.end(), d) == seen.end()) {
          ++gpu_slices;
          seen.push_back(d);
        }
      slices += per_device ? gpu_slices : std::min<std::size_t>(gpu_slices, 1);
      SCOPED_TRACE(testing::Message() << devices.size() << " workers, " << slices << " slices"
                                      << (per_device ? ", a slice per device" : ""));
      PipelineOptions o = popts(Scheme::Range, 1, true);
      o.in_core_gpu_slices = per_device;
      const CountReport r = count_with_workers(*src, o, ws);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      ASSERT_EQ(r.plan.units.size(), slices);
      std::uint64_t units = 0;
      for (const WorkerStats& w : r.stats.workers) {
        EXPECT_LE(w.units, 1u);
        units += w.units;
      }
      EXPECT_EQ(units, slices);
    }
}

// Several GPUs of one process and a long in-core count (PipelineOptions::split_in_core_s, 0
// here: any in-core count is long): planned again at 1/GPUs of its device bytes, so that the
// GPUs share its units. A negative threshold, a threshold above the estimate, forced parts or one
// device (`--devices 0,0`) keep the in-core plan. Exact either way.
TEST(Workers, SeveralGpusSplitALongInCoreCount) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  struct Case {
    std::vector<int> devices;
    double split_s;
    std::uint32_t parts;
    bool splits;
  };
  const Case cases[] = {{{0, 1}, 0.0, 0, true},   {{0, 1, 2}, 0.0, 0, true},
                        {{0, 1}, -1.0, 0, false}, {{0, 1}, 1e9, 0, false},
                        {{0, 1}, 0.0, 1, false},  {{0, 0}, 0.0, 0, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.devices.size() << " workers, split at " << c.split_s
                                    << " s, parts " << c.parts);
    std::vector<Worker> ws;
    for (int d : c.devices) {
      Worker w{cpu_backend(), false};
      w.device = d;
      ws.push_back(std::move(w));
    }
    PipelineOptions o = popts(Scheme::Auto, c.parts, true);
    o.split_in_core_s = c.split_s;
    const CountReport r = count_with_workers(*src, o, ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    const bool says = r.plan.reason.find("GPUs share its units") != std::string::npos;
    if (c.splits) {
      EXPECT_GT(r.plan.partition.p, 1u);
      EXPECT_GE(r.plan.units.size(), c.devices.size());
      EXPECT_TRUE(says) << r.plan.reason;
    } else {
      EXPECT_EQ(r.plan.partition.p, 1u);
      EXPECT_FALSE(says) << r.plan.reason;
    }
    EXPECT_EQ(r.stats.units, r.plan.units.size());
  }
}

// The split's plan made while the devices start (PipelineOptions::ready_split_plan, count_file's)
// is taken when it was made with the split's options, and ignored when made for another count
// (here: other threads) or when the plan does not split; exact either way.
TEST(Workers, ASplitPlanMadeAheadIsTakenWhenItServesTheSplit) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  auto two_gpus = [] {
    std::vector<Worker> ws;
    for (int d : {0, 1}) {
      Worker w{cpu_backend(), false};
      w.device = d;
      ws.push_back(std::move(w));
    }
    return ws;
  };
  for (const char* made_for : {"the split", "another count", "a count that does not split"}) {
    SCOPED_TRACE(made_for);
    const std::string which = made_for;
    PipelineOptions o = popts(Scheme::Auto, 0, true);
    o.split_in_core_s = 0.0;
    o.host_memory = std::uint64_t{4} << 30;  // (the default follows the machine's free memory)
    // (the split's options as count_with_workers finds them)
    auto ws = two_gpus();
    PipelineOptions with = o;
    with.budgets = stream::worker_budgets(o, ws, nullptr);
    const PlanOptions po = plan_options(with, *with.budgets, stream::plan_backend(ws));
    const Plan in_core = plan_graph(*src, po);
    PlanOptions shared;
    ASSERT_TRUE(stream::split_in_core_options(o, po, 2, in_core, &shared));
    PlanOptions ahead_with = shared;
    if (which == "another count") ahead_with.threads += 1;
    o.ready_split_plan = made_ahead(*src, ahead_with, 0.25);
    const Plan& ready = o.ready_split_plan.get().plan;
    if (which == "a count that does not split") o.split_in_core_s = -1.0;
    const CountReport r = count_with_workers(*src, o, ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    EXPECT_EQ(r.stats.planned_ahead_s, which == "the split" ? 0.25 : 0.0);
    if (which == "a count that does not split") {
      EXPECT_EQ(r.plan.partition.p, 1u);
    } else {
      EXPECT_EQ(r.plan.partition.p, ready.partition.p);
      EXPECT_EQ(r.plan.units.size(), ready.units.size());
    }
  }
}

// Ranks as one process's calls, one after another: rank 0 plans and keeps what it broadcasts,
// rank 1 receives it; rank 1's sums are recorded (rank 0's report then holds its own share only).
// Each rank on a machine of its own (local_size 1), so each has a GPU of its own.
class SequentialRanks final : public Communicator {
 public:
  struct Shared {
    std::vector<std::string> broadcasts;
    std::vector<std::vector<std::uint64_t>> sums;  // rank 1's
  };
  SequentialRanks(int rank, Shared* shared) : rank_(rank), shared_(shared) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void broadcast(std::string& bytes) override {
    if (rank_ == 0) {
      shared_->broadcasts.push_back(bytes);
    } else {
      bytes = shared_->broadcasts.at(next_++);
    }
  }
  void sum_to_root(std::uint64_t* data, std::size_t n) override {
    if (rank_ == 1) shared_->sums.emplace_back(data, data + n);
  }
  double max_all(double value) override { return value; }
  std::uint64_t fetch_next() override {
    throw std::logic_error("the static split fetches nothing");
  }
  [[noreturn]] void abort(const std::string& message, int) override {
    throw std::runtime_error(message);
  }

 private:
  int rank_;
  Shared* shared_;
  std::size_t next_ = 0;
};

// MPI ranks with a GPU each and a long in-core count (split_in_core_s 0): rank 0 plans it again
// at 1/2 of its device bytes before the broadcast, so that the ranks share its units (statically)
// instead of each counting a slice of the whole graph; the two ranks' counts add up to the graph's,
// totals and per vertex. Without the split (a negative threshold) the one unit is cut into a
// slice per rank, as before.
TEST(Workers, RanksWithAGpuEachSplitALongInCoreCount) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  for (const bool split : {true, false}) {
    SCOPED_TRACE(split ? "split" : "slices");
    SequentialRanks::Shared shared;
    std::vector<CountReport> reps;
    for (int r : {0, 1}) {
      SequentialRanks comm(r, &shared);
      std::vector<Worker> ws;
      Worker w{cpu_backend(), false};
      w.device = 0;
      ws.push_back(std::move(w));
      PipelineOptions o = popts(Scheme::Auto, 0, true);
      o.split_in_core_s = split ? 0.0 : -1.0;
      o.rank_split = "static";
      reps.push_back(count_with_workers(*src, o, ws, &comm));
    }
    ASSERT_EQ(shared.sums.size(), 2u);  // (rank 1's head, then its per-vertex counts)
    EXPECT_EQ(reps[0].triangles + shared.sums[0][0], oracle);
    ASSERT_EQ(shared.sums[1].size(), reps[0].per_vertex.size());
    std::vector<count_t> pv = reps[0].per_vertex;
    for (std::size_t v = 0; v < pv.size(); ++v) pv[v] += shared.sums[1][v];
    EXPECT_EQ(per_vertex_mismatches(pv, new_of_old, oracle_pv), 0u);
    for (const CountReport& rep : reps) {
      const bool says = rep.plan.reason.find("GPUs share its units") != std::string::npos;
      EXPECT_EQ(says, split) << rep.plan.reason;
      if (split) {
        EXPECT_GT(rep.plan.partition.p, 1u);
      } else {
        EXPECT_EQ(rep.plan.partition.p, 1u);
        EXPECT_EQ(rep.plan.units.size(), 2u);  // (a slice per rank)
      }
    }
    EXPECT_GT(reps[0].stats.units, 0u);
    EXPECT_GT(shared.sums[0][1], 0u);  // (each rank counted units of its own)
  }
}

// Several workers report their wall as one worker does: up to the end of the last unit (every
// unit's spans inside it), the memory given back after it as the release; together no more
// than the call took.
TEST(Workers, TheWallEndsWithTheLastUnitAndTheReleaseFollowsIt) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  for (Scheme s : {Scheme::Range, Scheme::Pair}) {
    SCOPED_TRACE(scheme_name(s));
    auto ws = cpu_workers(2);
    PipelineOptions o = popts(s, 4, false);
    o.chunk_spans = true;
    const double t0 = stream::now_s();
    const CountReport r = count_with_workers(*src, o, ws);
    const double took = stream::now_s() - t0;
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_GT(r.stats.wall_s, 0.0);
    EXPECT_GT(r.stats.release_s, 0.0);  // (the workers' memory and threads, after the units)
    EXPECT_LE(r.stats.wall_s + r.stats.release_s, took + 1e-6);
    ASSERT_FALSE(r.stats.spans.empty());
    for (const TraceSpan& sp : r.stats.spans) {
      if (sp.worker >= 0) {
        EXPECT_LE(sp.end_s, r.stats.wall_s + 1e-6) << sp.stage << " " << sp.unit;
      }
    }
  }
}

TEST(Workers, OneWorkerIsTheSingleBackendPath) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  auto ws = cpu_workers(1);
  CountReport r = count_with_workers(*src, popts(Scheme::Range, 4, true), ws);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_TRUE(r.stats.workers.empty());  // no per-worker entries: count_with_backend ran
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
}

// Each worker's decompressed bytes are its own and the shared host block store's are counted
// once: together they add up to the count's. Where the workers share the store (range, hash and
// pair: every row part fits the block cache, so it preloads) every chunk is decompressed once,
// as for a single worker, and the workers decompress nothing themselves; the vertex scheme has
// no store: each worker decompresses what its units need.
TEST(Workers, SharedBlockStoreDecompressesEveryChunkOnce) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair}) {
    SCOPED_TRACE(scheme_name(s));
    auto one = cpu_workers(1);
    const CountReport single = count_with_workers(*src, popts(s, 4, false), one);
    ASSERT_GT(single.stats.decompress.bytes, 0u);
    for (int workers : {2, 3}) {
      SCOPED_TRACE(workers);
      auto ws = cpu_workers(workers);
      const CountReport r = count_with_workers(*src, popts(s, 4, false), ws);
      EXPECT_EQ(r.triangles, oracle);
      std::uint64_t own = 0;
      for (const WorkerStats& w : r.stats.workers) {
        own += w.decompress_bytes;
        if (s == Scheme::Vertex && w.units) {
          EXPECT_GT(w.decompress_bytes, 0u);
        }
        if (s != Scheme::Vertex) {
          EXPECT_EQ(w.decompress_bytes, 0u);
        }
      }
      std::uint64_t store = 0;
      bool store_spans = false;
      for (const TraceSpan& sp : r.stats.spans) store_spans = store_spans || sp.worker < 0;
      if (s == Scheme::Vertex) {
        EXPECT_EQ(own, r.stats.decompress.bytes);
        EXPECT_GE(own, single.stats.decompress.bytes);
        EXPECT_FALSE(store_spans);
      } else {
        store = r.stats.decompress.bytes - own;
        EXPECT_EQ(store, single.stats.decompress.bytes);
        EXPECT_TRUE(store_spans);
      }
    }
  }
}

// Out of core with the in-core image, the store the GPUs share takes pair's suffix blocks as
// views of the image's columns, as one GPU's own store does: no chunk is read and no column
// copied into the store, every upload comes from registered memory, and the host slots are
// left unpinned.
TEST(Workers, SharedStoreViewsTheInCoreImage) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 41));
  auto src = memory_source(g, 97);
  for (std::uint32_t p : {3u, 7u}) {
    SCOPED_TRACE(p);
    std::vector<Worker> ws;
    std::vector<FakeBackend*> fakes;
    for (int d : {0, 1}) {
      auto fb = std::make_unique<FakeBackend>();
      if (!fakes.empty()) fb->registrations_of = fakes.front();
      fakes.push_back(fb.get());
      Worker w{std::move(fb), false};
      w.device = d;
      ws.push_back(std::move(w));
    }
    // (after the workers: the image unregisters itself from the first one's backend)
    auto image = std::make_shared<stream::InCoreImage>(*src, 2);
    const auto from_image = stream::image_source(*src, *image);
    PipelineOptions o = popts(Scheme::Pair, p, true);
    o.in_core_image = image;
    o.chunk_spans = true;
    const CountReport r = count_with_workers(*from_image, o, ws);
    ASSERT_EQ(r.plan.partition.scheme, Scheme::Pair);
    ASSERT_EQ(r.plan.partition.p, p);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    ASSERT_EQ(r.stats.workers.size(), 2u);
    std::uint64_t store_chunk_bytes = 0, store_built = 0;
    for (const TraceSpan& sp : r.stats.spans)
      if (sp.worker < 0) {
        store_chunk_bytes += sp.stage == "decompress" || sp.stage == "read" ? sp.bytes : 0;
        store_built += sp.stage == "transform" ? sp.bytes : 0;
      }
    EXPECT_EQ(store_chunk_bytes, 0u) << "the shared store read chunks instead of viewing the image";
    EXPECT_LT(store_built, g.m() * sizeof(vid_t)) << "the shared store copied the columns";
    std::uint64_t units = 0;
    for (std::size_t w = 0; w < fakes.size(); ++w) {
      const FakeBackend* f = fakes[w];
      EXPECT_EQ(f->unregistered_sources, 0u);
      EXPECT_EQ(f->host_slot_bytes, 0u);
      EXPECT_EQ(f->image_mismatches, 0u);
      // (a worker that got no unit allocated nothing: the other may count them all)
      if (r.stats.workers[w].units > 0) {
        EXPECT_FALSE(f->host_slots_pinned) << "host slots pinned though no unit uses them";
      }
      units += r.stats.workers[w].units;
    }
    EXPECT_EQ(units, r.plan.units.size());
  }
}

TEST(Workers, TraceHasOneProcessPerWorker) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::random_graph(400, 4000, 7));
  auto src = memory_source(g, 64);
  auto ws = cpu_workers(2);
  CountReport r = count_with_workers(*src, popts(Scheme::Hash, 3, false), ws);
  EXPECT_EQ(r.triangles, oracle);
  std::set<int> seen;
  for (const TraceSpan& s : r.stats.spans) seen.insert(s.worker);
  EXPECT_TRUE(seen.count(0) || seen.count(1));
  EXPECT_TRUE(seen.count(-1));  // the shared host block store's preload
  const std::string json = r.stats.to_json();
  EXPECT_NE(json.find("\"workers\":[{\"worker\":0"), std::string::npos) << json;
  // the trace: one process per worker (pids 1, 2) and the shared store's (pid 0)
  std::ostringstream trace;
  {
    char* buf = nullptr;
    std::size_t len = 0;
    std::FILE* f = open_memstream(&buf, &len);
    ASSERT_NE(f, nullptr);
    r.stats.write_trace(f);
    std::fclose(f);
    trace << std::string(buf, len);
    std::free(buf);
  }
  for (const char* name : {"host block store shared by the workers", "worker 0: ", "worker 1: "})
    EXPECT_NE(trace.str().find(name), std::string::npos) << name;
  EXPECT_NE(trace.str().find("\"pid\":0"), std::string::npos);
}

// A slow "GPU" (40 ms per unit) and the CPU as a cut-off worker: the CPU measures itself
// faster and takes most units; the count stays exact.
TEST(Workers, CutoffGivesTheCpuMostUnitsBesideASlowGpu) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::random_graph(800, 12000, 5));
  auto src = memory_source(g, 64);
  std::vector<Worker> ws;
  ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 40), false});
  ws.push_back({cpu_backend(), true});
  CountReport r = count_with_workers(*src, popts(Scheme::Hash, 4, true), ws);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
  ASSERT_EQ(r.stats.workers.size(), 2u);
  EXPECT_GT(r.stats.workers[1].units, r.stats.workers[0].units);
  EXPECT_EQ(r.stats.workers[0].units + r.stats.workers[1].units, r.plan.units.size());
}

// The opposite: a slow CPU beside a fast worker takes its probes only (it never finishes a unit
// before the fast worker finishes the rest).
TEST(Workers, CutoffLeavesASlowCpuItsProbesOnly) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::random_graph(800, 12000, 5));
  auto src = memory_source(g, 64);
  std::vector<Worker> ws;
  ws.push_back({cpu_backend(), false});
  ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 2000), true});
  CountReport r = count_with_workers(*src, popts(Scheme::Hash, 4, false), ws);
  EXPECT_EQ(r.triangles, oracle);
  ASSERT_EQ(r.stats.workers.size(), 2u);
  EXPECT_LE(r.stats.workers[1].units, 2u);
}

TEST(Workers, CutoffRule) {
  using stream::cutoff_takes;
  // (c, own units in flight, own work left, own rate, the others' work left, their rate)
  EXPECT_FALSE(cutoff_takes(1, 0, 0, 0, 100, 0));  // the others have no rate yet: wait
  EXPECT_TRUE(cutoff_takes(3, 0, 0, 0, 100, 5));   // a probe: 32 x 3 <= 100
  EXPECT_FALSE(cutoff_takes(4, 0, 0, 0, 100, 5));  // too large for a probe
  EXPECT_FALSE(cutoff_takes(1, 1, 1, 0, 100, 5));  // a probe in flight already
  // (left + c) / own rate against the others' time for the rest
  EXPECT_TRUE(cutoff_takes(10, 1, 10, 2, 200, 10));    // 1.5 x 10 s <= 20 s
  EXPECT_FALSE(cutoff_takes(20, 1, 10, 2, 200, 10));   // 1.5 x 15 s > 20 s
  EXPECT_FALSE(cutoff_takes(100, 1, 10, 2, 200, 10));  // 1.5 x 55 s > 20 s
  EXPECT_FALSE(cutoff_takes(1, 0, 0, 1, 0, 10));       // nothing left for the others
}

// A fake GPU (FakeBackend: a device of its own) and the cut-off CPU beside it, counting `o`'s
// plan of src: the count and per-vertex counts exact, the GPU every unit and the CPU none.
CountReport fake_gpu_counts_alone(const GraphSource& src, const PipelineOptions& o,
                                  std::uint64_t oracle, const std::vector<vid_t>& new_of_old,
                                  const std::vector<std::uint64_t>& oracle_pv) {
  auto gpu = std::make_unique<FakeBackend>();
  FakeBackend* fake = gpu.get();
  std::vector<Worker> ws;
  ws.push_back({std::move(gpu), false});
  ws.push_back({cpu_backend(), true});
  CountReport r = count_with_workers(src, o, ws);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
  EXPECT_EQ(r.stats.workers.size(), 2u);
  if (r.stats.workers.size() == 2) {
    EXPECT_EQ(r.stats.workers[0].units, r.plan.units.size());
    EXPECT_EQ(r.stats.workers[1].units, 0u);
  }
  EXPECT_EQ(fake->image_mismatches, 0u);
  return r;
}

// A fake GPU and the CPU beside it on plans where the CPU cannot help (in core: one unit; two
// hash parts: eight units of similar work): the CPU worker is not run at all, the GPU counts
// every unit, exactly.
TEST(Workers, ACpuThatCannotHelpIsNotRun) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (auto [s, p] : {std::pair{Scheme::Range, 1u}, {Scheme::Hash, 2u}}) {
    SCOPED_TRACE(scheme_name(s) + " p=" + std::to_string(p));
    const PipelineOptions o = popts(s, p, true);
    const Plan plan = plan_graph(*src, resolve_plan_options(o, nullptr));
    ASSERT_FALSE(stream::cutoff_may_help(plan, {}));
    const CountReport r = fake_gpu_counts_alone(*src, o, oracle, new_of_old, oracle_pv);
    EXPECT_EQ(r.stats.cutoff.rfind("not admitted: no unit small enough", 0), 0u) << r.stats.cutoff;
  }
}

// The same with a plan of many units: the CPU may take some (timing decides how many), every
// unit is counted once and the counts are exact.
TEST(Workers, AFakeGpuAndTheCpuCountExactly) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (Scheme s : {Scheme::Range, Scheme::Hash}) {
    SCOPED_TRACE(scheme_name(s));
    std::vector<Worker> ws;
    ws.push_back({std::make_unique<FakeBackend>(), false});
    ws.push_back({cpu_backend(), true});
    const CountReport r = count_with_workers(*src, popts(s, 8, true), ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    ASSERT_EQ(r.stats.workers.size(), 2u);
    EXPECT_EQ(r.stats.workers[0].units + r.stats.workers[1].units, r.plan.units.size());
  }
}

// The probe is the smallest unit waiting once the GPU has a rate without its first unit (its
// start-up); nothing before that.
TEST(Workers, TheProbeIsTheSmallestWaitingUnit) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  plan.units[90].work = 3;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);  // the GPU has no rate yet
  EXPECT_EQ(q.try_next(0), 0);
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  now = 0.1;
  q.done(0, 0);  // the GPU's first unit: its rate holds its start-up
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  EXPECT_EQ(q.try_next(0), 1);
  now = 0.2;
  q.done(0, 1);  // the GPU: 1000 work per second
  EXPECT_EQ(q.try_next(1), 60);
  EXPECT_EQ(q.try_next(1), UnitFeed::kCollectFirst);  // one probe at a time
  EXPECT_EQ(q.try_next(0), 2);                        // the GPU goes on in plan order
}

// The cut-off worker takes nothing while the plain workers' preloads run (their cores feed the
// GPUs): with two holds, the probe comes only after the second release.
TEST(Workers, TheCutoffWaitsForThePlainWorkersPreloads) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  q.hold_cutoff(2);
  EXPECT_EQ(q.try_next(0), 0);
  now = 0.1;
  q.done(0, 0);
  EXPECT_EQ(q.try_next(0), 1);  // the GPU is never held
  now = 0.2;
  q.done(0, 1);  // the GPU has a rate: the CPU could probe, but the preloads hold it
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  q.release_cutoff();
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  EXPECT_EQ(q.try_next(0), 2);
  q.release_cutoff();
  EXPECT_EQ(q.try_next(1), 60);
}

// The first probe only while the others have at least the minimum seconds of work left: the GPU
// at 1000 work per second with 9,802 work left (9.8 s) gets no probe beside it at a 20 s minimum
// (and none later: what is left only shrinks), one at 5 s.
TEST(Workers, NoProbeWhenTheOthersAreAlmostDone) {
  Plan plan;
  plan.units.resize(100);
  for (std::size_t u = 0; u < plan.units.size(); ++u) plan.units[u].work = 100;
  plan.units[60].work = 2;
  for (double min_s : {20.0, 5.0}) {
    SCOPED_TRACE(min_s);
    double now = 0;
    stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
    q.set_min_probe_seconds(min_s);
    EXPECT_EQ(q.try_next(0), 0);
    now = 0.1;
    q.done(0, 0);
    EXPECT_EQ(q.try_next(0), 1);
    now = 0.2;
    q.done(0, 1);
    EXPECT_EQ(q.try_next(1), min_s > 10 ? -1 : 60);
  }
}

// The cut-off at the tail, step by step on a driven clock: a GPU of 1000 work per second, a CPU
// that measures 100 on its second probe; the CPU takes a unit while it finishes it (with the
// 1.5 margin) before the GPU finishes the rest, and nothing after that.
TEST(Workers, AtTheTailTheCpuTakesNothingItWouldFinishLate) {
  Plan plan;
  plan.units.resize(100);
  for (WorkUnit& u : plan.units) u.work = 100;
  plan.units[98].work = 2;
  plan.units[99].work = 50;
  double now = 0;
  stream::UnitQueue q(plan, {false, true}, {}, true, [&now] { return now; });
  auto gpu_counts = [&](int units) {  // one at a time, 0.1 s each
    for (int i = 0; i < units; ++i) {
      const std::int64_t u = q.try_next(0);
      ASSERT_GE(u, 0);
      now += 0.1;
      q.done(0, static_cast<std::size_t>(u));
    }
  };
  gpu_counts(2);                 // (a rate without the first unit's start-up)
  EXPECT_EQ(q.try_next(1), 98);  // the first probe: the smallest unit
  now += 0.02;
  q.done(1, 98);
  EXPECT_EQ(q.try_next(1), 97);  // the second: the largest near the tail the probe rule allows
  now += 1.0;
  q.done(1, 97);
  EXPECT_DOUBLE_EQ(q.rate(1), 100);
  EXPECT_DOUBLE_EQ(q.rate(0), 1000);
  EXPECT_EQ(q.try_next(1), 99);  // 1.5 x 0.5 s against 9.5 s of the GPU's
  now += 0.5;
  q.done(1, 99);
  gpu_counts(95 - 20);  // 20 units of 100 left: 1.5 x 1 s <= 1.9 s
  const std::int64_t u = q.try_next(1);
  EXPECT_GE(u, 0);
  now += 1.0;
  q.done(1, static_cast<std::size_t>(u));
  gpu_counts(19 - 10);  // 10 left: 1.5 x 1 s > 0.9 s
  EXPECT_EQ(q.try_next(1), stream::UnitQueue::kWait);
  gpu_counts(10);
  EXPECT_EQ(q.try_next(1), -1);  // none left
  EXPECT_EQ(q.try_next(0), -1);
  EXPECT_EQ(q.units_taken(0) + q.units_taken(1), plan.units.size());
}

TEST(Workers, CutoffMayHelpNeedsASmallUnit) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  const Plan one = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 1, false), nullptr));
  ASSERT_EQ(one.units.size(), 1u);
  EXPECT_FALSE(stream::cutoff_may_help(one, {}));  // in core: the GPU takes the only unit
  const Plan many = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 8, false), nullptr));
  EXPECT_TRUE(stream::cutoff_may_help(many, {}));
  Plan even = many;  // units of equal work: the smallest is 1/N of the work, N < 33
  even.units.resize(20);
  for (WorkUnit& u : even.units) u.work = 100;
  EXPECT_FALSE(stream::cutoff_may_help(even, {}));
  even.units.resize(40, even.units.front());
  EXPECT_TRUE(stream::cutoff_may_help(even, {}));
}

// The cut-off worker runs only when the plain workers' estimated seconds (the plan's rates) reach
// min_probe_s / kAdmitSlack: below, its first probe could never be taken, and it is not admitted.
TEST(Workers, ACutoffWorkerIsNotAdmittedWhenTheOthersEndBeforeAProbeCould) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  const Plan plan = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 8, false), nullptr));
  ASSERT_TRUE(stream::cutoff_may_help(plan, {}));
  const double est = stream::plain_workers_seconds(plan, {}, 1);
  ASSERT_GT(est, 0);
  EXPECT_NEAR(stream::plain_workers_seconds(plan, {}, 2), est / 2, 1e-12 * est);
  std::vector<std::size_t> first_half;
  for (std::size_t u = 0; u < plan.units.size() / 2; ++u) first_half.push_back(u);
  EXPECT_LT(stream::plain_workers_seconds(plan, first_half, 1), est);
  Plan plain_plan;
  std::string why;
  EXPECT_TRUE(stream::admit_cutoff(plan, {}, 1, 1, 0.0, &plain_plan, &why));  // 0: no bound
  EXPECT_EQ(why, "admitted");
  EXPECT_TRUE(
      stream::admit_cutoff(plan, {}, 1, 1, 0.99 * stream::kAdmitSlack * est, &plain_plan, &why));
  EXPECT_FALSE(
      stream::admit_cutoff(plan, {}, 1, 1, 1.01 * stream::kAdmitSlack * est, &plain_plan, &why));
  EXPECT_NE(why.find("not admitted: the other workers' estimated"), std::string::npos) << why;
  // Two plain workers share the seconds: the same bound turns the cut-off worker away sooner.
  EXPECT_FALSE(
      stream::admit_cutoff(plan, {}, 2, 1, 0.99 * stream::kAdmitSlack * est, &plain_plan, &why));
  // In core (one unit) nothing is small enough for a probe, whatever the bound.
  const Plan one = plan_graph(*src, resolve_plan_options(popts(Scheme::Range, 1, false), nullptr));
  EXPECT_FALSE(stream::admit_cutoff(one, {}, 1, 1, 0.0, &plain_plan, &why));
  EXPECT_NE(why.find("no unit small enough"), std::string::npos) << why;
}

// Not admitted (the plan's rates are a GPU's, so the bound applies where every other worker has
// a device of its own: a CPU worker beside the cut-off one is never turned away by it), the GPU
// worker runs the plan alone (every unit, the count exact) and the report
// says why the cut-off worker did not run, in the JSON and in the one-line summary.
TEST(Workers, ANotAdmittedCutoffWorkerLeavesTheCountToTheOthers) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  PipelineOptions o = popts(Scheme::Range, 8, true);
  o.cutoff_min_probe_s = 1e6;  // (far beyond any estimate of this graph)
  const CountReport r = fake_gpu_counts_alone(*src, o, oracle, new_of_old, oracle_pv);
  EXPECT_EQ(r.stats.cutoff.rfind("not admitted: the other workers' estimated", 0), 0u)
      << r.stats.cutoff;
  EXPECT_NE(r.stats.to_json().find("\"cutoff\":\"not admitted"), std::string::npos);
  EXPECT_NE(r.stats.summary().find("cut-off worker not admitted"), std::string::npos);
  // The same beside a plain worker on the host (the CPU backend): no bound by seconds, admitted.
  std::vector<Worker> host;
  host.push_back({cpu_backend(), false});
  host.push_back({cpu_backend(), true});
  const CountReport h = count_with_workers(*src, o, host);
  EXPECT_EQ(h.triangles, oracle);
  EXPECT_EQ(h.stats.cutoff, "admitted");
}

// The queue's hand-out among simulated workers on a simulated clock: each worker counts its units
// one after another at its rate (estimated work per simulated second), with up to two in flight
// (the driver's pipeline), asking the queue whenever it has room and after every collection.
struct Simulated {
  double finish = 0;                 // when the last unit was collected
  std::vector<double> work;          // per worker: the work of its units
  std::vector<std::uint64_t> units;  // per worker
  std::vector<int> owner;            // per unit: the worker that counted it (-1: none)
};
Simulated simulate(const Plan& plan, const std::vector<double>& rates,
                   const std::vector<bool>& cutoff) {
  const std::size_t W = rates.size();
  double now = 0;
  stream::UnitQueue q(plan, cutoff, {}, true, [&now] { return now; });
  Simulated r;
  r.work.assign(W, 0);
  r.units.assign(W, 0);
  r.owner.assign(plan.units.size(), -1);
  std::vector<std::deque<std::pair<double, std::size_t>>> flying(W);  // (finish, unit)
  std::vector<bool> ended(W, false);
  auto ask = [&](std::size_t w) {
    while (!ended[w] && flying[w].size() < 2) {
      const std::int64_t u = q.try_next(static_cast<int>(w));
      if (u == -1) ended[w] = true;
      if (u < 0) break;  // -1, or kWait / kCollectFirst: it asks again after a collection
      const auto unit = static_cast<std::size_t>(u);
      EXPECT_EQ(r.owner[unit], -1) << "unit " << unit << " handed out twice";
      r.owner[unit] = static_cast<int>(w);
      const double c = std::max(plan.units[unit].work, 1.0);
      const double start = flying[w].empty() ? now : flying[w].back().first;
      flying[w].push_back({start + c / rates[w], unit});
      r.work[w] += c;
      ++r.units[w];
    }
  };
  for (std::size_t w = 0; w < W; ++w) ask(w);
  for (;;) {
    std::size_t next = W;
    for (std::size_t w = 0; w < W; ++w)
      if (!flying[w].empty() && (next == W || flying[w].front().first < flying[next].front().first))
        next = w;
    if (next == W) break;
    now = flying[next].front().first;
    q.done(static_cast<int>(next), flying[next].front().second);
    flying[next].pop_front();
    r.finish = now;
    for (std::size_t w = 0; w < W; ++w) ask(w);
  }
  for (std::size_t w = 0; w < W; ++w) EXPECT_TRUE(ended[w]) << "worker " << w << " still waits";
  return r;
}

std::vector<Plan> simulated_plans() {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  std::vector<Plan> out;
  for (auto [s, p] : {std::pair{Scheme::Range, 1u},
                      {Scheme::Range, 4u},
                      {Scheme::Range, 8u},
                      {Scheme::Range, 12u},
                      {Scheme::Hash, 4u},
                      {Scheme::Hash, 8u}})
    out.push_back(plan_graph(*src, resolve_plan_options(popts(s, p, false), nullptr)));
  return out;
}

// A fast GPU and a slower CPU: the hybrid never finishes later than the GPU alone (the CPU's
// probe is its smallest unit, and it takes a unit only when it finishes before the GPU would
// finish the rest), and every unit is counted exactly once.
TEST(Workers, HybridNeverFinishesLaterThanTheGpuAloneInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    const double gpu = 1000;
    const Simulated alone = simulate(plan, {gpu}, {false});
    for (double slower : {1.5, 4.0, 12.0, 32.0, 100.0}) {
      SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p) +
                   ", CPU " + std::to_string(slower) + "x slower");
      const Simulated h = simulate(plan, {gpu, gpu / slower}, {false, true});
      EXPECT_LE(h.finish, alone.finish * (1 + 1e-9));
      if (plan.partition.p >= 8) {  // the target: 90% of (r_gpu + r_cpu) / r_gpu
        EXPECT_GE(alone.finish / h.finish, 0.9 * (1 + 1 / slower));
      }
      EXPECT_EQ(std::count(h.owner.begin(), h.owner.end(), -1), 0);
      EXPECT_EQ(h.units[0] + h.units[1], plan.units.size());
      EXPECT_NEAR(h.work[0] + h.work[1], alone.work[0], 1e-6 * alone.work[0]);
      if (plan.units.size() == 1) {
        EXPECT_EQ(h.units[1], 0u);  // in core: nothing for the CPU
      }
    }
  }
}

// A CPU far slower than the prior (1000x): it takes its two probes at most, one at a time, each
// small against the work left (kProbeFactor), the first the smallest unit waiting then.
TEST(Workers, AVerySlowCpuTakesTwoSmallProbesAtMostInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p));
    const Simulated h = simulate(plan, {1000, 1}, {false, true});
    EXPECT_LE(h.units[1], 2u);
    EXPECT_LE(stream::kProbeFactor * h.work[1], 2 * (h.work[0] + h.work[1]));
    EXPECT_EQ(h.units[0] + h.units[1], plan.units.size());
    if (plan.units.size() == 1) {
      EXPECT_EQ(h.units[1], 0u);
    }
  }
}

// A CPU as fast as the GPU, or half as fast, takes a fair share of the work, and the count is at
// least 90% of (r_gpu + r_cpu) / r_gpu faster than the GPU alone (p >= 8: units small enough to
// share).
TEST(Workers, AComparableCpuTakesAFairShareInSimulation) {
  for (const Plan& plan : simulated_plans()) {
    if (plan.partition.p < 8) continue;
    const Simulated alone = simulate(plan, {1000}, {false});
    for (double cpu : {1000.0, 500.0}) {
      SCOPED_TRACE(scheme_name(plan.partition.scheme) + " p=" + std::to_string(plan.partition.p) +
                   ", CPU rate " + std::to_string(cpu));
      const Simulated h = simulate(plan, {1000, cpu}, {false, true});
      const double ideal = cpu / (1000 + cpu);  // the CPU's share when both finish together
      const double share = h.work[1] / (h.work[0] + h.work[1]);
      EXPECT_GE(share, 0.8 * ideal);
      // the target: 90% of (r_gpu + r_cpu) / r_gpu
      EXPECT_GE(alone.finish / h.finish, 0.9 * (1000 + cpu) / 1000);
    }
  }
}

// The threads of this process in the idle scheduling class (Linux: /proc/self/task/T/stat,
// field 41 is the policy; SCHED_IDLE is 5).
std::size_t idle_class_threads() {
  std::size_t n = 0;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(t.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));  // after "pid (name) "
    std::string field;
    for (int f = 3; f <= 41 && rest >> field; ++f) {
    }
    n += field == "5" ? 1 : 0;
  }
  return n;
}

// --hybrid's CPU backend counts on threads of the idle scheduling class (each enters it as it
// starts); the other workers' threads stay as they were.
TEST(Workers, TheHybridCpuCountsInTheIdleClass) {
  bool supported = false;
  std::thread([&] { supported = set_thread_idle_class(); }).join();
  if (!supported || !std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "no SCHED_IDLE";
  PipelineOptions o = popts(Scheme::Range, 1, false);
  o.counter.threads = 2;
  const std::size_t before = idle_class_threads();
  std::vector<Worker> ws = make_workers(o, {}, 1, true);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_FALSE(ws[0].idle_class);
  EXPECT_TRUE(ws[1].cutoff && ws[1].idle_class);
  // the backend's thread and the pool's other one (they enter the class as they start)
  for (int i = 0; i < 500 && idle_class_threads() < before + 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(idle_class_threads(), before + 2);  // (none of the plain CPU worker's)
  ws.clear();
  // (a joined thread may still be listed for a moment while the kernel ends it)
  for (int i = 0; i < 500 && idle_class_threads() != before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(idle_class_threads(), before);
}

TEST(Workers, ParseDevices) {
  EXPECT_EQ(parse_devices("0,1,3"), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(parse_devices("0,0"), (std::vector<int>{0, 0}));
  for (const char* bad : {"", "1,", ",1", "a", "-1", "1;2", "99999"})
    EXPECT_THROW(parse_devices(bad), Error) << bad;
}

// A device that cannot start (no GPU on this machine, fewer than asked, or a build without CUDA)
// fails the count with its message and the device or usage exit code, never a crash; where the
// devices exist the count is exact.
TEST(Workers, SeveralDevicesCountOrFailWithTheirMessage) {
  test::TempDir tmp;
  const std::string el = tmp.file("g.el");
  test::write_edge_list(el, test::complete_graph(7));
  for (const std::string devices : {"0,1", "0,0,1", "1,0"}) {
    const test::RunResult r = test::run_cli("count " + test::q(el) + " --devices " + devices);
    if (r.status == 0) {
      EXPECT_NE(r.out.find("triangles     35"), std::string::npos) << r.out;
      continue;
    }
    EXPECT_TRUE(r.status == 1 || r.status == 2)
        << devices << ": status " << r.status << " " << r.err;
    EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r.err;  // (no device, or no CUDA build)
  }
}

TEST(Workers, BadWorkerOptionsAreUsageErrors) {
  test::TempDir tmp;
  const std::string el = tmp.file("g.el");
  test::write_edge_list(el, test::complete_graph(6));
  for (const std::string bad : {"--backend cpu --devices 0", "--devices 0,x", "--devices 1,,2",
                                "--rank-split sometimes", "--workers 0"}) {
    const test::RunResult r = test::run_cli("count " + test::q(el) + " " + bad);
    EXPECT_EQ(r.status, 1) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("error:"), std::string::npos) << bad;
  }
  const test::RunResult ok = test::run_cli("count " + test::q(el) + " --backend cpu --workers 3");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("triangles     20"), std::string::npos) << ok.out;
}

TEST(Workers, CliReportsEveryWorkerInJsonAndTrace) {
  test::TempDir tmp;
  const std::string el = tmp.file("g.el"), trace = tmp.file("t.json");
  test::write_edge_list(el, test::skewed_graph(600, 5000, 3));
  const test::RunResult r =
      test::run_cli("count " + test::q(el) +
                    " --backend cpu --threads 1 --workers 2 --hybrid --scheme hash --parts 3 "
                    "--json --trace " +
                    test::q(trace));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"workers\":[{\"worker\":0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"worker\":2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(cut-off)"), std::string::npos) << r.out;
  const std::string t = test::read_text(trace);
  EXPECT_NE(t.find("\"name\":\"worker 1: cpu"), std::string::npos);
  EXPECT_NE(t.find("\"name\":\"worker 2: cpu"), std::string::npos);
}

TEST(Workers, SplitIsContiguousAndCoversEveryUnit) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  Plan plan = plan_graph(*src, resolve_plan_options(popts(Scheme::Hash, 4, false), nullptr));
  for (int ranks : {1, 2, 3, 4, 100}) {
    const UnitSplit s = mpi_split(plan, ranks);
    ASSERT_GE(s.bounds.size(), 2u);
    EXPECT_EQ(s.bounds.front(), 0u);
    EXPECT_EQ(s.bounds.back(), plan.units.size());
    EXPECT_TRUE(std::is_sorted(s.bounds.begin(), s.bounds.end()));
    if (!s.dynamic) {
      EXPECT_EQ(s.bounds.size(), static_cast<std::size_t>(ranks) + 1);
    }
  }
}

TEST(Workers, PlanSurvivesItsWireForm) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(600, 5000, 3));
  auto src = memory_source(g, 64);
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair}) {
    Plan plan = plan_graph(*src, resolve_plan_options(popts(s, 3, true), nullptr));
    Plan back = plan_from_bytes(plan_to_bytes(plan));
    EXPECT_EQ(back.to_json(), plan.to_json());
    EXPECT_EQ(plan_to_bytes(back), plan_to_bytes(plan));
    auto be = cpu_backend();
    EXPECT_EQ(run_plan(*src, back, *be, popts(s, 3, false)).triangles, oracle);
    std::string cut = plan_to_bytes(plan);
    cut.pop_back();
    EXPECT_THROW(plan_from_bytes(cut), Error);
  }
}

}  // namespace
}  // namespace tristream::stream_test
