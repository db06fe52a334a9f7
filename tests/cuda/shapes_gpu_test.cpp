// shapes_gpu_test.cpp — every CUDA kernel on every shape of the graph-shape suite
// (cuda/testing/graph_suite.hpp) at small scales against the CPU counter, totals and per vertex,
// and against the closed forms where they exist: the 2D and 3D meshes, complete graphs, and the
// community model with p_in = 1, p_out = 0 (disjoint cliques). Label gpu; skipped without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "cuda/testing/graph_suite.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

const std::vector<std::string> kKernels = {"auto",          "lstc",     "trust", "trust:lite",
                                           "trust:t32",     "trust:in", "wedge", "wedge:nocorner",
                                           "trust:lite-sb", "gui",      "bitmap"};

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped"; \
  } while (0)

OrientedGraph generated(const GenerateOptions& o) {
  test::EdgeList e;
  for (const auto& x : generate_edges(o))
    e.emplace_back(static_cast<vid_t>(x.first), static_cast<vid_t>(x.second));
  return orient_edge_list(std::uint64_t{1} << o.scale, e);
}

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
      const OrientedGraph g = generated(cuda::suite_shape(shape, scale));
      ASSERT_GT(g.m(), 0u);
      const count_t t = expect_every_kernel(g, what, cuda::suite_closed_form(shape, scale));
      EXPECT_GT(t, 0u);
    }
}

#ifdef TRISTREAM_HAVE_CUDA  // (choose_kernel lives in the CUDA library)
// `auto` in core (docs/kernels.md): gui for the meshes (short rows joining nearby ids), trust:lite
// for even degrees over random ids (uniform, sparse or not, and community), trust:in for skew.
// choose_kernel is host code: no device needed.
TEST(KernelShapes, AutoPicksGuiForMeshesOnly) {
  auto choice = [](const GenerateOptions& o) {
    const OrientedGraph g = generated(o);
    const CsrView v = g.csr.view();
    cuda::HostViews h;
    h.a_cols = v.cols;
    h.b_offsets = v.offsets;
    h.c_offsets = v.offsets;
    return cuda::choose_kernel(v, v, v, v.offsets, h);
  };
  for (const unsigned scale : {13u, 16u}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    EXPECT_EQ(choice(cuda::suite_shape("mesh2d", scale)), "gui");
    EXPECT_EQ(choice(cuda::suite_shape("mesh3d", scale)), "gui");
    EXPECT_EQ(choice(cuda::suite_shape("kronecker", scale)), "trust:in");
    EXPECT_EQ(choice(cuda::suite_shape("uniform", scale)), "trust:lite");
    EXPECT_EQ(choice(cuda::suite_shape("community", scale)), "trust:lite");
    for (const unsigned ef : {2u, 4u}) {
      GenerateOptions u = cuda::suite_shape("uniform", scale);
      u.edge_factor = ef;
      EXPECT_EQ(choice(u), "trust:lite") << "uniform, edge factor " << ef;
    }
  }
}

// `auto` for pair units (A cut from B = R_i, C = R_j; docs/kernels.md): trust:in where the probes
// it saves outweigh its transpose. On a Kronecker graph the units with most of the work (the
// dense core's rows) take trust:in; on a hub-dominated graph (little work per edge) every unit
// takes trust.
TEST(KernelShapes, AutoPicksTrustInForPairUnitsThatSaveProbes) {
  // the choices of the units (i, j) of p equal row ranges, weighted by A's edges
  auto choices = [](const GenerateOptions& o, std::uint32_t p) {
    const OrientedGraph g = generated(o);
    const CsrView v = g.csr.view();
    const std::uint64_t n = v.rows;
    std::map<std::string, std::uint64_t> edges;
    for (std::uint32_t i = 0; i < p; ++i)
      for (std::uint32_t j = i; j < p; ++j) {
        const std::uint64_t r0 = n * i / p, r1 = n * (i + 1) / p;
        const std::uint64_t c0 = n * j / p, c1 = n * (j + 1) / p;
        std::uint64_t a_edges = 0;
        for (std::uint64_t u = r0; u < r1; ++u)
          for (eid_t e = v.offsets[u]; e < v.offsets[u + 1]; ++e)
            a_edges += v.cols[e] >= c0 && v.cols[e] < c1 ? 1 : 0;
        if (a_edges == 0) continue;
        const CsrView B{r1 - r0, v.offsets + r0, v.cols, n};
        const CsrView C{c1 - c0, v.offsets + c0, v.cols, n};
        const CsrView A{r1 - r0, nullptr, nullptr, c1 - c0};  // (on the device only)
        cuda::HostViews h;
        h.a_cut = true;
        h.a_cut_lo = c0;
        h.a_cut_hi = c1;
        h.a_edges = a_edges;
        h.b_offsets = B.offsets;
        h.b_cols = v.cols;
        h.c_offsets = C.offsets;
        h.c_cols = v.cols;
        edges[cuda::choose_kernel(A, B, C, nullptr, h)] += a_edges;
      }
    return edges;
  };
  for (const unsigned scale : {14u, 16u}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    auto k = choices(cuda::suite_shape("kronecker", scale), 8);
    GenerateOptions hub;
    hub.kind = "hub";
    hub.scale = scale;
    hub.hubs = 64;
    hub.hub_share = 0.5;
    hub.edge_factor = 8;
    auto h = choices(hub, 8);
    for (const auto& kv : k) EXPECT_TRUE(kv.first == "trust" || kv.first == "trust:in") << kv.first;
    const std::uint64_t in = k["trust:in"], all = in + k["trust"];
    EXPECT_GE(in, all * 95 / 100) << "Kronecker: A's edges in trust:in units";
    EXPECT_EQ(h.count("trust:in"), 0u) << "hub graph: every unit trust";
    EXPECT_GT(h["trust"], 0u);
  }
}
#endif

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
    expect_every_kernel(generated(o), std::to_string(groups) + " cliques", cliques);
  }
  // the meshes at odd and even scales
  for (const unsigned scale : {9u, 12u, 15u})
    for (const char* mesh : {"mesh2d", "mesh3d"})
      expect_every_kernel(generated(cuda::suite_shape(mesh, scale)),
                          std::string(mesh) + " scale " + std::to_string(scale),
                          cuda::suite_closed_form(mesh, scale));
}

}  // namespace
}  // namespace tristream
