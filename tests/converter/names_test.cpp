// names_test.cpp — `--names`: string vertex names numbered in order of first appearance, kept in
// the .tcsr file and shown by `count --per-vertex`. A named karate club counts exactly as the
// numeric one, per vertex too; the ids do not depend on the thread count or on out-of-core
// conversion; CSV quoting survives both ways; bad names and damaged files are refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using test::run_cli;
using test::TempDir;
using test::write_text;

using test::q;

ConvertOptions named_options() {
  ConvertOptions o;
  o.quiet = true;
  o.names = true;
  return o;
}

count_t count_file(const std::string& path) {
  tcsr::Reader r(path);
  const OrientedGraph g = r.load();
  return make_cpu_counter()->count(g.csr.view());
}

// karate.el with every id k written as "v<k>".
std::string named_karate() {
  std::ifstream in(test::data_file("karate.el"));
  std::string line, out;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string a, b;
    if (line.empty() || line[0] == '#' || line[0] == '%' || !(ls >> a >> b)) continue;
    out += "v" + a + " v" + b + "\n";
  }
  return out;
}

// The rows of a per-vertex CSV (header dropped) by their vertex column.
std::map<std::string, std::string> rows_by_vertex(const std::string& csv) {
  std::map<std::string, std::string> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "vertex,degree,triangles,clustering");
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    out[line.substr(0, comma)] = line.substr(comma);
  }
  return out;
}

TEST(Names, NamedKarateCountsExactly) {
  TempDir d;
  write_text(d.file("k.txt"), named_karate());
  const ConvertSummary s = convert(d.file("k.txt"), d.file("k.tcsr"), named_options());
  EXPECT_EQ(s.vertices, 34u);
  EXPECT_EQ(s.edges, 78u);
  EXPECT_EQ(count_file(d.file("k.tcsr")), 45u);
  tcsr::Reader r(d.file("k.tcsr"));
  ASSERT_TRUE(r.has_names());
  EXPECT_EQ(r.name(0), "v1");  // the first name of the file
  EXPECT_EQ(r.name(1), "v2");
}

TEST(Names, PerVertexShowsNamesWithTheNumericCounts) {
  TempDir d;
  write_text(d.file("k.txt"), named_karate());
  const auto named = run_cli("count " + q(d.file("k.txt")) + " --names --backend cpu -q " +
                             "--per-vertex " + q(d.file("named.csv")));
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_NE(named.out.find("triangles     45"), std::string::npos) << named.out;
  const auto numeric = run_cli("count " + q(test::data_file("karate.el")) +
                               " --backend cpu -q --per-vertex " + q(d.file("numeric.csv")));
  ASSERT_EQ(numeric.status, 0) << numeric.err;
  const auto by_name = rows_by_vertex(test::read_text(d.file("named.csv")));
  const auto by_id = rows_by_vertex(test::read_text(d.file("numeric.csv")));
  ASSERT_EQ(by_name.size(), 34u);
  ASSERT_EQ(by_id.size(), 34u);
  for (const auto& [id, row] : by_id) EXPECT_EQ(by_name.at("v" + id), row) << id;
  // Rows come in order of first appearance (the original ids 0, 1, ...).
  const std::string text = test::read_text(d.file("named.csv"));
  const std::string head = "vertex,degree,triangles,clustering\nv1,16,18,0.15\nv2,";
  EXPECT_EQ(text.substr(0, head.size()), head);
  // info says the file has names.
  ASSERT_EQ(
      run_cli("convert " + q(d.file("k.txt")) + " --names -q -o " + q(d.file("k.tcsr"))).status, 0);
  const auto info = run_cli("info " + q(d.file("k.tcsr")));
  EXPECT_NE(info.out.find("vertex names"), std::string::npos) << info.out << info.err;
}

TEST(Names, CsvQuotedNamesRoundTripIntoQuotedOutput) {
  TempDir d;
  // A triangle of awkward names, a name with a blank inside, and a self-loop-only name.
  write_text(d.file("q.csv"),
             "\"Smith, Ann\",\"say \"\"hi\"\"\"\n"
             "\"say \"\"hi\"\"\",New York\n"
             "New York , \"Smith, Ann\"\n"
             "lonely,lonely\n");
  const auto r = run_cli("count " + q(d.file("q.csv")) + " --names --backend cpu --per-vertex -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "vertex,degree,triangles,clustering\n"
            "\"Smith, Ann\",2,1,1\n"
            "\"say \"\"hi\"\"\",2,1,1\n"
            "New York,2,1,1\n");
  // TSV output quotes only what holds a tab or a quote.
  const auto t = run_cli("count " + q(d.file("q.csv")) + " --names --backend cpu -q " +
                         "--per-vertex " + q(d.file("out.tsv")));
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(test::read_text(d.file("out.tsv")),
            "vertex\tdegree\ttriangles\tclustering\n"
            "Smith, Ann\t2\t1\t1\n"
            "\"say \"\"hi\"\"\"\t2\t1\t1\n"
            "New York\t2\t1\t1\n");
}

TEST(Names, SelfLoopOnlyNamesGetNoVertex) {
  TempDir d;
  write_text(d.file("l.txt"), "a a\nb c\nc d\nd b\nb b\n");
  const ConvertSummary s = convert(d.file("l.txt"), d.file("l.tcsr"), named_options());
  EXPECT_EQ(s.vertices, 3u);
  EXPECT_EQ(s.self_loops, 2u);
  tcsr::Reader r(d.file("l.tcsr"));
  EXPECT_EQ(r.name(0), "b");
  EXPECT_EQ(r.name(1), "c");
  EXPECT_EQ(r.name(2), "d");
  EXPECT_EQ(count_file(d.file("l.tcsr")), 1u);
}

