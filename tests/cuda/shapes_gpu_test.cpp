// shapes_gpu_test.cpp — every CUDA kernel on every shape of the graph-shape suite
// (cuda/testing/graph_suite.hpp) at small scales against the CPU counter, totals and per vertex,
// and against the closed forms where they exist: the 2D and 3D meshes, complete graphs, and the
// community model with p_in = 1, p_out = 0 (disjoint cliques). Label gpu; skipped without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "cuda/testing/graph_suite.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

const std::vector<std::string> kKernels = {"auto",          "lstc",     "trust",  "trust:lite",
                                           "trust:t32",     "trust:in", "wedge",  "wedge:nocorner",
                                           "trust:lite-sb", "gui",      "gui:bs", "bitmap"};

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped"; \
  } while (0)

// Every kernel's total and per-vertex counts on g equal the CPU counter's (and `expected` when
// given); returns the CPU total.
count_t expect_every_kernel(const OrientedGraph& g, const std::string& what,
                            std::optional<count_t> expected = std::nullopt) {
  const CsrView v = g.csr.view();
  std::vector<count_t> ref(g.n(), 0);
  const count_t total =
      make_cpu_counter()->count(v, v, v, PerVertexOut{ref.data(), ref.data(), ref.data()});
  if (expected) {
    EXPECT_EQ(total, *expected) << what << ": the CPU counter against the closed form";
  }
  for (const auto& k : kKernels) {
    CounterOptions o;
    o.kernel = k;
    auto gpu = make_cuda_counter(o);
    EXPECT_EQ(gpu->count(v), total) << what << ", kernel " << k;
    std::vector<count_t> got(g.n(), 3);  // added into: start from a known value
    EXPECT_EQ(gpu->count(v, v, v, PerVertexOut{got.data(), got.data(), got.data()}), total)
        << what << ", kernel " << k << " (per vertex)";
    std::size_t bad = 0;
    for (std::size_t x = 0; x < got.size(); ++x) bad += got[x] != ref[x] + 3;
    EXPECT_EQ(bad, 0u) << what << ", kernel " << k << ": per-vertex counts differ";
  }
  return total;
}

TEST(KernelShapes, EveryKernelOnEveryShapeEqualsTheCpuCounter) {
  SKIP_WITHOUT_GPU();
  for (const unsigned scale : {10u, 13u})
    for (const auto& shape : cuda::suite_shapes()) {
      const std::string what = shape + " scale " + std::to_string(scale);
      SCOPED_TRACE(what);
      const OrientedGraph g = test::generated_graph(cuda::suite_shape(shape, scale));
      ASSERT_GT(g.m(), 0u);
      const count_t t = expect_every_kernel(g, what, cuda::suite_closed_form(shape, scale));
      EXPECT_GT(t, 0u);
    }
}

TEST(KernelShapes, ClosedFormsOnEveryKernel) {
  SKIP_WITHOUT_GPU();
  // complete graphs: C(n, 3) (one row longer than a warp's table, one longer than a block's)
  for (const vid_t n : {3u, 33u, 150u, 700u})
    expect_every_kernel(orient_edge_list(n, test::complete_graph(n)), "K" + std::to_string(n),
                        static_cast<count_t>(n) * (n - 1) * (n - 2) / 6);
  // the community model with p_in = 1, p_out = 0: disjoint cliques of 64 (and of 34 and 33)
  for (const std::uint64_t groups : {64u, 124u}) {
    GenerateOptions o = cuda::suite_shape("community", 12);
    o.communities = groups;
    o.p_in = 1;
    o.p_out = 0;
    count_t cliques = 0;
    for (std::uint64_t c = 0; c < groups; ++c) {
      const std::uint64_t size = 4096 / groups + (c < 4096 % groups ? 1 : 0);
      cliques += size * (size - 1) * (size - 2) / 6;
    }
    expect_every_kernel(test::generated_graph(o), std::to_string(groups) + " cliques", cliques);
  }
  // the meshes at odd and even scales
  for (const unsigned scale : {9u, 12u, 15u})
    for (const char* mesh : {"mesh2d", "mesh3d"})
      expect_every_kernel(test::generated_graph(cuda::suite_shape(mesh, scale)),
                          std::string(mesh) + " scale " + std::to_string(scale),
                          cuda::suite_closed_form(mesh, scale));
}

}  // namespace
}  // namespace tristream
