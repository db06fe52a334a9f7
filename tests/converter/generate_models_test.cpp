// generate_models_test.cpp — the graph-shape models of `generate` (powerlaw, mesh, community,
// hub, Kronecker with a heavier initiator): determinism across thread counts, closed-form
// triangle counts (meshes, planted cliques), exact counts against the brute force, degree
// shapes, and the CLI's options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

using test::run_cli;
using test::TempDir;
using Raw = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

using test::q;

GenerateOptions model(const char* kind, unsigned scale, unsigned threads = 2) {
  GenerateOptions g;
  g.kind = kind;
  g.scale = scale;
  g.edge_factor = 8;
  g.threads = threads;
  g.seed = 3;
  return g;
}

test::EdgeList narrow(const Raw& raw) {
  test::EdgeList e;
  for (auto [u, v] : raw) e.emplace_back(static_cast<vid_t>(u), static_cast<vid_t>(v));
  return e;
}

// Degrees of the cleaned simple graph (self-loops and repeats dropped).
std::vector<std::uint64_t> degrees(const Raw& raw, std::uint64_t n) {
  Raw e;
  for (auto [u, v] : raw)
    if (u != v) e.emplace_back(std::min(u, v), std::max(u, v));
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  std::vector<std::uint64_t> d(n, 0);
  for (auto [u, v] : e) {
    ++d[u];
    ++d[v];
  }
  return d;
}

std::uint64_t max_of(const std::vector<std::uint64_t>& d) {
  return *std::max_element(d.begin(), d.end());
}
double mean_of(const std::vector<std::uint64_t>& d) {
  double s = 0;
  for (auto x : d) s += static_cast<double>(x);
  return s / static_cast<double>(d.size());
}

// Converts in memory and counts with the CPU counter.
count_t count_generated(const GenerateOptions& g, const TempDir& d) {
  ConvertOptions c;
  c.quiet = true;
  generate(g, d.file("g.tcsr"), c);
  tcsr::Reader r(d.file("g.tcsr"));
  return make_cpu_counter()->count(r.load().csr.view());
}

std::uint64_t choose3(std::uint64_t k) {
  return k < 3 ? 0 : k * (k - 1) * (k - 2) / 6;
}

GenerateOptions heavy_kronecker(unsigned scale) {
  GenerateOptions g = model("kronecker", scale);
  g.kronecker_a = 0.75;
  g.kronecker_b = 0.1;
  g.kronecker_c = 0.1;
  return g;
}

std::vector<GenerateOptions> every_new_model(unsigned scale) {
  std::vector<GenerateOptions> out;
  for (const char* k : {"powerlaw", "mesh", "community", "hub"}) out.push_back(model(k, scale));
  GenerateOptions mesh3 = model("mesh", scale);
  mesh3.dimensions = 3;
  out.push_back(mesh3);
  out.push_back(heavy_kronecker(scale));
  return out;
}

TEST(GenerateModels, DeterministicWhateverTheThreadCount) {
  for (GenerateOptions g : every_new_model(12)) {
    g.threads = 1;
    const Raw one = generate_edges(g);
    EXPECT_GT(one.size(), 1000u) << g.kind;
    for (unsigned t : {2u, 3u, 8u}) {
      g.threads = t;
      EXPECT_EQ(generate_edges(g), one) << g.kind << " threads " << t;
    }
    for (auto [u, v] : one) {
      ASSERT_LT(u, 1u << 12) << g.kind;
      ASSERT_LT(v, 1u << 12) << g.kind;
    }
    g.seed = 4;
    if (g.kind != "mesh") {
      EXPECT_NE(generate_edges(g), one) << g.kind;
    }
  }
}

TEST(GenerateModels, TcsrBytesIndependentOfThreadsAndMemory) {
  TempDir d;
  for (GenerateOptions g : every_new_model(13)) {
    ConvertOptions c;
    c.quiet = true;
    g.threads = c.threads = 1;
    generate(g, d.file("a.tcsr"), c);
    g.threads = c.threads = 3;
    c.memory_limit = 64 << 10;
    c.tmp_dir = d.path();
    EXPECT_TRUE(generate(g, d.file("b.tcsr"), c).out_of_core) << g.kind;
    EXPECT_EQ(test::read_text(d.file("a.tcsr")), test::read_text(d.file("b.tcsr"))) << g.kind;
  }
}

