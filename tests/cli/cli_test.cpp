// cli_test.cpp — the tristream binary end to end: the quickstart graph, exit statuses, error
// messages, --help, --json, per-vertex output and clean-up of temporaries.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "test_util.hpp"
#include "tristream/counter.hpp"

namespace tristream {
namespace {

using test::run_cli;

using test::q;

// Extracts an unsigned integer field from a flat JSON object.
std::uint64_t json_uint(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\":([0-9]+)");
  if (!std::regex_search(json, m, re)) {
    ADD_FAILURE() << "no key " << key << " in " << json;
    return ~0ull;
  }
  return std::stoull(m[1]);
}

TEST(Cli, UsageAndHelp) {
  auto r = run_cli("");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("usage: tristream"), std::string::npos);
  r = run_cli("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("convert"), std::string::npos);
  for (const char* cmd : {"convert", "count", "info", "generate", "plan"}) {
    r = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("usage: tristream " + std::string(cmd)), std::string::npos) << cmd;
  }
  r = run_cli("frobnicate");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: unknown command 'frobnicate'"), std::string::npos);
}

TEST(Cli, BadOptionsAreUsageErrors) {
  const std::string karate = q(test::data_file("karate.el"));
  auto r = run_cli("count " + karate + " --no-such-option");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  r = run_cli("count " + karate + " --backend quantum");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("unknown backend 'quantum'"), std::string::npos) << r.err;
  r = run_cli("count " + karate + " --threads many");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
  r = run_cli("count");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing INPUT"), std::string::npos) << r.err;
  // --parts beyond the supported 4096 (or 2^32 + 1, which a 32-bit field would read as 1)
  for (const char* cmd : {"count", "plan"})
    for (const char* parts : {"4097", "4294967297"}) {
      r = run_cli(std::string(cmd) + " " + karate + " --backend cpu --parts " + parts);
      EXPECT_EQ(r.status, 1) << cmd << " " << parts;
      EXPECT_NE(r.err.find("--parts: expected an integer in 1..4096"), std::string::npos) << r.err;
    }
}

