// ranks_gpu_test.cpp — `mpirun -np 2 tristream count` on the CUDA backend (the ranks take GPUs
// local rank mod GPUs: both GPU 0 on a machine of one): in core, where each rank counts a slice
// of the one unit from the in-core image it decoded while its device started, and at half the
// in-core footprint with pair, the count and the per-vertex file equal one process's; and in core
// with the ranks claiming the unit's rows (label gpu; skipped without a GPU, mpirun or a build
// with MPI).
#include <gtest/gtest.h>

#include <string>

#include "mpi_util.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"

namespace tristream::test {
namespace {

// Why these tests cannot run here (empty: they can).
std::string why_skipped() {
#ifndef TRISTREAM_TEST_MPI
  return "tristream was built without MPI (TRISTREAM_ENABLE_MPI), or with a sanitizer";
#else
  if (cuda_device_count() == 0) return "no usable CUDA device: gpu test skipped";
  if (!have_mpirun()) return "mpirun is not installed (scripts/deps.sh installs it)";
  return "";
#endif
}

// A skewed graph of 30,000 vertices and 400,000 edges converted to dir/g.tcsr (its path).
std::string converted_graph(const TempDir& dir, std::uint64_t seed) {
  const std::string el = dir.file("g.el"), g = dir.file("g.tcsr");
  write_edge_list(el, skewed_graph(30000, 400000, seed));
  const RunResult r = run_cli("convert " + q(el) + " -o " + q(g) + " -q");
  EXPECT_EQ(r.status, 0) << r.err;
  return g;
}

TEST(RanksGpu, TwoRanksCountLikeOneProcessInCoreAndOutOfCore) {
  const std::string why = why_skipped();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir tmp;
  const std::string g = converted_graph(tmp, 23);
  const RunResult plan =
      run_cli("plan " + q(g) + " --parts 1 --gpu-memory 1024T --per-vertex --json");
  ASSERT_EQ(plan.status, 0) << plan.err;
  const std::string footprint = json_field(plan.out, "device_bytes");
  ASSERT_FALSE(footprint.empty()) << plan.out;
  const std::string ref_pv = tmp.file("ref.csv");
  const RunResult ref =
      run_cli("count " + q(g) + " --backend cuda --json --per-vertex " + q(ref_pv));
  ASSERT_EQ(ref.status, 0) << ref.err;
  for (const bool in_core : {true, false}) {
    SCOPED_TRACE(in_core ? "in core" : "pair at half the footprint");
    const std::string budget =
        in_core ? "" : " --scheme pair --gpu-memory " + std::to_string(std::stoull(footprint) / 2);
    const std::string pv = tmp.file("pv.csv");
    const RunResult r = run_mpi("-np 2 --bind-to none {bin} count " + q(g) +
                                " --backend cuda --json --per-vertex " + q(pv) + budget);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json_field(r.out, "triangles"), json_field(ref.out, "triangles")) << r.out;
    EXPECT_EQ(json_field(r.out, "ranks"), "2") << r.out;
    EXPECT_EQ(read_text(pv), read_text(ref_pv));
    if (in_core) {
      // rank 0 decoded the in-core image (as each rank does in core)
      EXPECT_NE(json_field(r.out, "image"), "0") << r.out;
    }
  }
}

// In core with the ranks claiming the unit's rows (stream/row_claims.hpp; both ranks on GPU 0
// here, which TRISTREAM_IN_CORE_CLAIMS=2 allows, each streaming its image in row pieces at any
// size, the split's threshold at any count): the count and the per-vertex file equal one
// process's, and the plan says the rows were claimed.
TEST(RanksGpu, TwoRanksClaimingTheInCoreRowsCountLikeOneProcess) {
  const std::string why = why_skipped();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir tmp;
  const std::string g = converted_graph(tmp, 29);
  const std::string ref_pv = tmp.file("ref.csv"), pv = tmp.file("pv.csv");
  const RunResult ref = run_cli(
      "count " + q(g) + " --backend cuda --kernel trust:in --json --per-vertex " + q(ref_pv));
  ASSERT_EQ(ref.status, 0) << ref.err;
  const RunResult r = run_mpi(
      "-np 2 --bind-to none -x TRISTREAM_IN_CORE_CLAIMS=2 -x TRISTREAM_IN_CORE_PIECES=1 "
      "-x TRISTREAM_IN_CORE_SPLIT=1e-12 {bin} count " +
      q(g) + " --backend cuda --kernel trust:in --json --per-vertex " + q(pv));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_field(r.out, "triangles"), json_field(ref.out, "triangles")) << r.out;
  EXPECT_EQ(json_field(r.out, "ranks"), "2") << r.out;
  EXPECT_EQ(read_text(pv), read_text(ref_pv));
  EXPECT_NE(r.out.find("count the rows they claim"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tristream::test
