// graph_suite_test.cpp — the graph-shape suite (cuda/testing/graph_suite.hpp) without a GPU: the
// `tristream generate` arguments of every shape make the graph the suite's options make (the CLI's
// count of the generated file equals the CPU counter's count of the in-memory graph), the closed
// forms equal the CPU counter on the meshes, and the shapes have the degrees they are named for.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cuda/testing/graph_suite.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

TEST(GraphSuite, GenerateArgumentsMakeTheSameGraph) {
  test::TempDir dir;
  for (const auto& shape : cuda::suite_shapes()) {
    SCOPED_TRACE(shape);
    const OrientedGraph g = test::generated_graph(cuda::suite_shape(shape, 11));
    const count_t t = make_cpu_counter()->count(g.csr.view());
    const std::string file = dir.file(shape + ".tcsr");
    const auto gen = test::run_cli("generate " + cuda::suite_generate_args(shape, 11) + " -q -o " +
                                   test::q(file));
    ASSERT_EQ(gen.status, 0) << gen.err;
    const auto c = test::run_cli("count " + test::q(file) + " --backend cpu --json");
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_NE(c.out.find("\"triangles\":" + std::to_string(t)), std::string::npos)
        << c.out << " (expected " << t << ")";
  }
}

TEST(GraphSuite, ClosedFormsEqualTheCpuCounter) {
  for (unsigned scale = 4; scale <= 16; ++scale)
    for (const char* mesh : {"mesh2d", "mesh3d"}) {
      SCOPED_TRACE(std::string(mesh) + " scale " + std::to_string(scale));
      const auto closed = cuda::suite_closed_form(mesh, scale);
      ASSERT_TRUE(closed.has_value());
      EXPECT_EQ(make_cpu_counter()->count(
                    test::generated_graph(cuda::suite_shape(mesh, scale)).csr.view()),
                *closed);
    }
  EXPECT_FALSE(cuda::suite_closed_form("kronecker", 12).has_value());
  EXPECT_THROW(cuda::suite_shape("grid", 12), Error);
}

// The hub is adjacent to every other vertex; the power law's heaviest vertex to a large share;
// the 2D mesh has at most 6 neighbours a vertex.
TEST(GraphSuite, ShapesHaveTheirDegrees) {
  auto max_degree = [](const OrientedGraph& g) {
    std::vector<std::uint64_t> deg(g.n(), 0);
    const CsrView v = g.csr.view();
    for (std::uint64_t u = 0; u < v.rows; ++u)
      for (eid_t e = v.offsets[u]; e < v.offsets[u + 1]; ++e) ++deg[u], ++deg[v.cols[e]];
    return *std::max_element(deg.begin(), deg.end());
  };
  const unsigned s = 12;
  EXPECT_EQ(max_degree(test::generated_graph(cuda::suite_shape("hub", s))), (1u << s) - 1);
  EXPECT_GT(max_degree(test::generated_graph(cuda::suite_shape("powerlaw", s))), (1u << s) / 4);
  EXPECT_EQ(max_degree(test::generated_graph(cuda::suite_shape("mesh2d", s))), 6u);
  EXPECT_EQ(max_degree(test::generated_graph(cuda::suite_shape("mesh3d", s))), 14u);
  EXPECT_LT(max_degree(test::generated_graph(cuda::suite_shape("uniform", s))), 80u);
}

}  // namespace
}  // namespace tristream
