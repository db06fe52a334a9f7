// auto_rule_test.cpp — the `auto` rule of the CUDA kernels (cuda::choose_kernel, docs/kernels.md),
// which is host code: on the graph-shape suite's graphs it picks gui for the meshes, trust:lite for
// even degrees, trust:in for skew, and for pair units trust:in where the probes it saves outweigh
// its transpose. Label cpu (no device needed); built with the CUDA library only.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_util.hpp"
#include "tristream/generate.hpp"

#ifdef TRISTREAM_HAVE_CUDA
#include "cuda/launch.hpp"
#include "cuda/testing/graph_suite.hpp"
#endif

namespace tristream {
namespace {

#ifdef TRISTREAM_HAVE_CUDA
// `auto` in core (docs/kernels.md): gui for the meshes (short rows joining nearby ids), trust:lite
// for even degrees over random ids (uniform, sparse or not, and community), trust:in for skew.
// choose_kernel is host code: no device needed.
TEST(AutoRule, PicksGuiForMeshesOnly) {
  auto choice = [](const GenerateOptions& o) {
    const OrientedGraph g = test::generated_graph(o);
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
TEST(AutoRule, PicksTrustInForPairUnitsThatSaveProbes) {
  // the choices of the units (i, j) of p equal row ranges, weighted by A's edges
  auto choices = [](const GenerateOptions& o, std::uint32_t p) {
    const OrientedGraph g = test::generated_graph(o);
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
#else
TEST(AutoRule, NeedsTheCudaLibrary) {
  GTEST_SKIP() << "built without CUDA: no auto rule to test";
}
#endif

}  // namespace
}  // namespace tristream
