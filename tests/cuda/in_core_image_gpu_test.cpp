// in_core_image_gpu_test.cpp — `count` on the GPU with the in-core image (stream/in_core_image.hpp:
// the graph decoded while the CUDA context is created, uploaded from it in core, its chunks
// copied out of core, the degrees taken from it) gives exactly what it gives without one
// (TRISTREAM_NO_IN_CORE_IMAGE=1): triangles, transitivity, per-vertex counts and clustering, in
// core and at a quarter of the footprint, where the plan is made beside the device's startup;
// row pieces, also counted by several GPUs that claim rows (label gpu; skipped without a GPU).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"
#include "tristream/plan.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

CountResult count_with_and_without(const std::string& path, CountOptions o, bool image) {
  if (image)
    ::unsetenv("TRISTREAM_NO_IN_CORE_IMAGE");
  else
    ::setenv("TRISTREAM_NO_IN_CORE_IMAGE", "1", 1);
  CountResult r = count(path, o);
  ::unsetenv("TRISTREAM_NO_IN_CORE_IMAGE");
  return r;
}

// A skewed graph of n vertices and m edges plus a hub adjacent to every step-th vertex, oriented
// and written to dir/g.tcsr in chunks of chunk_bytes (many chunks).
OrientedGraph hubbed_file(const test::TempDir& dir, vid_t n, std::uint64_t m, std::uint64_t seed,
                          vid_t hub, vid_t step, std::uint64_t chunk_bytes) {
  test::EdgeList e = test::skewed_graph(n, m, seed);
  for (vid_t v = 1; v < n; v += step) e.emplace_back(hub, v);
  OrientedGraph g = orient_edge_list(n, e);
  tcsr::WriteOptions wo;
  wo.chunk_bytes = chunk_bytes;
  tcsr::write_file(dir.file("g.tcsr"), g, wo);
  return g;
}

// A CUDA count's options: per-vertex counts or not, a device budget (0: the free memory).
CountOptions cuda_options(bool per_vertex, std::uint64_t gpu_memory) {
  CountOptions o;
  o.backend = "cuda";
  o.per_vertex = per_vertex;
  o.gpu_memory = gpu_memory;
  return o;
}

TEST(InCoreImageGpu, TheSameFiguresWithAndWithoutTheImage) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  test::TempDir tmp;
  const OrientedGraph g = hubbed_file(tmp, 20000, 300000, 41, 0, 2, 64 << 10);
  const count_t want = make_cpu_counter()->count(g.csr.view());
  for (bool per_vertex : {false, true}) {
    const std::uint64_t quarter = in_core_bytes(g.n(), g.m(), per_vertex) / 4;
    for (std::uint64_t gpu_memory : {std::uint64_t{0}, quarter}) {
      SCOPED_TRACE(std::string(per_vertex ? "per vertex" : "count") +
                   (gpu_memory ? ", out of core" : ", in core"));
      CountOptions o = cuda_options(per_vertex, gpu_memory);
      o.clustering = per_vertex;
      const CountResult with = count_with_and_without(tmp.file("g.tcsr"), o, true);
      const CountResult without = count_with_and_without(tmp.file("g.tcsr"), o, false);
      EXPECT_EQ(with.triangles, want);
      EXPECT_EQ(without.triangles, want);
      EXPECT_EQ(with.transitivity, without.transitivity);  // the same double
      EXPECT_EQ(with.per_vertex, without.per_vertex);
      EXPECT_EQ(with.degrees, without.degrees);
      EXPECT_EQ(with.clustering, without.clustering);
      EXPECT_EQ(with.average_clustering, without.average_clustering);
      if (!gpu_memory) {
        EXPECT_GT(with.timing.image, 0.0) << "the image was used in core";
      }
      EXPECT_EQ(without.timing.image, 0.0);
      // out of core with --gpu-memory the plan is made beside the startup (with the image)
      if (gpu_memory) {
        EXPECT_GT(with.timing.plan_ahead, 0.0) << "the plan made ahead was used";
      }
      EXPECT_EQ(without.timing.plan_ahead, 0.0);
    }
  }
}

