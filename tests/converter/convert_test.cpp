// convert_test.cpp — the converter: every dialect and compression, cleaning counts, huge sparse
// ids, bad input (exit 1, FILE:LINE, no output), out-of-core output identical to in-memory
// output, and triangle counts of converted graphs against the brute-force oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

using test::EdgeList;
using test::run_cli;
using test::TempDir;
using test::write_text;

using test::clean;
using test::edge_set;
using test::OrigEdge;

using test::q;

count_t count_file(const std::string& path) {
  tcsr::Reader r(path);
  const OrientedGraph g = r.load();
  return make_cpu_counter()->count(g.csr.view());
}

std::string edge_text(const EdgeList& e, const char* sep = " ", const char* eol = "\n") {
  std::string s;
  for (auto [a, b] : e) s += std::to_string(a) + sep + std::to_string(b) + eol;
  return s;
}

bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

ConvertOptions quiet_options() {
  ConvertOptions o;
  o.quiet = true;
  return o;
}

TEST(Convert, MessyK5CountsLoopsAndDuplicates) {
  TempDir d;
  const ConvertSummary s =
      convert(test::data_file("k5_messy.el"), d.file("k5.tcsr"), quiet_options());
  EXPECT_EQ(s.input_edges, 24u);
  EXPECT_EQ(s.self_loops, 2u);
  EXPECT_EQ(s.duplicates, 12u);
  EXPECT_EQ(s.vertices, 5u);
  EXPECT_EQ(s.edges, 10u);
  EXPECT_EQ(s.max_degree, 4u);
  EXPECT_FALSE(s.out_of_core);
  EXPECT_EQ(count_file(d.file("k5.tcsr")), 10u);
  const auto es = edge_set(d.file("k5.tcsr"));
  EXPECT_EQ(es.size(), 10u);
  EXPECT_TRUE(es.count({100, 128}));
}

TEST(Convert, PlainWithCommentsExtraColumnsAndCrlf) {
  TempDir d;
  write_text(d.file("a.txt"),
             "# SNAP style\r\n% another comment\r\n\r\n  1\t2\t0.5 extra\r\n2 3 7\r\n3 1\r\n"
             "3\t4\r\n4 4\r\n1 2");
  const ConvertSummary s = convert(d.file("a.txt"), d.file("a.tcsr"), quiet_options());
  EXPECT_EQ(s.input_edges, 6u);
  EXPECT_EQ(s.self_loops, 1u);
  EXPECT_EQ(s.duplicates, 1u);
  EXPECT_EQ(edge_set(d.file("a.tcsr")), (std::set<OrigEdge>{{1, 2}, {2, 3}, {1, 3}, {3, 4}}));
  EXPECT_EQ(count_file(d.file("a.tcsr")), 1u);
}

TEST(Convert, GraphChallengeTsv) {
  TempDir d;
  write_text(d.file("g.tsv"), "1\t2\t1\n2\t3\t1\n3\t1\t1\n2\t1\t1\n");
  const ConvertSummary s = convert(d.file("g.tsv"), d.file("g.tcsr"), quiet_options());
  EXPECT_EQ(s.edges, 3u);
  EXPECT_EQ(s.duplicates, 1u);
  EXPECT_EQ(count_file(d.file("g.tcsr")), 1u);
}

TEST(Convert, MatrixMarketDialects) {
  TempDir d;
  write_text(d.file("p.mtx"),
             "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n4 4 5\n2 1\n3 1\n3 2\n"
             "4 3\n4 4\n");
  ConvertSummary s = convert(d.file("p.mtx"), d.file("p.tcsr"), quiet_options());
  EXPECT_EQ(s.input_edges, 5u);
  EXPECT_EQ(s.self_loops, 1u);
  EXPECT_EQ(s.edges, 4u);
  EXPECT_EQ(count_file(d.file("p.tcsr")), 1u);
  write_text(d.file("r.mtx"),
             "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 0.5\n2 1 -1e3\n2 3 2\n"
             "3 1 4.25\n");
  s = convert(d.file("r.mtx"), d.file("r.tcsr"), quiet_options());
  EXPECT_EQ(s.edges, 3u);
  EXPECT_EQ(s.duplicates, 1u);
  write_text(d.file("i.mtx"),
             "%%MatrixMarket matrix coordinate integer general\r\n2 2 1\r\n1 2 7\r\n");
  s = convert(d.file("i.mtx"), d.file("i.tcsr"), quiet_options());
  EXPECT_EQ(s.edges, 1u);
}

