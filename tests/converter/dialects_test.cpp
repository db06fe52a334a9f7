// dialects_test.cpp — every text dialect: a golden graph (Zachary's karate club in tests/data as
// METIS, DIMACS, CSV and a networkx adjacency list, 45 triangles) and small hand-made graphs with
// exact counts, detection by extension and content, header lines, and the wrong shapes of each
// dialect refused with FILE:LINE (exit 1, no output).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

ConvertOptions options(const std::string& format = "auto") {
  ConvertOptions o;
  o.quiet = true;
  o.threads = 2;
  o.format = format;
  return o;
}

struct Counted {
  ConvertSummary summary;
  count_t triangles = 0;
};

Counted convert_and_count(const std::string& in, const std::string& out,
                          const ConvertOptions& o = options()) {
  Counted c;
  c.summary = convert(in, out, o);
  tcsr::Reader r(out);
  const OrientedGraph g = r.load();
  c.triangles = make_cpu_counter()->count(g.csr.view());
  return c;
}

Counted from_text(const TempDir& d, const std::string& name, const std::string& text,
                  const ConvertOptions& o = options()) {
  write_text(d.file(name), text);
  return convert_and_count(d.file(name), d.file(name + ".tcsr"), o);
}

TEST(Dialects, GoldenKarateInEveryDialect) {
  TempDir d;
  for (const char* name :
       {"karate.el", "karate.graph", "karate.gr", "karate.csv", "karate.adjlist"}) {
    const Counted c = convert_and_count(test::data_file(name), d.file("k.tcsr"));
    EXPECT_EQ(c.triangles, 45u) << name;
    EXPECT_EQ(c.summary.vertices, 34u) << name;
    EXPECT_EQ(c.summary.edges, 78u) << name;
  }
  // Through the CLI, with the dialect named instead of taken from the extension.
  write_text(d.file("karate.txt"), test::read_text(test::data_file("karate.adjlist")));
  auto r = run_cli("count " + q(d.file("karate.txt")) + " --format adjlist --backend cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("triangles     45"), std::string::npos) << r.out;
}

TEST(Dialects, MetisHeaderIsNeverAnEdge) {
  // The football.graph case: read as a plain edge list, the header `n m` would be an edge and the
  // adjacency lines truncated to their first two ids. Refused instead.
  TempDir d;
  write_text(d.file("k.txt"), test::read_text(test::data_file("karate.graph")));
  auto r = run_cli("count " + q(d.file("k.txt")) + " --backend cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.file("k.txt") + ":4: 32 columns, but a plain edge line has 2 vertex ids"),
            std::string::npos)
      << r.err;
  r = run_cli("count " + q(d.file("k.txt")) + " --format metis --backend cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("triangles     45"), std::string::npos) << r.out;
}

TEST(Dialects, MetisLayouts) {
  TempDir d;
  // No fmt; a comment; a blank line is an isolated vertex (4); trailing blank lines are fine.
  Counted c = from_text(d, "a.graph", "% triangle and a lonely vertex\n4 3\n2 3\n1 3\n1 2\n\n\n");
  EXPECT_EQ(c.triangles, 1u);
  EXPECT_EQ(c.summary.input_edges, 6u);  // adjacency entries, each edge twice
  EXPECT_EQ(c.summary.edges, 3u);
  // fmt 011: one vertex weight, then neighbour / edge weight pairs.
  c = from_text(d, "b.graph", "3 3 011\n7 2 1 3 1\n7 1 1 3 1\n7 1 1 2 1\n");
  EXPECT_EQ(c.triangles, 1u);
  // fmt 110 with ncon 2: a vertex size and two vertex weights, no edge weights; CRLF ends.
  c = from_text(d, "c.graph",
                "4 5 110 2\r\n1 5 5 2 3 4\r\n1 5 5 1 3\r\n1 5 5 1 2 4\r\n1 5 5 1 3\r\n");
  EXPECT_EQ(c.triangles, 2u);
  // Chosen by --format on any name.
  c = from_text(d, "d.txt", "3 3\n2 3\n1 3\n1 2\n", options("metis"));
  EXPECT_EQ(c.triangles, 1u);
}

TEST(Dialects, DimacsCsvAdjlistAndHeaders) {
  TempDir d;
  // DIMACS edge format, detected from the content (no telling extension).
  Counted c = from_text(d, "e.txt", "c a triangle\np edge 4 4\ne 1 2\ne 2 3\ne 1 3\ne 3 4\n");
  EXPECT_EQ(c.triangles, 1u);
  c = from_text(d, "s.gr", "p sp 3 6\na 1 2 4\na 2 1 4\na 2 3 1\na 3 2 1\na 1 3 7\na 3 1 7\n");
  EXPECT_EQ(c.triangles, 1u);
  EXPECT_EQ(c.summary.duplicates, 3u);
  // PACE treewidth .gr: a 'p tw' line, then bare pairs.
  c = from_text(d, "t.gr", "c PACE\np tw 4 4\n1 2\n2 3\n3 1\n3 4\n");
  EXPECT_EQ(c.triangles, 1u);
  // CSV: header skipped, spaces around fields, a weight column; commas found in a .txt too.
  c = from_text(d, "a.txt", "source,target,weight\n1, 2 ,0.5\n2,3,1\n3,1,2\n");
  EXPECT_EQ(c.triangles, 1u);
  ConvertOptions semi = options();
  semi.delimiter = ";";
  c = from_text(d, "b.dat", "from;to\n1;2\n2;3\n3;1\n3;4\n", semi);
  EXPECT_EQ(c.triangles, 1u);
  EXPECT_EQ(c.summary.edges, 4u);
  // Quoted CSV fields (as database exports write them): a quoted id, a quoted delimiter.
  c = from_text(
      d, "q.csv",
      "\"_start\",\"_end\",\"_type\"\n\"1\",\"2\",\"KNOWS, WELL\"\n\"2\",\"3\",\"A \"\"B\"\"\"\n"
      "3,1,\"\"\n");
  EXPECT_EQ(c.triangles, 1u);
  // A header line in a plain file, auto-skipped; --header skips even a numeric one.
  c = from_text(d, "h.el", "# comment\nsrc dst\n1 2\n2 3\n3 1\n");
  EXPECT_EQ(c.triangles, 1u);
  ConvertOptions header = options();
  header.header = true;
  c = from_text(d, "n.el", "9 8\n1 2\n2 3\n3 1\n", header);
  EXPECT_EQ(c.summary.edges, 3u);
  // networkx write_edgelist with data: a dict up to the line end; its commas are not CSV.
  c = from_text(d, "x.txt", "1 2 {'w': 1, 'x': 2}\n2 3 {}\n3 1 1.5 {'t': 'a b'}\n");
  EXPECT_EQ(c.triangles, 1u);
  // Plain edge lists keep up to two further columns (KONECT's weight and time).
  c = from_text(d, "k.el", "1 2 1 1234\n2 3 1 1235\n3 1 1 1236\n");
  EXPECT_EQ(c.triangles, 1u);
  // networkx adjacency list: each edge once, a lone id is an isolated node.
  c = from_text(d, "g.adjlist", "#networkx\n1 2 3\n2 3 4\n3\n4\n5\n");
  EXPECT_EQ(c.triangles, 1u);
  EXPECT_EQ(c.summary.edges, 4u);
}

struct BadCase {
  const char* name;
  const char* text;
  const char* format;
  const char* line;  // ":LINE:" expected in the message
  const char* what;
};

TEST(Dialects, WrongShapesAreRefusedWithFileAndLine) {
  TempDir d;
  const BadCase cases[] = {
      // plain, CSV, adjlist
      {"cols.el", "1 2\n1 2 3 4 5\n", "auto", ":2:", "5 columns, but a plain edge line"},
      {"hdr2.el", "src dst\nfrom to\n1 2\n", "auto", ":2:", "unparsable token 'from'"},
      {"cols.csv", "a,b\n1,2\n1,2,3,4,5\n", "auto", ":3:", "5 columns, but a CSV edge line"},
      {"space.csv", "1,2\n1 2\n", "auto", ":2:", "expected the delimiter ',' between columns"},
      {"empty.csv", "1,2\n1,,2\n", "auto", ":2:", "empty column after the delimiter ','"},
      {"quote.csv", "\"1\",\"2\"\n\"1\",\"2\n", "auto", ":2:", "unparsable token '\"2'"},
      {"quote2.csv", "1,2\n1,\"2\"x\n", "auto", ":2:", "unparsable token '\"2\"x'"},
      {"bad.adjlist", "1 2 3\n2 x\n", "auto", ":2:", "unparsable token 'x'"},
      {"w.tsv", "1\t2\t1\n2\t3\tx\n", "auto", ":2:", "column 3 'x' is not a number"},
      // Matrix Market
      {"rect.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 5 1\n1 2\n", "auto",
       ":2:", "3 x 5 matrix is not square"},
      {"val.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 1\n", "auto",
       ":3:", "3 columns, but a 'pattern' Matrix Market entry has 2"},
      {"noval.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3\n", "auto",
       ":4:", "2 columns, but a 'real' Matrix Market entry has 3"},
      // METIS
      {"hdr.graph", "3\n2 3\n", "auto", ":1:", "bad header '3': expected 'n m [fmt [ncon]]'"},
      {"fmt.graph", "3 3 2\n", "auto", ":1:", "bad header"},
      {"dense.graph", "3 4\n", "auto", ":1:", "more than a simple graph on 3 vertices"},
      {"range.graph", "3 3\n2 3\n1 4\n1 2\n", "auto", ":3:", "neighbour 4 outside 1..3"},
      {"m_more.graph", "3 2\n2 3\n1 3\n1 2\n", "auto", ":4:",
       "more adjacency entries (each of the m = 2 edges is listed by both endpoints) than the 4 "
       "declared in the header (line 1)"},
      {"m_less.graph", "4 4\n2 3\n1 3\n1 2\n\n", "auto",
       ":1:", "the header declares 8 adjacency entries"},
      {"n_more.graph", "2 1\n2\n1\n1\n", "auto",
       ":4:", "more vertex lines than the 2 vertices the header declares"},
      {"n_less.graph", "4 3\n2 3\n1 3\n1 2\n", "auto",
       ":1:", "the header declares 4 vertices but the file has 3 vertex lines"},
      {"ew.graph", "3 3 001\n2 1 3 1\n1 1 3\n", "auto", ":3:", "neighbour 3 has no edge weight"},
      {"vw.graph", "3 3 010\n1 2 3\n\n", "auto", ":3:", "vertex 2: expected 1 vertex size"},
      // DIMACS
      {"nop.gr", "c no problem line\na 1 2 1\n", "auto", ":2:", "expected the DIMACS problem line"},
      {"arc.gr", "p sp 3 2\na 1 2\n", "auto", ":2:", "3 columns, but a DIMACS arc line is"},
      {"line.gr", "p sp 3 2\na 1 2 1\n1 2\n", "auto", ":3:", "unexpected line '1'"},
      {"vrange.gr", "p sp 3 1\na 1 5 1\n", "auto", ":2:", "vertex id 5 outside 1..3"},
      {"count.gr", "p sp 3 3\na 1 2 1\n", "auto", ":1:", "the problem line declares 3 arcs"},
      {"edge.col", "p edge 3 1\ne 1 2\ne 2 3\n", "auto", ":3:", "more edges than the 1"},
      {"pace.gr", "p tw 3 1\n1 2 3\n", "auto", ":2:", "3 columns, but a PACE edge line is"},
      {"kind.gr", "p max 3 1\n", "auto", ":1:", "bad problem line 'p max 3 1'"},
  };
  for (const BadCase& c : cases) {
    const std::string in = d.file(c.name), out = d.file(std::string(c.name) + ".tcsr");
    write_text(in, c.text);
    auto r = run_cli("convert " + q(in) + " --format " + c.format + " -o " + q(out));
    EXPECT_EQ(r.status, 1) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("error: " + in + c.line), std::string::npos) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << c.name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.name;
  }
}

TEST(Dialects, UsageErrors) {
  TempDir d;
  write_text(d.file("a.mtx"), "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n");
  auto r = run_cli("convert " + q(d.file("a.mtx")) + " --format mtx --delimiter ';' -o " +
                   q(d.file("a.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--delimiter: only for --format csv"), std::string::npos) << r.err;
  r = run_cli("convert " + q(d.file("a.mtx")) + " --delimiter 12 -o " + q(d.file("a.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--delimiter: expected one punctuation character"), std::string::npos)
      << r.err;
  r = run_cli("convert " + q(d.file("a.mtx")) + " --header -o " + q(d.file("a.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--header: mtx input has its own header"), std::string::npos) << r.err;
  r = run_cli("convert " + q(d.file("a.mtx")) + " --format gml -o " + q(d.file("a.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("metis, dimacs, adjlist"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
