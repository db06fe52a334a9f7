// edge_sorter_gpu_test.cpp — the converter's sorter on a CUDA device (cuda/edge_sorter.hpp) gives
// the host's bytes, census included, on graphs of several shapes and sizes (Kronecker with its
// repeats, a skewed graph, ids with gaps, a star, one edge, only repeats), through the API and
// through `convert --device 0` against `--device cpu`; its keys come back on the device too (a
// sorter full of keys that meet an id of 2^32). Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cuda/edge_sorter.hpp"
#include "plan/census_store.hpp"
#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

using test::plain_edge_text;
using test::q;
using test::read_text;
using test::run_cli;
using test::TempDir;
using test::write_text;

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped"; \
  } while (0)

// Converts `input` on the host and on device 0 (census stored both times): the same bytes.
ConvertSummary expect_device_bytes(const TempDir& d, const std::string& input,
                                   unsigned threads = 4) {
  ConvertOptions o;
  o.quiet = true;
  o.threads = threads;
  auto c1 = plan_internal::stored_census_rows();
  o.observer = c1.get();
  convert(input, d.file("host.tcsr"), o);
  auto c2 = plan_internal::stored_census_rows();
  o.observer = c2.get();
  const std::unique_ptr<EdgeSorter> sorter = cuda::make_edge_sorter(0);
  o.edge_sorter = sorter.get();
  const ConvertSummary s = convert(input, d.file("device.tcsr"), o);
  EXPECT_EQ(read_text(d.file("device.tcsr")), read_text(d.file("host.tcsr"))) << input;
  return s;
}

class EdgeSorterGpu : public ::testing::TestWithParam<unsigned> {};

TEST_P(EdgeSorterGpu, KroneckerGivesTheHostsBytes) {
  SKIP_WITHOUT_GPU();
  TempDir d;
  GenerateOptions g;
  g.scale = GetParam();
  generate(g, d.file("k.bin"));
  const ConvertSummary s = expect_device_bytes(d, d.file("k.bin"));
  EXPECT_EQ(s.sorter.rfind("CUDA device 0", 0), 0u) << s.sorter;
}

INSTANTIATE_TEST_SUITE_P(Scales, EdgeSorterGpu, ::testing::Values(4u, 10u, 16u, 20u));

TEST(EdgeSorterGpuShapes, SkewedGapsStarOneEdgeAndRepeats) {
  SKIP_WITHOUT_GPU();
  TempDir d;
  write_text(d.file("skewed.el"), plain_edge_text(test::skewed_graph(50000, 600000, 9)));
  write_text(d.file("gaps.el"), plain_edge_text(test::random_graph(3000, 20000, 5), 1000000));
  std::string star;
  for (int v = 1; v <= 5000; ++v) star += "0 " + std::to_string(v) + "\n";
  write_text(d.file("star.el"), star);
  write_text(d.file("one.el"), "9 4\n");
  write_text(d.file("repeats.el"), "1 2\n2 1\n1 2\n2 1\n");
  for (const char* name : {"skewed.el", "gaps.el", "star.el", "one.el", "repeats.el"}) {
    const ConvertSummary s = expect_device_bytes(d, d.file(name), 3);
    EXPECT_EQ(s.sorter.rfind("CUDA device 0", 0), 0u) << name << ": " << s.sorter;
  }
}

TEST(EdgeSorterGpuShapes, KeysComeBackFromTheDevice) {
  SKIP_WITHOUT_GPU();
  TempDir d;
  const test::EdgeList base = test::random_graph(4000, 60000, 11);
  write_text(d.file("wide.el"), test::plain_edge_text_crossing_2_to_32(base, 5000));
  const ConvertSummary s = expect_device_bytes(d, d.file("wide.el"), 3);
  EXPECT_EQ(s.sorter, "host");
}

TEST(EdgeSorterGpuCli, DeviceZeroAndCpuWriteTheSameFile) {
  SKIP_WITHOUT_GPU();
  TempDir d;
  write_text(d.file("g.el"), plain_edge_text(test::skewed_graph(20000, 200000, 2)));
  const test::RunResult c =
      run_cli("convert " + q(d.file("g.el")) + " -q --device cpu -o " + q(d.file("c.tcsr")));
  ASSERT_EQ(c.status, 0) << c.err;
  const test::RunResult g =
      run_cli("convert " + q(d.file("g.el")) + " -q --json --device 0 -o " + q(d.file("g.tcsr")));
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.out.find("\"sorter\":\"CUDA device 0"), std::string::npos) << g.out;
  EXPECT_EQ(read_text(d.file("g.tcsr")), read_text(d.file("c.tcsr")));
}

}  // namespace
}  // namespace tristream