TEST(Convert, BinaryPairs) {
  TempDir d;
  const EdgeList e = test::random_graph(300, 3000, 5);
  std::string b32, b64;
  for (auto [a, b] : e) {
    const std::uint32_t x = a, y = b;
    const std::uint64_t X = a, Y = b;
    b32.append(reinterpret_cast<const char*>(&x), 4).append(reinterpret_cast<const char*>(&y), 4);
    b64.append(reinterpret_cast<const char*>(&X), 8).append(reinterpret_cast<const char*>(&Y), 8);
  }
  write_text(d.file("g.bin32"), b32);
  write_text(d.file("g.bin"), b64);
  write_text(d.file("g.raw"), b64);
  write_text(d.file("g.el"), edge_text(e));
  convert(d.file("g.el"), d.file("t.tcsr"), quiet_options());
  convert(d.file("g.bin32"), d.file("b32.tcsr"), quiet_options());
  convert(d.file("g.bin"), d.file("b64.tcsr"), quiet_options());
  ConvertOptions o = quiet_options();
  o.format = "bin64";
  convert(d.file("g.raw"), d.file("raw.tcsr"), o);
  const std::string ref = test::read_text(d.file("t.tcsr"));
  EXPECT_EQ(test::read_text(d.file("b32.tcsr")), ref);
  EXPECT_EQ(test::read_text(d.file("b64.tcsr")), ref);
  EXPECT_EQ(test::read_text(d.file("raw.tcsr")), ref);
  EXPECT_EQ(count_file(d.file("t.tcsr")), test::brute_force_triangles(test::vertex_count(e), e));
  // Without --format, unknown binary content is refused.
  auto r = run_cli("convert " + q(d.file("g.raw")) + " -o " + q(d.file("x.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--format bin32 or bin64"), std::string::npos) << r.err;
}

TEST(Convert, HugeSparseIds) {
  TempDir d;
  const std::uint64_t M = ~0ull;
  const std::vector<OrigEdge> e = {{M, M - 1}, {M - 1, 1ull << 63},         {1ull << 63, M}, {0, M},
                                   {M, 0},     {12345678901234567890ull, 7}};
  std::string text;
  for (auto [a, b] : e) text += std::to_string(a) + " " + std::to_string(b) + "\n";
  write_text(d.file("h.el"), text);
  const ConvertSummary s = convert(d.file("h.el"), d.file("h.tcsr"), quiet_options());
  EXPECT_EQ(s.vertices, 6u);
  EXPECT_EQ(s.edges, 5u);
  EXPECT_EQ(s.duplicates, 1u);
  EXPECT_EQ(edge_set(d.file("h.tcsr")), clean(e));
  EXPECT_EQ(count_file(d.file("h.tcsr")), 1u);
}

TEST(Convert, EmptyAndCommentOnlyInputsAreEmptyGraphs) {
  TempDir d;
  write_text(d.file("e.el"), "");
  write_text(d.file("c.el"), "# nothing\n% here\n\n");
  for (const char* f : {"e.el", "c.el"}) {
    const ConvertSummary s = convert(d.file(f), d.file("o.tcsr"), quiet_options());
    EXPECT_EQ(s.vertices, 0u);
    EXPECT_EQ(s.edges, 0u);
    tcsr::Reader r(d.file("o.tcsr"));
    EXPECT_EQ(r.n(), 0u);
  }
}

TEST(Convert, CompressedInputsAndTruncation) {
  TempDir d;
  const EdgeList e = test::random_graph(2000, 60000, 11);
  write_text(d.file("g.el"), edge_text(e));
  convert(d.file("g.el"), d.file("ref.tcsr"), quiet_options());
  const std::string ref = test::read_text(d.file("ref.tcsr"));
  struct Tool {
    const char* bin;
    const char* ext;
  };
  int tested = 0;
  for (const Tool t :
       {Tool{"gzip", "gz"}, Tool{"bzip2", "bz2"}, Tool{"xz", "xz"}, Tool{"zstd", "zst"}}) {
    if (!have(t.bin)) continue;
    ++tested;
    const std::string z = d.file(std::string("g.el.") + t.ext);
    ASSERT_EQ(std::system((std::string(t.bin) + " -c " + q(d.file("g.el")) + " > " + q(z)).c_str()),
              0);
    const std::string out = d.file(std::string("z_") + t.ext + ".tcsr");
    try {
      convert(z, out, quiet_options());
    } catch (const Error& err) {
      // bzip2 and xz are optional at build time.
      if (std::string(err.what()).find("this build has no") == std::string::npos) throw;
      --tested;
      continue;
    }
    EXPECT_EQ(test::read_text(out), ref) << t.bin;
    // Concatenated streams (as pigz, pbzip2 or `cat a.gz b.gz` make) are read one after another:
    // the same edges twice, so everything the second copy adds is a duplicate.
    const std::string twice = d.file(std::string("twice.el.") + t.ext);
    ASSERT_EQ(std::system(("cat " + q(z) + " " + q(z) + " > " + q(twice)).c_str()), 0);
    const ConvertSummary s2 = convert(twice, d.file("twice.tcsr"), quiet_options());
    EXPECT_EQ(s2.input_edges, 2 * e.size()) << t.bin;
    EXPECT_EQ(test::read_text(d.file("twice.tcsr")), ref) << t.bin;
    // Standard input.
    const std::string cmd = "cat " + q(z) + " | '" + TRISTREAM_BINARY + "' convert - -q -o " +
                            q(d.file("stdin.tcsr")) + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    tristream::reindex(d.file("twice.tcsr"));  // the command also stores the planner's census
    EXPECT_EQ(test::read_text(d.file("stdin.tcsr")), test::read_text(d.file("twice.tcsr")))
        << t.bin;
    // Truncated: an error naming the file and a line, exit 1, no output.
    const std::string whole = test::read_text(z);
    const std::string cut = d.file(std::string("cut.el.") + t.ext);
    write_text(cut, whole.substr(0, whole.size() * 2 / 3));
    const std::string bad_out = d.file(std::string("cut_") + t.ext + ".tcsr");
    auto r = run_cli("convert " + q(cut) + " -q -o " + q(bad_out));
    EXPECT_EQ(r.status, 1) << t.bin << ": " << r.err;
    EXPECT_NE(r.err.find("error: " + cut + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(bad_out));
  }
  if (tested == 0) GTEST_SKIP() << "no compression tools installed";
}

struct BadCase {
  const char* name;
  const char* text;
  const char* line;  // ":LINE:" expected in the message
  const char* what;
};

TEST(Convert, BadInputIsAnErrorWithFileAndLine) {
  TempDir d;
  const BadCase cases[] = {
      {"token.el", "1 2\n3 abc\n", ":2:", "unparsable token 'abc'"},
      {"neg.el", "# c\n1 2\n-3 4\n", ":3:", "negative vertex id '-3'"},
      {"frac.el", "1 2\n2 3.5\n", ":2:", "non-integer vertex id '3.5'"},
      {"big.el", "1 18446744073709551615\n1 18446744073709551616\n", ":2:", "exceeds 2^64-1"},
      {"one.el", "1 2\r\n7\r\n", ":2:", "only one column"},
      {"size.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n",
       ":2:", "declares 3 entries but the file has 2"},
      {"more.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n",
       ":4:", "more entries than the 1 declared"},
      {"range.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 4 1.0\n",
       ":4:", "column index 4 outside 1..3"},
      {"zero.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n0 2\n",
       ":3:", "row index 0 outside 1..3"},
      {"banner.mtx", "%%MatrixMarket matrix array real general\n3 3\n", ":1:", "coordinate"},
  };
  for (const BadCase& c : cases) {
    const std::string in = d.file(c.name), out = d.file(std::string(c.name) + ".tcsr");
    write_text(in, c.text);
    auto r = run_cli("convert " + q(in) + " -o " + q(out));
    EXPECT_EQ(r.status, 1) << c.name;
    EXPECT_NE(r.err.find("error: " + in + c.line), std::string::npos) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << c.name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.name;
    try {
      convert(in, out, quiet_options());
      ADD_FAILURE() << c.name << " converted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
    }
  }
  // A truncated binary record.
  write_text(d.file("t.bin"), std::string(20, '\1'));
  auto r = run_cli("convert " + q(d.file("t.bin")) + " -o " + q(d.file("t.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("truncated binary edge list"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.file("t.tcsr")));
}

TEST(Convert, ErrorLineNumbersAcrossParallelBlocks) {
  // Many lines so that the input is cut into several parse jobs (a small memory limit makes the
  // jobs 64 KiB); the bad line sits far in.
  TempDir d;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  text += "5 x\n";
  write_text(d.file("long.el"), text);
  auto r = run_cli("convert " + q(d.file("long.el")) + " --threads 4 --memory-limit 4M -o " +
                   q(d.file("l.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.file("long.el") + ":100001: unparsable token 'x'"), std::string::npos)
      << r.err;
}

TEST(Convert, OutOfCoreIsByteIdenticalToInMemory) {
  TempDir d;
  EdgeList e = test::skewed_graph(20000, 400000, 3);
  const EdgeList r = test::random_graph(20000, 100000, 4);
  e.insert(e.end(), r.begin(), r.end());
  write_text(d.file("g.el"), edge_text(e));
  ConvertOptions o = quiet_options();
  const ConvertSummary mem = convert(d.file("g.el"), d.file("mem.tcsr"), o);
  EXPECT_FALSE(mem.out_of_core);
  for (unsigned threads : {1u, 3u}) {
    o.memory_limit = 256 << 10;  // far below the 8 MiB of records
    o.threads = threads;
    o.tmp_dir = d.path();
    const ConvertSummary ooc = convert(d.file("g.el"), d.file("ooc.tcsr"), o);
    EXPECT_TRUE(ooc.out_of_core);
    EXPECT_EQ(ooc.edges, mem.edges);
    EXPECT_EQ(ooc.duplicates, mem.duplicates);
    EXPECT_EQ(ooc.self_loops, mem.self_loops);
    EXPECT_EQ(test::read_text(d.file("ooc.tcsr")), test::read_text(d.file("mem.tcsr"))) << threads;
  }
  // No spill files are left behind.
  for (const auto& entry : std::filesystem::directory_iterator(d.path()))
    EXPECT_EQ(entry.path().filename().string().find("tristream-spill"), std::string::npos);
  EXPECT_EQ(count_file(d.file("mem.tcsr")), test::brute_force_triangles(test::vertex_count(e), e));
}

// Vertices are ranked by (degree, id), also above the degrees that the ranking's counting sort
// buckets one by one (2^16 - 1 and above share its last bucket, ordered afterwards): hubs of
// degrees 65534 (just below), 65535 (the boundary), 66000 and two of 70000 (a tie, broken by the
// smaller id), in memory on 1 and 3 threads and out of core, every file the same.
TEST(Convert, RanksByDegreeThenIdAboveTheCountingSortsBuckets) {
  TempDir d;
  std::vector<OrigEdge> e;
  const std::pair<std::uint64_t, std::uint64_t> hubs[] = {
      {2, 65534}, {1, 65535}, {9, 66000}, {5, 70000}, {3, 70000}};
  std::string text;
  for (auto [hub, deg] : hubs)
    for (std::uint64_t k = 0; k < deg; ++k) {
      e.push_back({hub, 100 + (k * 7919 + hub) % 70001});
      text += std::to_string(hub) + " " + std::to_string(e.back().second) + "\n";
    }
  write_text(d.file("h.el"), text);
  std::vector<std::uint64_t> degree(100 + 70001, 0);
  for (auto [a, b] : clean(e)) {
    ++degree[a];
    ++degree[b];
  }
  ConvertOptions o = quiet_options();
  std::string first;
  for (unsigned threads : {1u, 3u, 2u}) {
    o.threads = threads;
    o.memory_limit = threads == 2 ? 1 << 20 : 0;  // (the last: out of core)
    o.tmp_dir = d.path();
    const ConvertSummary s = convert(d.file("h.el"), d.file("h.tcsr"), o);
    EXPECT_EQ(s.out_of_core, threads == 2);
    const std::string bytes = test::read_text(d.file("h.tcsr"));
    if (first.empty()) first = bytes;
    EXPECT_TRUE(bytes == first) << threads;
  }
  const OrientedGraph g = tcsr::Reader(d.file("h.tcsr")).load(true, 1);
  ASSERT_EQ(g.perm.size(), static_cast<std::size_t>(std::count_if(
                               degree.begin(), degree.end(), [](std::uint64_t x) { return x; })));
  for (std::size_t r = 1; r < g.perm.size(); ++r) {
    const std::uint64_t a = g.perm[r - 1], b = g.perm[r];
    EXPECT_TRUE(degree[a] < degree[b] || (degree[a] == degree[b] && a < b))
        << "rank " << r << ": " << a << " (degree " << degree[a] << ") before " << b << " (degree "
        << degree[b] << ")";
  }
  const std::vector<orig_id_t> last(g.perm.end() - 5, g.perm.end());
  EXPECT_EQ(last, (std::vector<orig_id_t>{2, 1, 9, 3, 5}));
}

// A complete graph of 400 vertices (79,800 edges): more edges than one sort bucket, too few
// vertices for a bucket of the row sorts to hold whole rows, so in memory its rows are sorted as
// 8-byte keys (the one in-memory path that does not stream into the writer); the same bytes as
// out of core and C(400, 3) triangles, on 1 and 3 threads.
TEST(Convert, CompleteGraphTooSmallForTheRowSortsBuckets) {
  TempDir d;
  write_text(d.file("k.el"), edge_text(test::complete_graph(400)));
  ConvertOptions o = quiet_options();
  convert(d.file("k.el"), d.file("mem.tcsr"), o);
  const std::string want = test::read_text(d.file("mem.tcsr"));
  for (unsigned threads : {1u, 3u}) {
    o.threads = threads;
    o.memory_limit = 1 << 20;
    o.tmp_dir = d.path();
    EXPECT_TRUE(convert(d.file("k.el"), d.file("ooc.tcsr"), o).out_of_core);
    EXPECT_TRUE(test::read_text(d.file("ooc.tcsr")) == want) << threads;
  }
  EXPECT_EQ(count_file(d.file("mem.tcsr")), count_t{400} * 399 * 398 / 6);
}

TEST(Convert, OutOfCoreWithHugeIds) {
  TempDir d;
  std::vector<OrigEdge> e;
  const EdgeList base = test::random_graph(5000, 50000, 9);
  for (auto [a, b] : base) e.emplace_back(~0ull - 3 * a, ~0ull - 3 * b);
  std::string text;
  for (auto [a, b] : e) text += std::to_string(a) + " " + std::to_string(b) + "\n";
  write_text(d.file("h.el"), text);
  ConvertOptions o = quiet_options();
  convert(d.file("h.el"), d.file("mem.tcsr"), o);
  o.memory_limit = 128 << 10;
  o.tmp_dir = d.path();
  EXPECT_TRUE(convert(d.file("h.el"), d.file("ooc.tcsr"), o).out_of_core);
  EXPECT_EQ(test::read_text(d.file("ooc.tcsr")), test::read_text(d.file("mem.tcsr")));
  EXPECT_EQ(edge_set(d.file("ooc.tcsr")), clean(e));
}

TEST(Convert, OutOfCorePeakMemoryStaysNearTheLimit) {
  // 2 Mi edges (32 MiB of parsed records) under a 16 MiB limit, in a child process: its peak RSS
  // stays under the limit + 64 MiB + the per-vertex arrays (48 bytes per vertex).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory inflates the RSS";
#endif
  TempDir d;
  GenerateOptions g;
  g.kind = "uniform";
  g.scale = 17;
  generate(g, d.file("u.bin"));
  int status = -1;
  const std::uint64_t peak =
      test::child_peak_rss({"convert", d.file("u.bin"), "-o", d.file("u.tcsr"), "--memory-limit",
                            "16M", "--threads", "2", "--json", "--tmp-dir", d.path()},
                           status, d.file("stdout"));
  ASSERT_EQ(status, 0);
  const std::string json = test::read_text(d.file("stdout"));
  EXPECT_NE(json.find("\"out_of_core\":true"), std::string::npos) << json;
  const std::uint64_t bound = (16u << 20) + (64u << 20) + 48u * (1u << 17);
  EXPECT_LT(peak, bound) << "peak RSS " << (peak >> 20) << " MiB";
  ConvertOptions o = quiet_options();
  convert(d.file("u.bin"), d.file("mem.tcsr"), o);
  tristream::reindex(d.file("mem.tcsr"));  // the command also stores the planner's census
  EXPECT_EQ(test::read_text(d.file("u.tcsr")), test::read_text(d.file("mem.tcsr")));
}

TEST(Convert, SameGraphAsOrientEdgeList) {
  // With every id 0..n-1 present, compaction is the identity and the converter must build the
  // graph the shared helper orient_edge_list builds: the same ranks, rows and permutation.
  TempDir d;
  const vid_t n = 3000;
  EdgeList e = test::skewed_graph(n, 40000, 8);
  for (vid_t v = 0; v + 1 < n; ++v) e.emplace_back(v, v + 1);
  write_text(d.file("g.el"), edge_text(e));
  convert(d.file("g.el"), d.file("g.tcsr"), quiet_options());
  const OrientedGraph want = orient_edge_list(n, e);
  const OrientedGraph got = tcsr::Reader(d.file("g.tcsr")).load(true);
  EXPECT_EQ(got.csr.offsets, want.csr.offsets);
  EXPECT_EQ(got.csr.cols, want.csr.cols);
  EXPECT_EQ(got.perm, want.perm);
}

TEST(Convert, TriangleCountsOfConvertedGraphs) {
  TempDir d;
  convert(test::data_file("karate.el"), d.file("k.tcsr"), quiet_options());
  EXPECT_EQ(count_file(d.file("k.tcsr")), 45u);
  const EdgeList graphs[] = {test::complete_graph(12), test::wheel(9), test::friendship(5),
                             test::random_graph(500, 8000, 21), test::skewed_graph(800, 9000, 22)};
  for (const EdgeList& e : graphs) {
    write_text(d.file("g.el"), edge_text(e, "\t"));
    convert(d.file("g.el"), d.file("g.tcsr"), quiet_options());
    EXPECT_EQ(count_file(d.file("g.tcsr")), test::brute_force_triangles(test::vertex_count(e), e));
  }
}

TEST(Convert, CliSummaryAndJson) {
  TempDir d;
  auto r = run_cli("convert " + q(test::data_file("k5_messy.el")) + " -o " + q(d.file("k.tcsr")) +
                   " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"self_loops\":2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"duplicates\":12"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"edges\":10"), std::string::npos) << r.out;
  r = run_cli("convert " + q(test::data_file("karate.el")) + " -o " + q(d.file("k.tcsr")) +
              " --zstd-level 9 --chunk-size 64K --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("vertices        34"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress bar when stderr is not a terminal
  r = run_cli("convert " + q(test::data_file("karate.el")) + " -o " + q(d.file("k.tcsr")) +
              " --format xml");
  EXPECT_EQ(r.status, 1);
  r = run_cli("convert " + q(d.file("missing.el")) + " -o " + q(d.file("m.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
