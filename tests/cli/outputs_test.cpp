// outputs_test.cpp — the tristream binary's outputs: checked and created before the work (never
// the input, never a directory), '-' for standard output, temporaries that a planted symlink
// cannot redirect, the count kept when an output fails, and the per-vertex table
// (vertex,degree,triangles,clustering; CSV or TSV; --count-isolated).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;
using test::run_cli;

using test::q;

// Runs a bash script (the binary is $T); stdout and stderr through pipes, so a file size limit
// set inside the script applies to the outputs the binary writes and not to these captures.
test::RunResult run_bash(const test::TempDir& tmp, const std::string& script) {
  const std::string out = tmp.file("sh.out"), err = tmp.file("sh.err"), st = tmp.file("sh.st");
  const std::string sh = tmp.file("sh.sh"), runner = tmp.file("run.sh");
  test::write_text(sh, "T='" + std::string(TRISTREAM_BINARY) + "'\n" + script);
  // stderr to one pipe, stdout (through fd 3) to another; a pipeline waits for all its members.
  test::write_text(runner, "{ bash " + q(sh) + " 2>&1 1>&3 3>&- | cat >" + q(err) +
                               "; exit ${PIPESTATUS[0]}; } 3>&1 | cat >" + q(out) +
                               "\necho ${PIPESTATUS[0]} >" + q(st) + "\n");
  // The script's own status is read from `st`; system()'s is only checked for a failed start.
  const int started = std::system(("bash " + q(runner) + " </dev/null").c_str());
  EXPECT_NE(started, -1) << "cannot start bash";
  test::RunResult r;
  r.out = test::read_text(out);
  r.err = test::read_text(err);
  r.status = std::stoi(test::read_text(st));
  return r;
}

std::string karate() {
  return q(test::data_file("karate.el"));
}

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

