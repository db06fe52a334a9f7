// generate_test.cpp — the Kronecker and uniform generators: determinism across thread counts,
// the output kinds (.tcsr, .el, .bin) agreeing with each other, and the model's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

using test::run_cli;
using test::TempDir;

using test::q;

GenerateOptions opts(const char* kind, unsigned scale, unsigned threads, std::uint64_t seed = 1) {
  GenerateOptions g;
  g.kind = kind;
  g.scale = scale;
  g.edge_factor = 8;
  g.threads = threads;
  g.seed = seed;
  return g;
}

TEST(Generate, DeterministicWhateverTheThreadCount) {
  for (const char* kind : {"kronecker", "uniform"}) {
    const auto one = generate_edges(opts(kind, 12, 1));
    EXPECT_EQ(one.size(), 8u << 12);
    for (unsigned t : {2u, 3u, 8u}) EXPECT_EQ(generate_edges(opts(kind, 12, t)), one) << kind << t;
    EXPECT_NE(generate_edges(opts(kind, 12, 2, 2)), one) << kind;
    for (auto [u, v] : one) {
      EXPECT_LT(u, 1u << 12);
      EXPECT_LT(v, 1u << 12);
    }
  }
}

TEST(Generate, KroneckerIsSkewedUniformIsNot) {
  auto max_degree = [](const std::vector<std::pair<std::uint64_t, std::uint64_t>>& e) {
    std::vector<std::uint64_t> deg(1u << 14, 0);
    for (auto [u, v] : e) {
      ++deg[u];
      ++deg[v];
    }
    return *std::max_element(deg.begin(), deg.end());
  };
  const auto kron = generate_edges(opts("kronecker", 14, 2));
  const auto uni = generate_edges(opts("uniform", 14, 2));
  EXPECT_EQ(kron.size(), uni.size());
  // Average degree 16: the uniform maximum stays near it, the Kronecker hubs are far above.
  EXPECT_LT(max_degree(uni), 64u);
  EXPECT_GT(max_degree(kron), 500u);
}

// A generator of a fixed edge count knows its records before the parse, so the in-memory path
// may use the room a stream of unknown length keeps for the switch to spilling. In child
// processes (their own peak RSS): just above the smallest limit where the generator's edges stay
// in memory (found by bisection), the process's peak stays within the limit, and the same edges
// read from a file spill; the bytes out are the same either way.
TEST(Generate, AFixedCountStaysInMemoryWhereAStreamOfUnknownLengthSpills) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory inflates the RSS";
#endif
  TempDir d;
  const std::uint64_t records = 16u << 19;  // Kronecker 19, 16 draws per vertex
  const std::vector<std::string> model = {"kronecker", "--scale", "19", "--edge-factor", "16"};
  // run — the command's peak RSS; *ooc, whether it converted out of core
  auto run = [&](std::vector<std::string> args, std::uint64_t limit, bool* ooc) {
    args.insert(args.end(), {"--threads", "2", "--json", "--tmp-dir", d.path()});
    if (limit) args.insert(args.end(), {"--memory-limit", std::to_string(limit)});
    int status = -1;
    const std::uint64_t peak = test::child_peak_rss(args, status, d.file("stdout"));
    EXPECT_EQ(status, 0);
    const std::string json = test::read_text(d.file("stdout"));
    *ooc = json.find("\"out_of_core\":true") != std::string::npos;
    return peak;
  };
  auto generate_to = [&](const std::string& out, std::uint64_t limit, bool* ooc) {
    std::vector<std::string> args = {"generate"};
    args.insert(args.end(), model.begin(), model.end());
    args.insert(args.end(), {"-o", d.file(out)});
    return run(args, limit, ooc);
  };
  bool ooc = true;
  generate_to("g.bin", 0, &ooc);
  ASSERT_EQ(std::filesystem::file_size(d.file("g.bin")), 16 * records);
  generate_to("all.tcsr", 0, &ooc);
  ASSERT_FALSE(ooc);
  std::uint64_t lo = 8 * records, hi = 16 * records + (64u << 20);  // spills at lo, not at hi
  generate_to("low.tcsr", lo, &ooc);
  ASSERT_TRUE(ooc);
  EXPECT_EQ(test::read_text(d.file("low.tcsr")), test::read_text(d.file("all.tcsr")));
  generate_to("gen.tcsr", hi, &ooc);
  ASSERT_FALSE(ooc);
  while (hi - lo > (1u << 20)) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    generate_to("mid.tcsr", mid, &ooc);
    (ooc ? lo : hi) = mid;
  }
  // (the boundary moves by a MiB or so from run to run with what the process holds at its
  // start: the checks run 4 MiB above the one found, still below where the file's edges stay in
  // memory, 16 MiB or more higher)
  const std::uint64_t limit = hi + (4u << 20);
  const std::uint64_t peak = generate_to("gen.tcsr", limit, &ooc);
  EXPECT_FALSE(ooc) << "limit " << (limit >> 20) << " MiB";
  EXPECT_LE(peak, limit) << "peak RSS " << (peak >> 20) << " MiB";
  run({"convert", d.file("g.bin"), "-o", d.file("read.tcsr")}, limit, &ooc);
  EXPECT_TRUE(ooc) << "limit " << (limit >> 20) << " MiB";
  EXPECT_EQ(test::read_text(d.file("gen.tcsr")), test::read_text(d.file("all.tcsr")));
  EXPECT_EQ(test::read_text(d.file("read.tcsr")), test::read_text(d.file("all.tcsr")));
}