TEST(Names, AFirstLineOfWordsIsDataUnlessHeaderIsGiven) {
  TempDir d;
  write_text(d.file("h.txt"), "source target\nx y\ny z\n");
  EXPECT_EQ(convert(d.file("h.txt"), d.file("a.tcsr"), named_options()).vertices, 5u);
  ConvertOptions o = named_options();
  o.header = true;
  EXPECT_EQ(convert(d.file("h.txt"), d.file("b.tcsr"), o).vertices, 3u);
}

TEST(Names, AdjacencyListsTakeNames) {
  TempDir d;
  write_text(d.file("g.adjlist"), "# comment\nann bob cid\nbob cid\n");
  const ConvertSummary s = convert(d.file("g.adjlist"), d.file("g.tcsr"), named_options());
  EXPECT_EQ(s.vertices, 3u);
  EXPECT_EQ(count_file(d.file("g.tcsr")), 1u);
}

// Random words over many parse blocks: the same bytes for 1 and 2 threads, and out of core.
TEST(Names, IdsDoNotDependOnThreadsOrMemory) {
  TempDir d;
  std::mt19937_64 rng(22);
  std::string text;
  auto word = [&] {
    std::string w = "w";
    const std::uint64_t x = rng() % 20000;
    for (std::uint64_t k = x; k; k /= 26) w += static_cast<char>('a' + k % 26);
    return w + std::to_string(x % 7);
  };
  for (int i = 0; i < 60000; ++i) text += word() + " " + word() + "\n";
  write_text(d.file("w.txt"), text);
  ConvertOptions o = named_options();
  o.memory_limit = 8 << 20;  // 64 KiB parse jobs: many blocks
  o.threads = 1;
  convert(d.file("w.txt"), d.file("t1.tcsr"), o);
  o.threads = 2;
  convert(d.file("w.txt"), d.file("t2.tcsr"), o);
  EXPECT_EQ(test::read_text(d.file("t1.tcsr")), test::read_text(d.file("t2.tcsr")));
  o.memory_limit = 256 << 10;
  o.tmp_dir = d.path();
  EXPECT_TRUE(convert(d.file("w.txt"), d.file("ooc.tcsr"), o).out_of_core);
  EXPECT_EQ(test::read_text(d.file("ooc.tcsr")), test::read_text(d.file("t1.tcsr")));
  // The first line's names are ids 0 and 1.
  tcsr::Reader r(d.file("t1.tcsr"));
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(std::string(r.name(0)) + " " + std::string(r.name(1)), first);
}

TEST(Names, BadNamesAndDialectsAreRefused) {
  TempDir d;
  write_text(d.file("e.csv"), "a,b\n\"\",c\n");
  auto r = run_cli("convert " + q(d.file("e.csv")) + " --names -q -o " + q(d.file("e.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.file("e.csv") + ":2: empty vertex name"), std::string::npos) << r.err;
  write_text(d.file("u.csv"), "a,b\n\"open,c\n");
  r = run_cli("convert " + q(d.file("u.csv")) + " --names -q -o " + q(d.file("u.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":2: unterminated quoted name"), std::string::npos) << r.err;
  write_text(d.file("one.txt"), "a b\nc\n");
  r = run_cli("convert " + q(d.file("one.txt")) + " --names -q -o " + q(d.file("o.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":2: only one column ('c')"), std::string::npos) << r.err;
  write_text(d.file("m.mtx"), "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n");
  r = run_cli("convert " + q(d.file("m.mtx")) + " --names -q -o " + q(d.file("m.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--names: mtx input numbers its vertices"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(d.file("m.tcsr")).good());
}

TEST(Names, DamagedNamesSectionIsRefusedWithFileAndSection) {
  TempDir d;
  write_text(d.file("k.txt"), named_karate());
  convert(d.file("k.txt"), d.file("k.tcsr"), named_options());
  std::string b = test::read_text(d.file("k.tcsr"));
  b[b.size() - 1] ^= 0x01;  // the last byte of the last name
  {
    std::ofstream out(d.file("k.tcsr"), std::ios::binary | std::ios::trunc);
    out << b;
  }
  const auto r = run_cli("count " + q(d.file("k.tcsr")) + " --backend cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.file("k.tcsr") + ": section names: checksum mismatch"), std::string::npos)
      << r.err;
}

TEST(Names, WithoutNamesWordsAreStillRefused) {
  TempDir d;
  write_text(d.file("w.txt"), "1 2\nx y\n");
  const auto r = run_cli("convert " + q(d.file("w.txt")) + " -q -o " + q(d.file("w.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":2: unparsable token 'x'"), std::string::npos) << r.err;
  // And a numeric conversion stays version 1.
  write_text(d.file("n.txt"), "1 2\n2 3\n");
  convert(d.file("n.txt"), d.file("n.tcsr"), ConvertOptions{});
  EXPECT_FALSE(tcsr::Reader(d.file("n.tcsr")).has_names());
  EXPECT_EQ(tcsr::Reader(d.file("n.tcsr")).header().version, tcsr::kFormatVersion);
}

}  // namespace
}  // namespace tristream
