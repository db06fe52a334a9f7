// edge_sorter_gpu_test.cpp — the converter's sorter on a CUDA device (cuda/edge_sorter.hpp) gives
// the host's bytes, census included, on graphs of several shapes and sizes (Kronecker with its
// repeats, a skewed graph, ids with gaps, a star, one edge, only repeats), through the API and
// through `convert --device 0` against `--device cpu`; its keys come back on the device too (a
// sorter full of keys that meet an id of 2^32); its row tally against the reference. Skips without
// a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

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

// The row tally on the device against its reference (tristream/row_tally.hpp) over the rows the
// device sorted, seeded: random graphs, buckets and groups (empty ones among them), fold tables,
// and hash moduli inside and beyond the kernel's shared counters (H x H > 4096).
class RowTallyGpu : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(RowTallyGpu, MatchesTheReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(GetParam());
  const vid_t ids = static_cast<vid_t>(50 + rng() % 30000);
  const test::EdgeList g = test::skewed_graph(ids, 20 + rng() % 400000, rng());
  std::vector<std::uint64_t> keys;
  for (const auto& [a, b] : g)
    if (a != b) keys.push_back(std::uint64_t{std::min(a, b)} << 32 | std::max(a, b));
  const std::unique_ptr<EdgeSorter> sorter = cuda::make_edge_sorter(0);
  ASSERT_TRUE(sorter->append(keys.data(), keys.size()));
  sorter->close();
  std::vector<std::uint32_t> degree(ids);
  const std::uint64_t m = sorter->unique_and_degrees(ids, degree.data());
  const std::uint64_t n = static_cast<std::uint64_t>(
      std::count_if(degree.begin(), degree.end(), [](std::uint32_t x) { return x > 0; }));
  std::vector<std::uint32_t> perm(n), length(n), cols(m);
  sorter->rank_and_sort_rows(ids, n, perm.data(), length.data());
  sorter->columns(0, m, cols.data());
  std::vector<std::uint64_t> offsets(n + 1, 0);
  for (std::uint64_t r = 0; r < n; ++r) offsets[r + 1] = offsets[r] + length[r];
  ASSERT_EQ(offsets[n], m);
  // (bounds: 0, sorted random cuts, n)
  auto bounds = [&](std::uint64_t parts) {
    std::vector<std::uint64_t> b{0};
    for (std::uint64_t i = 1; i < parts; ++i) b.push_back(rng() % (n + 1));
    b.push_back(n);
    std::sort(b.begin(), b.end());
    return b;
  };
  RowTallySpec spec;
  spec.buckets = bounds(1 + rng() % 1500);
  spec.groups = bounds(1 + rng() % 16);
  const std::uint32_t moduli[] = {1, 16, 7, 100};
  spec.hash_mod = moduli[rng() % 4];
  spec.fold.resize(std::size_t{1} << (spec.groups.size() - 1));
  for (std::size_t x = 1; x < spec.fold.size(); ++x)
    spec.fold[x] = static_cast<std::uint32_t>(rng());
  ASSERT_TRUE(sorter->start_tally(spec));
  const RowTallySums got = sorter->finish_tally();
  sorter->release();
  const RowTallySums want = tally_rows_reference(spec, n, offsets.data(), cols.data());
  EXPECT_EQ(got.pairs, want.pairs);
  EXPECT_EQ(got.hashed, want.hashed);
  EXPECT_EQ(got.both, want.both);
  EXPECT_EQ(got.marked, want.marked);
  EXPECT_EQ(got.marked_out, want.marked_out);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RowTallyGpu, ::testing::Range<std::uint64_t>(1, 9));

TEST(EdgeSorterGpuCli, GenerateOnDeviceZeroAndCpuWriteTheSameFile) {
  SKIP_WITHOUT_GPU();
  TempDir d;
  const std::string gen = "generate kronecker --scale 17 -q --json -o ";
  const test::RunResult c = run_cli(gen + q(d.file("c.tcsr")) + " --device cpu");
  ASSERT_EQ(c.status, 0) << c.err;
  const test::RunResult g = run_cli(gen + q(d.file("g.tcsr")) + " --device 0");
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.out.find("\"sorter\":\"CUDA device 0"), std::string::npos) << g.out;
  EXPECT_EQ(read_text(d.file("g.tcsr")), read_text(d.file("c.tcsr")));
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