TEST(Generate, OutputKindsAgreeAndTcsrIsThreadIndependent) {
  TempDir d;
  ConvertOptions c;
  c.quiet = true;
  GenerateOptions g = opts("kronecker", 13, 1);
  const ConvertSummary direct = generate(g, d.file("a.tcsr"), c);
  EXPECT_EQ(direct.input_edges, 8u << 13);
  EXPECT_GT(direct.self_loops + direct.duplicates, 0u);
  g.threads = 3;
  c.threads = 3;
  generate(g, d.file("b.tcsr"), c);
  EXPECT_EQ(test::read_text(d.file("a.tcsr")), test::read_text(d.file("b.tcsr")));
  // Out of core gives the same file.
  c.memory_limit = 64 << 10;
  c.tmp_dir = d.path();
  EXPECT_TRUE(generate(g, d.file("c.tcsr"), c).out_of_core);
  EXPECT_EQ(test::read_text(d.file("a.tcsr")), test::read_text(d.file("c.tcsr")));
  // .el and .bin converted give the same file too.
  EXPECT_EQ(generate(g, d.file("g.el"), {}).input_edges, 8u << 13);
  EXPECT_EQ(generate(g, d.file("g.bin"), {}).input_edges, 8u << 13);
  EXPECT_EQ(std::filesystem::file_size(d.file("g.bin")), 16u * (8u << 13));
  ConvertOptions q1;
  q1.quiet = true;
  convert(d.file("g.el"), d.file("el.tcsr"), q1);
  convert(d.file("g.bin"), d.file("bin.tcsr"), q1);
  EXPECT_EQ(test::read_text(d.file("el.tcsr")), test::read_text(d.file("a.tcsr")));
  EXPECT_EQ(test::read_text(d.file("bin.tcsr")), test::read_text(d.file("a.tcsr")));
  // The triangle count matches the brute force over the raw edge list.
  test::EdgeList e;
  for (auto [u, v] : generate_edges(g))
    e.emplace_back(static_cast<vid_t>(u), static_cast<vid_t>(v));
  tcsr::Reader r(d.file("a.tcsr"));
  EXPECT_EQ(make_cpu_counter()->count(r.load().csr.view()),
            test::brute_force_triangles(1u << 13, e));
}

TEST(Generate, Cli) {
  TempDir d;
  auto r = run_cli("generate uniform --scale 10 --edge-factor 4 --seed 7 -o " + q(d.file("u.el")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 4096 edges"), std::string::npos) << r.out;
  r = run_cli("generate kronecker --scale 10 --threads 2 --json -o " + q(d.file("k.tcsr")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"input_edges\":16384"), std::string::npos) << r.out;
  r = run_cli("generate kronecker --scale 10 -o " + q(d.file("k.png")));
  EXPECT_EQ(r.status, 1);
  r = run_cli("generate smallworld --scale 10 -o " + q(d.file("k.el")));
  EXPECT_EQ(r.status, 1);
  r = run_cli("generate kronecker --scale 0 -o " + q(d.file("k.el")));
  EXPECT_EQ(r.status, 1);
}

}  // namespace
}  // namespace tristream
