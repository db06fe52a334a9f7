// format_measure_test.cpp — the delta-coding measurement recorded in formats/FORMAT.md.
// Disabled by default (it takes tens of seconds); run it with
//   ./cpu_format_measure_test --gtest_also_run_disabled_tests
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "test_util.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(FormatMeasure, DISABLED_DeltaVersusPlain) {
  const vid_t n = 1 << 20;
  const std::uint64_t m = 6'000'000;
  test::TempDir dir;
  std::printf("%-8s %-6s %10s %12s %8s %10s %10s\n", "graph", "coding", "edges", "adj bytes",
              "ratio", "write MB/s", "read MB/s");
  for (bool skewed : {false, true}) {
    const OrientedGraph g =
        orient_edge_list(n, skewed ? test::skewed_graph(n, m, 42) : test::random_graph(n, m, 42));
    const double raw_mb = static_cast<double>(g.m()) * sizeof(vid_t) / 1e6;
    for (bool delta : {false, true}) {
      tcsr::WriteOptions opt;
      opt.delta = delta;
      opt.threads = 1;
      opt.chunk_bytes = 1 << 20;  // several chunks even at this size
      const std::string path = dir.file(delta ? "delta.tcsr" : "plain.tcsr");
      auto t0 = std::chrono::steady_clock::now();
      tcsr::write_file(path, g, opt);
      const double write_s = seconds_since(t0);
      tcsr::Reader r(path);
      std::uint64_t compressed = 0;
      for (const auto& c : r.chunks()) compressed += c.compressed_size;
      double read_s = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        t0 = std::chrono::steady_clock::now();
        const OrientedGraph back = r.load(false, 1);
        read_s = std::min(read_s, seconds_since(t0));
        ASSERT_EQ(back.csr.cols, g.csr.cols);
      }
      std::printf("%-8s %-6s %10llu %12llu %8.2f %10.0f %10.0f\n", skewed ? "skewed" : "random",
                  delta ? "delta" : "plain", static_cast<unsigned long long>(g.m()),
                  static_cast<unsigned long long>(compressed), raw_mb * 1e6 / compressed,
                  raw_mb / write_s, raw_mb / read_s);
    }
  }
}

}  // namespace
}  // namespace tristream
