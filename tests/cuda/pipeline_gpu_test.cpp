// pipeline_gpu_test.cpp — the streaming pipeline on the CUDA backend equals the CPU count, for
// every scheme and several p, per vertex too; device budgets, OOM re-planning, timing and overlap
// figures, and a .tcsr file larger than its device budget (label gpu; skipped without a GPU).
#include <gtest/gtest.h>

#include <tuple>

#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped"; \
  } while (0)

PipelineOptions popts(Scheme s, std::uint32_t p, bool per_vertex, const std::string& kernel) {
  PipelineOptions o;
  o.backend = "cuda";
  o.scheme = s;
  o.parts = p;
  o.per_vertex = per_vertex;
  o.handle_sigint = false;
  o.counter.kernel = kernel;
  return o;
}

struct Graphs {
  std::vector<std::pair<std::string, OrientedGraph>> list;
  Graphs() {
    list.emplace_back("random", orient_edge_list(3000, test::random_graph(3000, 40000, 5)));
    list.emplace_back("skewed", orient_edge_list(5000, test::skewed_graph(5000, 60000, 7)));
    list.emplace_back("cliques", orient_edge_list(7 * 40, test::disjoint_cliques(7, 40)));
  }
};
const Graphs& graphs() {
  static Graphs g;
  return g;
}

class CudaStreamed : public ::testing::TestWithParam<std::tuple<Scheme, std::uint32_t>> {};