TEST(GenerateModels, Mesh2DTriangleCountIsClosedForm) {
  TempDir d;
  for (unsigned scale : {2u, 7u, 12u}) {
    GenerateOptions g = model("mesh", scale);
    // Sides 2^floor(S/2) by 2^ceil(S/2); a triangle per half cell.
    const std::uint64_t R = std::uint64_t{1} << (scale / 2), C = (std::uint64_t{1} << scale) / R;
    const Raw raw = generate_edges(g);
    EXPECT_EQ(raw.size(), R * (C - 1) + (R - 1) * C + (R - 1) * (C - 1));
    EXPECT_EQ(count_generated(g, d), 2 * (R - 1) * (C - 1)) << scale;
    EXPECT_EQ(max_of(degrees(raw, R * C)), scale >= 4 ? 6u : 3u);
  }
}

TEST(GenerateModels, Mesh3DTriangleCountIsClosedForm) {
  TempDir d;
  for (unsigned scale : {3u, 9u, 11u}) {
    GenerateOptions g = model("mesh", scale);
    g.dimensions = 3;
    std::uint64_t a = std::uint64_t{1} << (scale / 3);
    std::uint64_t b = std::uint64_t{1} << ((scale - scale / 3) / 2);
    std::uint64_t c = (std::uint64_t{1} << scale) / a / b;
    // Two triangles on each face diagonal's square, six on each cube's long diagonal.
    const std::uint64_t want =
        2 * ((a - 1) * (b - 1) * c + (a - 1) * b * (c - 1) + a * (b - 1) * (c - 1)) +
        6 * (a - 1) * (b - 1) * (c - 1);
    EXPECT_EQ(count_generated(g, d), want) << scale;
    const Raw raw = generate_edges(g);
    EXPECT_EQ(count_generated(g, d), test::brute_force_triangles(a * b * c, narrow(raw)));
    if (scale >= 6) {
      EXPECT_EQ(max_of(degrees(raw, a * b * c)), 14u);
    }
  }
}

TEST(GenerateModels, CommunityWithPinOneIsDisjointCliques) {
  TempDir d;
  GenerateOptions g = model("community", 10);
  g.communities = 100;  // 1024 = 24 groups of 11 + 76 of 10
  g.p_in = 1;
  g.p_out = 0;
  const Raw raw = generate_edges(g);
  EXPECT_EQ(raw.size(), 24u * 55 + 76u * 45);
  EXPECT_EQ(count_generated(g, d), 24 * choose3(11) + 76 * choose3(10));
  g.communities = 1;  // one clique of all 2^10 vertices
  EXPECT_EQ(count_generated(g, d), choose3(1024));
}

TEST(GenerateModels, CommunityDensitiesMatchTheirProbabilities) {
  GenerateOptions g = model("community", 14);
  g.communities = 256;  // groups of 64: 256 * 2016 pairs inside
  g.p_in = 0.3;
  g.p_out = 0.001;
  const Raw raw = generate_edges(g);
  std::uint64_t inside = 0;
  for (auto [u, v] : raw) {
    ASSERT_LT(u, v);
    inside += u / 64 == v / 64;
  }
  const double in_pairs = 256.0 * 2016, out_pairs = 16384.0 * 16383 / 2 - in_pairs;
  const double want_in = 0.3 * in_pairs, want_out = 0.001 * out_pairs;
  EXPECT_NEAR(static_cast<double>(inside), want_in, 6 * std::sqrt(want_in));
  EXPECT_NEAR(static_cast<double>(raw.size() - inside), want_out, 6 * std::sqrt(want_out));
}

TEST(GenerateModels, ExactCountsAgainstTheBruteForce) {
  TempDir d;
  for (const GenerateOptions& g : every_new_model(11)) {
    const Raw raw = generate_edges(g);
    EXPECT_EQ(count_generated(g, d), test::brute_force_triangles(1u << 11, narrow(raw))) << g.kind;
  }
}

TEST(GenerateModels, PowerLawIsHeavyTailedAndCapped) {
  const std::uint64_t n = 1u << 14;
  GenerateOptions g = model("powerlaw", 14);
  const auto d2 = degrees(generate_edges(g), n);
  // Exponent 2: the heaviest vertex is adjacent to a large share of all, far above the mean.
  EXPECT_GT(static_cast<double>(max_of(d2)), 50 * mean_of(d2));
  g.exponent = 3;
  const auto d3 = degrees(generate_edges(g), n);
  EXPECT_LT(max_of(d3), max_of(d2) / 4);
  EXPECT_GT(static_cast<double>(max_of(d3)), 5 * mean_of(d3));
  g.exponent = 2;
  g.max_degree = 300;
  const auto capped = degrees(generate_edges(g), n);
  EXPECT_LE(max_of(capped), 360u);
  EXPECT_GT(max_of(capped), 200u);
}