TEST(Cli, CountsKarateFromEdgeListAndTcsr) {
  test::TempDir tmp;
  const std::string karate = q(test::data_file("karate.el"));
  auto r = run_cli("count " + karate + " --backend cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_uint(r.out, "triangles"), 45u);
  EXPECT_EQ(json_uint(r.out, "vertices"), 34u);
  EXPECT_EQ(json_uint(r.out, "edges"), 78u);
  EXPECT_NE(r.out.find("\"backend\":\"cpu\""), std::string::npos);
  EXPECT_NE(r.out.find("\"seconds\":"), std::string::npos);
  // the plan's units in flight and tail cover, the stats' chunk cache high-water mark
  for (const char* key : {"\"in_flight\":", "\"tail_cover_units\":", "\"tail_cover_slices\":",
                          "\"chunk_cache_peak_bytes\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;

  const std::string out = tmp.file("karate.tcsr");
  r = run_cli("convert " + karate + " -o " + q(out) + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("count " + q(out) + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("triangles     45"), std::string::npos) << r.out;
  // Short and long forms of --quiet are both accepted (every command documents -q).
  r = run_cli("count " + q(out) + " --backend cpu -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("triangles     45"), std::string::npos) << r.out;
  r = run_cli("convert " + karate + " -o " + q(tmp.file("k2.tcsr")) + " -q");
  ASSERT_EQ(r.status, 0) << r.err;

  r = run_cli("info " + q(out) + " --check --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_uint(r.out, "vertices"), 34u);
  EXPECT_EQ(json_uint(r.out, "edges"), 78u);
  EXPECT_EQ(json_uint(r.out, "max_degree"), 17u);
  EXPECT_NE(r.out.find("\"check\":\"ok\""), std::string::npos);
  r = run_cli("info " + q(out));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("vertices          34"), std::string::npos) << r.out;
}

// convert reports the memory limit it kept to and the process's peak, in JSON and as text.
TEST(Cli, ConvertReportsItsMemoryLimitAndPeak) {
  test::TempDir tmp;
  const std::string karate = q(test::data_file("karate.el"));
  auto r =
      run_cli("convert " + karate + " -o " + q(tmp.file("k.tcsr")) + " --json --memory-limit 64M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_uint(r.out, "memory_limit_bytes"), std::uint64_t{64} << 20) << r.out;
  EXPECT_GT(json_uint(r.out, "host_peak_bytes"), 0u) << r.out;  // (VmHWM: Linux has it)
  r = run_cli("convert " + karate + " -o " + q(tmp.file("k2.tcsr")) + " --memory-limit 1G");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("memory          peak "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" MiB (limit 1.0 GiB)"), std::string::npos) << r.out;
}

TEST(Cli, ConvertDeviceChoices) {
  test::TempDir tmp;
  const std::string karate = q(test::data_file("karate.el"));
  const std::string out = " -o " + q(tmp.file("k.tcsr"));
  // cpu, and auto for a file this small: the host's sorts.
  for (const char* device : {"cpu", "auto"}) {
    auto r = run_cli("convert " + karate + out + " --device " + device);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("sorted on       host\n"), std::string::npos) << device << ": " << r.out;
  }
  auto r = run_cli("convert " + karate + out + " --device gpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--device gpu: expected auto, cpu or a CUDA device number"),
            std::string::npos)
      << r.err;
  r = run_cli("convert " + karate + out + " --device " + std::to_string(cuda_device_count()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(built_with_cuda() ? (cuda_device_count() ? "CUDA device(s), numbered from 0"
                                                                : "no CUDA device is usable")
                                         : "built without CUDA"),
            std::string::npos)
      << r.err;
}

TEST(Cli, GenerateDeviceChoices) {
  test::TempDir tmp;
  const std::string gen = "generate kronecker --scale 10 -o " + q(tmp.file("k.tcsr"));
  // cpu, and auto for a graph this small: the host's sorts.
  for (const char* device : {"cpu", "auto"}) {
    auto r = run_cli(gen + " --device " + device);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("sorted on       host\n"), std::string::npos) << device << ": " << r.out;
  }
  auto r = run_cli(gen + " --device gpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--device gpu: expected auto, cpu or a CUDA device number"),
            std::string::npos)
      << r.err;
}

TEST(Cli, OtherBundledGraphs) {
  const std::map<std::string, std::uint64_t> expected = {{"petersen.el", 0}, {"k5_messy.el", 10}};
  for (const auto& [name, triangles] : expected) {
    auto r = run_cli("count " + q(test::data_file(name)) + " --backend cpu --json");
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(json_uint(r.out, "triangles"), triangles) << name;
  }
}

TEST(Cli, PerVertexOutputUsesOriginalIds) {
  test::TempDir tmp;
  const std::string pv = tmp.file("pv.csv");
  auto r = run_cli("count " + q(test::data_file("karate.el")) + " --backend cpu --per-vertex " +
                   q(pv) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  // Reference: read karate.el with 1-based ids.
  test::EdgeList e;
  std::ifstream in(test::data_file("karate.el"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    unsigned a, b;
    s >> a >> b;
    e.emplace_back(a, b);
  }
  const auto expect = test::brute_force_per_vertex(35, e);
  std::vector<unsigned> degree(35, 0);
  for (const auto& [a, b] : e) ++degree[a], ++degree[b];
  std::ifstream got(pv);
  std::getline(got, line);
  EXPECT_EQ(line, "vertex,degree,triangles,clustering");
  unsigned rows = 0, last = 0;
  while (std::getline(got, line)) {
    unsigned id, deg, count;
    double cc;
    char c1, c2, c3;
    std::istringstream s(line);
    ASSERT_TRUE(s >> id >> c1 >> deg >> c2 >> count >> c3 >> cc) << line;
    ASSERT_EQ(c1, ',');
    ASSERT_LT(id, 35u);
    EXPECT_GT(id, last) << "rows ordered by original id";
    last = id;
    EXPECT_EQ(deg, degree[id]) << "vertex " << id;
    EXPECT_EQ(count, expect[id]) << "vertex " << id;
    const double want = deg < 2 ? 0.0 : 2.0 * expect[id] / (double(deg) * (deg - 1));
    EXPECT_DOUBLE_EQ(cc, want) << "vertex " << id;
    ++rows;
  }
  EXPECT_EQ(rows, 34u);
  EXPECT_NE(r.out.find("\"average_clustering\":0.57"), std::string::npos) << r.out;
}

TEST(Cli, MissingAndDamagedInputs) {
  test::TempDir tmp;
  auto r = run_cli("count " + q(tmp.file("nope.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("nope.tcsr"), std::string::npos) << r.err;

  const std::string good = tmp.file("k.tcsr");
  ASSERT_EQ(run_cli("convert " + q(test::data_file("karate.el")) + " -o " + q(good)).status, 0);
  const auto size = std::filesystem::file_size(good);
  const std::string cut = tmp.file("cut.tcsr");
  std::filesystem::copy_file(good, cut);
  std::filesystem::resize_file(cut, size / 2);
  r = run_cli("count " + q(cut) + " --backend cpu");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find("cut.tcsr"), std::string::npos) << r.err;
  r = run_cli("info " + q(cut) + " --check");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

// count checks the row offsets' checksum beside the count (OpenOptions::offsets_checksum_later):
// a file whose stored checksum disagrees with its offsets (every other check intact) is still an
// input error, with no figures printed.
TEST(Cli, CountOfDamagedOffsetsPrintsNoFigures) {
  test::TempDir tmp;
  const std::string g = tmp.file("k.tcsr");
  ASSERT_EQ(run_cli("convert " + q(test::data_file("karate.el")) + " -o " + q(g) + " -q").status,
            0);
  ASSERT_EQ(run_cli("count " + q(g) + " --backend cpu -q").status, 0);
  test::flip_offsets_checksum(g);
  const auto r = run_cli("count " + q(g) + " --backend cpu --json");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(g + ": section row offsets: checksum mismatch"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("triangles"), std::string::npos) << r.out;
}

TEST(Cli, BadEdgeListNamesFileAndLine) {
  test::TempDir tmp;
  const std::string bad = tmp.file("bad.el");
  test::write_text(bad, "# comment\n1 2\n3 x\n");
  const std::string out = tmp.file("bad.tcsr");
  auto r = run_cli("convert " + q(bad) + " -o " + q(out));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.el:3:"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run_cli("count " + q(bad) + " --backend cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.el:3:"), std::string::npos) << r.err;
}

TEST(Cli, CountLeavesNoTemporaries) {
  test::TempDir tmp;
  auto r = run_cli("count " + q(test::data_file("karate.el")) + " --backend cpu --tmp-dir " +
                   q(tmp.path()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(Cli, CudaBackendWithoutAGpuIsAClearError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  auto r = run_cli("count " + q(test::data_file("karate.el")) + " --backend cuda");
  if (built_with_cuda()) {
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no usable CUDA device"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("built without CUDA"), std::string::npos) << r.err;
  }
  // auto falls back to the CPU.
  r = run_cli("count " + q(test::data_file("karate.el")) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"backend\":\"cpu\""), std::string::npos);
}

}  // namespace
}  // namespace tristream
