// workers_gpu_test.cpp — several workers with the CUDA backend (stream/workers.hpp): two CUDA
// workers on one device, every device (--devices all), and the GPU with the CPU beside it
// (--hybrid) give exactly the CPU's count and per-vertex counts, for every scheme, in core and
// out of core; beside a GPU count estimated too short for a probe the hybrid's CPU is not
// admitted; the backend option's GPU worker names its device (label gpu; skipped without a GPU).
#include <gtest/gtest.h>

#include <memory>

#include "stream/workers.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

PipelineOptions popts(Scheme s, std::uint32_t p) {
  PipelineOptions o;
  o.backend = "cuda";
  o.scheme = s;
  o.parts = p;
  o.per_vertex = true;
  o.handle_sigint = false;
  return o;
}

// The graph of these tests (a skewed graph of 5,000 vertices), its source and the CPU's count
// of it (on the heap: the source refers to the graph).
struct Reference {
  OrientedGraph g;
  std::unique_ptr<GraphSource> src;
  CountReport ref;
};
std::unique_ptr<Reference> reference() {
  auto r = std::make_unique<Reference>();
  r->g = orient_edge_list(5000, test::skewed_graph(5000, 60000, 7));
  r->src = memory_source(r->g, 777);
  auto cpu = make_cpu_streaming_backend(make_cpu_counter());
  r->ref = count_with_backend(*r->src, popts(Scheme::Range, 1), *cpu);
  return r;
}

// An MPI rank without --devices counts on the backend option's GPU: its worker names that device
// (the GPUs the ranks split a long in-core count between are counted from it).
TEST(CudaWorkers, TheDefaultGpuWorkerNamesItsDevice) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  PipelineOptions o = popts(Scheme::Range, 1);
  o.counter.device = cuda_device_count() - 1;
  const std::vector<Worker> gpu = make_workers(o, {}, 0, false);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_FALSE(gpu[0].backend->device_is_host());
  EXPECT_EQ(gpu[0].device, o.counter.device);
  o.backend = "cpu";
  const std::vector<Worker> cpu = make_workers(o, {}, 0, false);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].device, -1);
}

TEST(CudaWorkers, EveryMixOfWorkersCountsExactly) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  const auto x = reference();
  const GraphSource* src = x->src.get();
  const CountReport& ref = x->ref;
  std::vector<int> all;
  for (int d = 0; d < cuda_device_count(); ++d) all.push_back(d);
  struct Mix {
    const char* name;
    std::vector<int> devices;
    bool hybrid;
    bool slices = false;  // in core: a slice per GPU (PipelineOptions::in_core_gpu_slices)
  };
  const Mix mixes[] = {{"0,0", {0, 0}, false},
                       {"all", all, false},
                       {"all, a slice per GPU", all, false, true},
                       {"hybrid", {0}, true},
                       {"0,0 hybrid", {0, 0}, true}};
  for (const Mix& m : mixes)
    for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair})
      for (std::uint32_t p : {1u, 3u, 8u}) {
        SCOPED_TRACE(std::string(m.name) + " " + scheme_name(s) + " p=" + std::to_string(p));
        PipelineOptions o = popts(s, p);
        o.in_core_gpu_slices = m.slices;
        // (no bound on the GPUs' seconds or the CPU's share: the cut-off CPU is admitted where a
        // probe may help, so that it may count beside the GPU on a graph this small)
        o.cutoff_min_probe_s = 0;
        o.cutoff_min_share = 0;
        std::vector<Worker> ws = make_workers(o, m.devices, 0, m.hybrid);
        const CountReport r = count_with_workers(*src, o, ws);
        EXPECT_EQ(r.triangles, ref.triangles);
        EXPECT_EQ(r.per_vertex, ref.per_vertex);
        std::uint64_t units = 0;
        for (const WorkerStats& w : r.stats.workers) units += w.units;
        if (ws.size() > 1) {
          EXPECT_EQ(units, r.plan.units.size());
        }
        if (m.hybrid) {
          EXPECT_FALSE(r.stats.cutoff.empty());
        }
      }
}

// --hybrid with the default bound (PipelineOptions::cutoff_min_probe_s, two seconds): beside a
// GPU whose count of this small graph is estimated at milliseconds, the cut-off CPU is not
// admitted, and the GPU counts every unit alone, exactly.
TEST(CudaWorkers, TheHybridCpuIsNotAdmittedBesideAShortGpuCount) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  const auto x = reference();
  const GraphSource* src = x->src.get();
  const CountReport& ref = x->ref;
  const PipelineOptions o = popts(Scheme::Range, 8);
  std::vector<Worker> ws = make_workers(o, {}, 0, true);  // (the default device, as `count`)
  ASSERT_EQ(ws.size(), 2u);
  const CountReport r = count_with_workers(*src, o, ws);
  EXPECT_EQ(r.triangles, ref.triangles);
  EXPECT_EQ(r.per_vertex, ref.per_vertex);
  EXPECT_EQ(r.stats.cutoff.rfind("not admitted: the other workers' estimated", 0), 0u)
      << r.stats.cutoff;
  ASSERT_EQ(r.stats.workers.size(), 2u);
  EXPECT_EQ(r.stats.workers[0].units, r.plan.units.size());
  EXPECT_EQ(r.stats.workers[1].units, 0u);
}

}  // namespace
}  // namespace tristream