// Host memory registered in pieces of one page or 64 KiB (TRISTREAM_REGISTER_PIECE_BYTES; 32 MiB
// by default, which these graphs do not cross): every upload from the in-core image, in core and
// out of core from pair's views, and from the views' offsets crosses pieces and is split at
// their edges. The figures equal the CPU counter's and those of the default pieces (a copy that
// crossed two registrations would fail).
TEST(InCoreImageGpu, UploadsCrossingRegistrationPiecesAreExact) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  test::TempDir tmp;
  const OrientedGraph g = hubbed_file(tmp, 30000, 400000, 61, 3, 5, 32 << 10);
  const count_t want = make_cpu_counter()->count(g.csr.view());
  for (bool per_vertex : {false, true}) {
    // (per vertex, a pair unit's arrays span every vertex: half the footprint)
    const std::uint64_t part = in_core_bytes(g.n(), g.m(), per_vertex) / (per_vertex ? 2 : 4);
    for (std::uint64_t gpu_memory : {std::uint64_t{0}, part}) {
      SCOPED_TRACE(std::string(per_vertex ? "per vertex" : "count") +
                   (gpu_memory ? ", pair out of core" : ", in core"));
      CountOptions o = cuda_options(per_vertex, gpu_memory);
      o.scheme = gpu_memory ? "pair" : "auto";
      const CountResult usual = count(tmp.file("g.tcsr"), o);
      EXPECT_EQ(usual.triangles, want);
      for (const char* piece : {"4096", "65536"}) {
        SCOPED_TRACE(piece);
        ::setenv("TRISTREAM_REGISTER_PIECE_BYTES", piece, 1);
        const CountResult small = count(tmp.file("g.tcsr"), o);
        ::unsetenv("TRISTREAM_REGISTER_PIECE_BYTES");
        EXPECT_EQ(small.triangles, want);
        EXPECT_EQ(small.per_vertex, usual.per_vertex);
        if (gpu_memory) {
          EXPECT_NE(small.stats.find("\"scheme\":\"pair\""), std::string::npos) << small.stats;
        }
      }
    }
  }
}

// Several workers (--devices 0,0 and all) copy from memory that the first GPU's backend
// registered: the in-core image (with TRISTREAM_IN_CORE_SLICES=1 each GPU counts a slice of it
// from where it lies; by default one GPU counts it whole) and the host
// block store's arena, which every worker reads out of core. With registrations of one page, a
// second worker's copies cross pieces it did not register itself; they are split like the first
// worker's (one registry for the process; a copy that crossed two registrations failed with
// "invalid argument" on a machine of four GPUs).
TEST(InCoreImageGpu, EveryWorkersCopiesCrossingRegistrationPiecesAreExact) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  test::TempDir tmp;
  const OrientedGraph g = hubbed_file(tmp, 30000, 400000, 67, 5, 3, 32 << 10);
  const count_t want = make_cpu_counter()->count(g.csr.view());
  CountOptions base = cuda_options(true, 0);
  const CountResult one = count(tmp.file("g.tcsr"), base);
  ASSERT_EQ(one.triangles, want);
  const std::uint64_t half = in_core_bytes(g.n(), g.m(), true) / 2;
  for (const char* devices : {"0,0", "all", "all sliced"})
    for (std::uint64_t gpu_memory : {std::uint64_t{0}, half})
      for (const char* scheme : {"range", "pair"}) {
        if (!gpu_memory && std::string(scheme) != "range") continue;  // (in core: one unit)
        SCOPED_TRACE(std::string(devices) + (gpu_memory ? " out of core " : " in core ") + scheme);
        CountOptions o = cuda_options(true, gpu_memory);
        const bool sliced = std::string(devices) == "all sliced";
        o.devices = sliced ? "all" : devices;
        o.scheme = scheme;
        ::setenv("TRISTREAM_REGISTER_PIECE_BYTES", "4096", 1);
        if (sliced) ::setenv("TRISTREAM_IN_CORE_SLICES", "1", 1);
        const CountResult r = count(tmp.file("g.tcsr"), o);
        ::unsetenv("TRISTREAM_REGISTER_PIECE_BYTES");
        ::unsetenv("TRISTREAM_IN_CORE_SLICES");
        EXPECT_EQ(r.triangles, want);
        EXPECT_EQ(r.per_vertex, one.per_vertex);
        // ("all" on a machine of one GPU is one worker: the single backend's path)
        if (std::string(devices) == "0,0" || cuda_device_count() > 1) {
          EXPECT_NE(r.stats.find("\"workers\""), std::string::npos) << r.stats;
        }
      }
}

// The kernel spans of a count's stats (one per row piece's count).
std::uint64_t kernel_spans(const CountResult& r) {
  const std::string& s = r.stats;
  for (auto k = s.find("\"kernel\""); k != std::string::npos; k = s.find("\"kernel\"", k + 1)) {
    auto c = s.find_first_not_of(" :", k + 8);
    if (c == std::string::npos || s[c] != '{') continue;  // (not the stage's object)
    const auto sp = s.find("\"spans\"", c);
    const auto d = sp == std::string::npos ? sp : s.find_first_of("0123456789", sp);
    return d == std::string::npos ? 0 : std::stoull(s.substr(d));
  }
  return 0;
}