TEST(CliOutputs, PlantedSymlinksAtTheOldTemporaryNamesAreNotFollowed) {
  test::TempDir tmp;
  const std::string victim = tmp.file("victim.txt");
  test::write_text(victim, "precious\n");
  // `exec` keeps the shell's pid ($$), so the links sit at the names the writers used to take:
  // PATH.tmp.PID for --per-vertex and generated edge lists, PATH.tmp.PID.0 for a .tcsr file.
  const std::string script = "cd " + q(tmp.path()) +
                             "\n"
                             "ln -s victim.txt pv.csv.tmp.$$\n"
                             "ln -s victim.txt g.tcsr.tmp.$$.0\n"
                             "exec \"$T\" count " +
                             karate() + " --backend cpu --per-vertex pv.csv\n";
  auto r = run_bash(tmp, script);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_bash(tmp, "cd " + q(tmp.path()) +
                        "\nln -sf victim.txt g.tcsr.tmp.$$.0\nexec \"$T\" convert " + karate() +
                        " -o g.tcsr -q\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_bash(tmp, "cd " + q(tmp.path()) +
                        "\nln -sf victim.txt u.el.tmp.$$\nexec \"$T\" generate uniform --scale 4 "
                        "-o u.el -q\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_text(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(tmp.file("pv.csv")));
  EXPECT_EQ(test::read_text(tmp.file("pv.csv")).rfind("vertex,degree,", 0), 0u);
  EXPECT_FALSE(fs::is_symlink(tmp.file("g.tcsr")));
  EXPECT_EQ(run_cli("info " + q(tmp.file("g.tcsr")) + " --check").status, 0);
}

TEST(CliOutputs, OutputThatIsTheInputIsRefusedBeforeTheWork) {
  test::TempDir tmp;
  const std::string el = tmp.file("g.el");
  fs::copy_file(test::data_file("karate.el"), el);
  const std::string before = test::read_text(el);
  auto r = run_cli("convert " + q(el) + " -o " + q(el));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_text(el), before);

  const std::string g = tmp.file("g.tcsr");
  ASSERT_EQ(run_cli("convert " + q(el) + " -o " + q(g) + " -q").status, 0);
  for (const char* opt : {"--per-vertex", "--trace"}) {
    r = run_cli("count " + q(g) + " --backend cpu " + opt + " " + q(g));
    EXPECT_EQ(r.status, 1) << opt;
    EXPECT_NE(r.err.find(std::string(opt) + ": "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "refused before counting";
  }
  EXPECT_EQ(run_cli("info " + q(g) + " --check").status, 0) << "the graph is intact";
  EXPECT_EQ(entries(tmp.path()), 2u);
}

TEST(CliOutputs, DirectoryOutputIsRefusedBeforeTheWork) {
  test::TempDir tmp;
  auto r = run_cli("convert " + karate() + " -o " + q(tmp.path()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  r = run_cli("count " + karate() + " --backend cpu --per-vertex " + q(tmp.path()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--per-vertex: '" + tmp.path() + "' is a directory"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(entries(tmp.path()), 0u);
}

TEST(CliOutputs, TmpDirThatIsAFileIsAClearError) {
  test::TempDir tmp;
  const std::string file = tmp.file("f");
  test::write_text(file, "x");
  for (const std::string& cmd : {"count " + karate() + " --backend cpu",
                                 "convert " + karate() + " -o " + q(tmp.file("o.tcsr"))}) {
    auto r = run_cli(cmd + " --tmp-dir " + q(file));
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_NE(r.err.find("--tmp-dir: '" + file + "' is not a directory"), std::string::npos)
        << r.err;
  }
}

TEST(CliOutputs, UnwritableOutputIsFoundBeforeTheWork) {
  test::TempDir tmp;
  // The input has a parse error on line 3: an output checked first is reported instead of it.
  const std::string bad = tmp.file("bad.el");
  test::write_text(bad, "1 2\n2 3\n3 x\n");
  auto r =
      run_cli("count " + q(bad) + " --backend cpu --per-vertex " + q(tmp.file("missing/pv.csv")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing/pv.csv"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bad.el:3"), std::string::npos) << r.err;
  r = run_cli("convert " + q(bad) + " -o " + q(tmp.file("missing/g.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing/g.tcsr"), std::string::npos) << r.err;
}

TEST(CliOutputs, FailedOutputWriteStillPrintsTheCount) {
  test::TempDir tmp;
  const std::string g = tmp.file("g.tcsr");
  ASSERT_EQ(run_cli("convert " + karate() + " -o " + q(g) + " -q").status, 0);
  // A file size limit of 0 makes every write to a regular file fail (EFBIG) once the count is
  // done; the outputs were created (empty) before it.
  auto r = run_bash(tmp, "trap '' XFSZ\nulimit -f 0\nexec \"$T\" count " + q(g) +
                             " --backend cpu --per-vertex " + q(tmp.file("pv.csv")) + " --trace " +
                             q(tmp.file("t.json")) + "\n");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("triangles     45"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("pv.csv: write failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("t.json: write failed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("pv.csv")));
  EXPECT_FALSE(fs::exists(tmp.file("t.json")));
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(CliOutputs, DashIsStandardOutput) {
  test::TempDir tmp;
  auto r = run_cli("count " + karate() + " --backend cpu --per-vertex -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("vertex,degree,triangles,clustering\n1,16,18,0.15\n", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("triangles     45"), std::string::npos) << "summary on stderr: " << r.err;

  r = run_cli("convert " + karate() + " -o - -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string piped = tmp.file("piped.tcsr"), direct = tmp.file("direct.tcsr");
  {
    std::ofstream f(piped, std::ios::binary);
    f << r.out;
  }
  ASSERT_EQ(run_cli("convert " + karate() + " -o " + q(direct) + " -q").status, 0);
  EXPECT_EQ(test::read_text(piped), test::read_text(direct));
  EXPECT_NE(r.err.find("output          <stdout>"), std::string::npos) << r.err;
  EXPECT_EQ(entries(tmp.path()), 2u);
}

TEST(CliOutputs, PerVertexTsvAndTrace) {
  test::TempDir tmp;
  const std::string tsv = tmp.file("pv.tsv"), trace = tmp.file("t.json");
  auto r = run_cli("count " + karate() + " --backend cpu --per-vertex " + q(tsv) + " --trace " +
                   q(trace));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(
      test::read_text(tsv).rfind("vertex\tdegree\ttriangles\tclustering\n1\t16\t18\t0.15\n", 0),
      0u);
  EXPECT_NE(test::read_text(trace).find("\"traceEvents\""), std::string::npos);
  EXPECT_EQ(entries(tmp.path()), 2u);
}

// A Matrix Market file declaring 44 vertices of which karate's 34 have edges: networkx over the
// 44 nodes gives an average clustering of 0.5706384782076823 * 34 / 44.
TEST(CliOutputs, CountIsolatedAddsDeclaredVertices) {
  test::TempDir tmp;
  std::ifstream in(test::data_file("karate.el"));
  std::ostringstream body;
  std::string line;
  unsigned edges = 0;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') body << line << "\n", ++edges;
  const std::string mtx = tmp.file("k.mtx");
  test::write_text(mtx, "%%MatrixMarket matrix coordinate pattern symmetric\n44 44 " +
                            std::to_string(edges) + "\n" + body.str());
  auto r = run_cli("count " + q(mtx) + " --backend cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"vertices\":34,"), std::string::npos) << r.out;
  const std::string pv = tmp.file("pv.csv");
  r = run_cli("count " + q(mtx) + " --backend cpu --json --count-isolated --per-vertex " + q(pv));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"vertices\":44,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"isolated_vertices\":10,"), std::string::npos) << r.out;
  const auto at = r.out.find("\"average_clustering\":");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NEAR(std::stod(r.out.substr(at + 21)), 0.5706384782076823 * 34 / 44, 1e-15);
  std::istringstream rows(test::read_text(pv));
  std::getline(rows, line);
  unsigned count = 0;
  while (std::getline(rows, line)) {
    ++count;
    EXPECT_EQ(line.rfind(std::to_string(count) + ",", 0), 0u) << line;
    if (count > 34) {
      EXPECT_EQ(line, std::to_string(count) + ",0,0,0");
    }
  }
  EXPECT_EQ(count, 44u);

  // A .tcsr file does not record the declared vertices: refused with a hint.
  const std::string g = tmp.file("k.tcsr");
  ASSERT_EQ(run_cli("convert " + q(mtx) + " -o " + q(g) + " -q").status, 0);
  r = run_cli("count " + q(g) + " --backend cpu --count-isolated");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--count-isolated"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