TEST(GenerateModels, HubsAreAdjacentToTheirShare) {
  const std::uint64_t n = 1u << 13;
  GenerateOptions g = model("hub", 13);
  g.hubs = 1;
  g.hub_share = 1;
  g.edge_factor = 2;
  const auto d1 = degrees(generate_edges(g), n);
  EXPECT_EQ(d1[0], n - 1);  // the hub is adjacent to every vertex
  g.hubs = 3;
  g.hub_share = 0.5;
  const auto d3 = degrees(generate_edges(g), n);
  for (int h = 0; h < 3; ++h) {
    EXPECT_GT(d3[h], n * 45 / 100) << h;
    EXPECT_LT(d3[h], n * 56 / 100) << h;
  }
  EXPECT_LT(mean_of(d3), 8);
}

TEST(GenerateModels, HeavierKroneckerInitiatorMakesBiggerHubs) {
  const std::uint64_t n = 1u << 14;
  // The share of the non-isolated vertices that the heaviest vertex is adjacent to.
  auto hub_share = [&](const GenerateOptions& g) {
    const auto d = degrees(generate_edges(g), n);
    const auto present = std::count_if(d.begin(), d.end(), [](std::uint64_t x) { return x > 0; });
    return static_cast<double>(max_of(d)) / static_cast<double>(present);
  };
  const double normal = hub_share(model("kronecker", 14));
  const double heavy = hub_share(heavy_kronecker(14));
  EXPECT_GT(heavy, normal * 1.2);
  EXPECT_GT(heavy, 0.25);
}

TEST(GenerateModels, BadOptionsAreUsageErrors) {
  auto bad = [](GenerateOptions g) {
    try {
      generate_edges(g);
    } catch (const Error& e) {
      return e.kind() == ErrorKind::Usage;
    }
    return false;
  };
  GenerateOptions g = model("powerlaw", 8);
  g.exponent = 1.2;
  EXPECT_TRUE(bad(g));
  g = model("powerlaw", 8);
  g.max_degree = 3;  // below the mean degree 16
  EXPECT_TRUE(bad(g));
  g = model("mesh", 8);
  g.dimensions = 4;
  EXPECT_TRUE(bad(g));
  g = model("community", 8);
  g.p_in = 1.5;
  EXPECT_TRUE(bad(g));
  g = model("community", 8);
  g.communities = 1000;
  EXPECT_TRUE(bad(g));
  g = model("hub", 8);
  g.hubs = 0;
  EXPECT_TRUE(bad(g));
  g = model("kronecker", 8);
  g.kronecker_a = 0.9;
  g.kronecker_b = 0.2;
  EXPECT_TRUE(bad(g));
  g = model("smallworld", 8);
  EXPECT_TRUE(bad(g));
}

TEST(GenerateModels, Cli) {
  TempDir d;
  auto r = run_cli("generate mesh --scale 8 --dimensions 3 --json -o " + q(d.file("m.tcsr")));
  ASSERT_EQ(r.status, 0) << r.err;
  // 4 x 8 x 8 grid: 2(3*7*8 + 3*8*7 + 4*7*7) + 6*3*7*7 triangles; the counter agrees.
  r = run_cli("count " + q(d.file("m.tcsr")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("triangles     1946"), std::string::npos) << r.out;
  r = run_cli("generate community --scale 9 --communities 8 --p-in 1 --p-out 0 -o " +
              q(d.file("c.el")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 16128 edges"), std::string::npos) << r.out;  // 8 * C(64, 2)
  r = run_cli("generate powerlaw --scale 10 --exponent 2.2 --max-degree 100 -o " +
              q(d.file("p.bin")));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_cli(
      "generate kronecker --scale 10 --kronecker-a 0.7 --kronecker-b 0.13 "
      "--kronecker-c 0.13 -o " +
      q(d.file("k.el")));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_cli("generate hub --scale 10 --hubs 2 --hub-share 0.9 -o " + q(d.file("h.el")));
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* bad : {"powerlaw --exponent abc", "powerlaw --exponent 9", "community --p-in 2",
                          "community --p-out -0.5", "mesh --dimensions 4", "hub --hub-share x"}) {
    r = run_cli(std::string("generate ") + bad + " --scale 8 -o " + q(d.file("x.el")));
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_FALSE(r.err.empty()) << bad;
  }
  r = run_cli("generate --help");
  EXPECT_EQ(r.status, 0);
  for (const char* m :
       {"powerlaw", "mesh", "community", "hub", "--kronecker-a", "--exponent", "--max-degree",
        "--dimensions", "--communities", "--p-in", "--p-out", "--hubs", "--hub-share"})
    EXPECT_NE(r.out.find(m), std::string::npos) << m;
}

}  // namespace
}  // namespace tristream