// The in-core image streamed in row pieces (TRISTREAM_IN_CORE_PIECES=1: at any size; each
// piece counted as soon as its rows are on the device) gives exactly the figures of the whole
// upload (=0), with `auto`, `trust:in`, `trust:lite` and `trust`, with and without per-vertex
// counts.
TEST(InCoreImageGpu, RowPiecesGiveTheWholeCountsFigures) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  test::TempDir tmp;
  const OrientedGraph g = hubbed_file(tmp, 30000, 400000, 59, 7, 3, 16 << 10);
  std::vector<count_t> want_pv(g.n(), 0);
  const count_t want = make_cpu_counter()->count(
      g.csr.view(), PerVertexOut{want_pv.data(), want_pv.data(), want_pv.data()});
  for (const char* kernel : {"auto", "trust:in", "trust:lite", "trust"}) {
    for (bool per_vertex : {false, true}) {
      SCOPED_TRACE(std::string(kernel) + (per_vertex ? ", per vertex" : ""));
      CountOptions o = cuda_options(per_vertex, 0);
      o.kernel = kernel;
      ::setenv("TRISTREAM_IN_CORE_PIECES", "1", 1);
      const CountResult pieces = count(tmp.file("g.tcsr"), o);
      ::setenv("TRISTREAM_IN_CORE_PIECES", "0", 1);
      const CountResult whole = count(tmp.file("g.tcsr"), o);
      ::unsetenv("TRISTREAM_IN_CORE_PIECES");
      EXPECT_EQ(pieces.triangles, want);
      EXPECT_EQ(whole.triangles, want);
      EXPECT_EQ(pieces.transitivity, whole.transitivity);
      EXPECT_EQ(pieces.per_vertex, whole.per_vertex);
      if (std::string(kernel) != "auto") {  // (auto: where it picks trust:in or trust:lite)
        EXPECT_GE(kernel_spans(pieces), 2u) << pieces.stats;
      }
      EXPECT_EQ(kernel_spans(whole), 1u) << whole.stats;
    }
  }
}

// Several GPUs that each stream the in-core image in row pieces and count the rows they claim
// (stream/row_claims.hpp; here two workers on one device, TRISTREAM_IN_CORE_CLAIMS=2, and the
// split's threshold at any count) give one GPU's figures, with `trust:in` and `trust:lite`, with
// and without per-vertex counts; the plan says the rows were claimed.
TEST(InCoreImageGpu, GpusThatClaimRowsGiveOneGpusFigures) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped";
  test::TempDir tmp;
  const OrientedGraph g = hubbed_file(tmp, 30000, 400000, 71, 11, 3, 16 << 10);
  const count_t want = make_cpu_counter()->count(g.csr.view());
  for (const char* kernel : {"trust:in", "trust:lite"}) {
    for (bool per_vertex : {false, true}) {
      SCOPED_TRACE(std::string(kernel) + (per_vertex ? ", per vertex" : ""));
      CountOptions o = cuda_options(per_vertex, 0);
      o.kernel = kernel;
      ::setenv("TRISTREAM_IN_CORE_PIECES", "1", 1);
      const CountResult one = count(tmp.file("g.tcsr"), o);
      o.devices = "0,0";
      ::setenv("TRISTREAM_IN_CORE_CLAIMS", "2", 1);
      ::setenv("TRISTREAM_IN_CORE_SPLIT", "1e-12", 1);
      const CountResult two = count(tmp.file("g.tcsr"), o);
      ::unsetenv("TRISTREAM_IN_CORE_CLAIMS");
      ::unsetenv("TRISTREAM_IN_CORE_SPLIT");
      ::unsetenv("TRISTREAM_IN_CORE_PIECES");
      EXPECT_EQ(one.triangles, want);
      EXPECT_EQ(two.triangles, want);
      EXPECT_EQ(two.transitivity, one.transitivity);
      EXPECT_EQ(two.per_vertex, one.per_vertex);
      EXPECT_NE(two.plan.find("count the rows they claim"), std::string::npos) << two.plan;
      EXPECT_NE(two.stats.find("\"workers\""), std::string::npos) << two.stats;
    }
  }
}

}  // namespace
}  // namespace tristream
