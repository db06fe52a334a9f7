// workers_test.cpp — the count over several workers (stream/workers.hpp): several CPU workers
// give exactly the single worker's count and per-vertex counts for every scheme; the wall and
// the release of several workers; the host block store the workers share (every chunk
// decompressed once, pair's row parts viewed in the in-core image) and the per-worker
// decompressed bytes; one trace process per worker; the devices' option and its errors; the
// unit split between processes; the plan's wire form. In-core splits: workers_split_test.cpp;
// the hybrid queue's cut-off: cutoff_test.cpp.
#include "workers_util.hpp"

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