TEST_P(CudaStreamed, EqualsTheCpuCount) {
  SKIP_WITHOUT_GPU();
  const auto [scheme, p] = GetParam();
  for (const auto& [name, g] : graphs().list) {
    SCOPED_TRACE(name);
    auto src = memory_source(g, 777);  // small chunks: units span chunks
    auto cpu = make_cpu_streaming_backend(make_cpu_counter());
    CountReport ref = count_with_backend(*src, popts(Scheme::Range, 1, true, "auto"), *cpu);
    for (const std::string kernel : {"auto", "trust", "trust:lite", "trust:in", "lstc", "wedge"}) {
      SCOPED_TRACE(kernel);
      auto be = make_cuda_streaming_backend(CounterOptions{0, kernel, 0});
      CountReport r = count_with_backend(*src, popts(scheme, p, true, kernel), *be);
      EXPECT_EQ(r.triangles, ref.triangles);
      EXPECT_EQ(r.per_vertex, ref.per_vertex);
      EXPECT_EQ(r.stats.units, r.plan.units.size());
      EXPECT_EQ(r.stats.kernel.spans, r.plan.units.size());
      EXPECT_GE(r.stats.overlap, 0.0);
      EXPECT_LE(r.stats.overlap, 1.0 + 1e-9);
      // range and hash with p > 1 keep blocks on the device between units (device_cache.hpp):
      // the backend finds blocks there exactly when the planner's replay of the cache does
      bool planned_hits = false;
      for (const WorkUnit& w : r.plan.units) {
        std::uint64_t all = w.a.upload_bytes;
        if (!w.b_is_a) all += w.b.upload_bytes;
        if (!w.c_is_a && !w.c_is_b) all += w.c.upload_bytes;
        planned_hits |= w.upload_bytes < all;
      }
      EXPECT_EQ(r.stats.device_cache_hit_bytes > 0, planned_hits && r.plan.device_cache_bytes > 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SchemesAndParts, CudaStreamed,
                         ::testing::Combine(::testing::Values(Scheme::Range, Scheme::Hash,
                                                              Scheme::Vertex, Scheme::Pair),
                                            ::testing::Values(1u, 2u, 3u, 4u, 7u, 16u)),
                         [](const ::testing::TestParamInfo<std::tuple<Scheme, std::uint32_t>>& pi) {
                           return scheme_name(std::get<0>(pi.param)) + "_p" +
                                  std::to_string(std::get<1>(pi.param));
                         });

// Slices (WorkUnit::slices) on the CUDA backend: every other unit of range and hash plans cut
// into 3 or 40 slices counts exactly the CPU's count, totals and per vertex, with every kernel
// (the backend empties C's rows outside a slice on the device; trust:in's transpose skips them).
TEST(CudaStreamed, SlicedUnitsEqualTheCpuCount) {
  SKIP_WITHOUT_GPU();
  for (const auto& [name, g] : graphs().list) {
    SCOPED_TRACE(name);
    auto src = memory_source(g, 777);
    auto cpu = make_cpu_streaming_backend(make_cpu_counter());
    CountReport ref = count_with_backend(*src, popts(Scheme::Range, 1, true, "auto"), *cpu);
    for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Pair})
      for (std::uint32_t slices : {3u, 40u})
        for (const std::string kernel : {"auto", "trust", "trust:in", "lstc", "wedge"}) {
          SCOPED_TRACE(scheme_name(s) + " slices " + std::to_string(slices) + " " + kernel);
          auto o = popts(s, 4, true, kernel);
          auto be = make_cuda_streaming_backend(o.counter);
          const Plan plan =
              test::sliced_plan(plan_graph(*src, resolve_plan_options(o, be.get())), slices, true);
          CountReport r = run_plan(*src, plan, *be, o);
          EXPECT_EQ(r.triangles, ref.triangles);
          EXPECT_EQ(r.per_vertex, ref.per_vertex);
          EXPECT_EQ(r.stats.units, plan.units.size());
        }
  }
}

TEST(CudaStreamedBudget, AutoWithinAQuarterOfTheGraph) {
  SKIP_WITHOUT_GPU();
  const auto& g = graphs().list[1].second;
  auto src = memory_source(g, 4096);
  const count_t ref = make_cpu_counter()->count(g.csr.view());
  const std::uint64_t full = in_core_bytes(g.n(), g.m(), false);
  for (std::uint64_t div : {1u, 2u, 4u, 8u}) {
    auto o = popts(Scheme::Auto, 0, false, "auto");
    o.gpu_memory = full / div;
    auto be = make_cuda_streaming_backend(o.counter);
    CountReport r = count_with_backend(*src, o, *be);
    EXPECT_EQ(r.triangles, ref) << "1/" << div;
    EXPECT_LE(r.plan.device_bytes, full / div);
    EXPECT_GT(r.stats.upload.bytes, 0u);
  }
}

TEST(CudaStreamedBudget, CountsAFileThroughCountFile) {
  SKIP_WITHOUT_GPU();
  const auto& g = graphs().list[0].second;
  test::TempDir tmp;
  tcsr::WriteOptions wo;
  wo.chunk_bytes = 4096;
  tcsr::write_file(tmp.file("g.tcsr"), g, wo);
  tcsr::Reader reader(tmp.file("g.tcsr"));
  const count_t ref = make_cpu_counter()->count(g.csr.view());
  for (Scheme s : {Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair}) {
    auto o = popts(s, 3, false, "auto");
    o.trace_path = tmp.file("trace.json");
    CountReport r = count_file(reader, o);
    EXPECT_EQ(r.triangles, ref) << scheme_name(s);
    EXPECT_EQ(r.stats.backend, "cuda");
    EXPECT_NE(test::read_text(o.trace_path).find("upload u0"), std::string::npos);
  }
}

TEST(CudaStreamedBudget, MoreThanTheDeviceHasReplans) {
  SKIP_WITHOUT_GPU();
  // Ask for more than the device has: the allocation fails and the pipeline re-plans. The
  // graph is small, so a budget above free memory must still count (after re-planning, or at
  // once when the planner's in-core plan is small enough to be allocated).
  const auto& g = graphs().list[0].second;
  auto src = memory_source(g, 1000);
  auto o = popts(Scheme::Auto, 0, false, "auto");
  o.gpu_memory = 1ull << 50;  // 1 PiB
  auto be = make_cuda_streaming_backend(o.counter);
  CountReport r = count_with_backend(*src, o, *be);
  EXPECT_EQ(r.triangles, make_cpu_counter()->count(g.csr.view()));
}

}  // namespace
}  // namespace tristream
