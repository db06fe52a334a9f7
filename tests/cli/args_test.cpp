// args_test.cpp — the command-line parser (strict numbers with ranges, fractional sizes, bundled
// short flags, aligned help) and the CLI habits built on it: `help CMD`, -qj, --gpu-memory 1.5G,
// info and plan on edge lists.
#include "args.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "test_util.hpp"
#include "tristream/error.hpp"

namespace tristream {
namespace {

using cli::ArgParser;
using cli::parse_size;
using cli::parse_uint;
using test::run_cli;

using test::q;

// Parses a command line (words separated by spaces) with `p`.
bool parse(ArgParser& p, const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words{"cmd"};
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return p.parse(static_cast<int>(argv.size()), argv.data());
}

TEST(Args, IntegersAreStrictAndRangeChecked) {
  EXPECT_EQ(parse_uint("4096", "--threads", 1, 4096), 4096u);
  EXPECT_EQ(parse_uint("18446744073709551615", "--seed"), UINT64_MAX);
  // 2^32 + 1 was read as 1 through a 32-bit field: now out of range, never wrapped.
  for (const char* bad : {"4294967297", "0", "4097", "-1", "+4", " 4", "4 ", "4k", "0x10", "",
                          "1.5", "18446744073709551616"})
    EXPECT_THROW(parse_uint(bad, "--threads", 1, 4096), Error) << bad;
  try {
    parse_uint("4294967297", "--threads", 1, 4096);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "--threads: expected an integer in 1..4096, got 4294967297");
  }
}

TEST(Args, SizesTakeSuffixesAndFractions) {
  EXPECT_EQ(parse_size("4096", "--x"), 4096u);
  EXPECT_EQ(parse_size("512M", "--x"), 512ull << 20);
  EXPECT_EQ(parse_size("1.5G", "--x"), 3ull << 29);
  EXPECT_EQ(parse_size("1.5gib", "--x"), 3ull << 29);
  EXPECT_EQ(parse_size("0.5K", "--x"), 512u);
  EXPECT_EQ(parse_size("2.25T", "--x"), 9ull << 38);
  EXPECT_EQ(parse_size("1.0000001K", "--x"), 1024u);  // rounded down to whole bytes
  EXPECT_EQ(parse_size("16777215T", "--x"), 16777215ull << 40);
  for (const char* bad :
       {"", "G", "1.5", "1.G", ".5G", "1,5G", "1.5X", "-1G", "16777216T", "1e3", "1.5.5G"})
    EXPECT_THROW(parse_size(bad, "--x"), Error) << bad;
}

TEST(Args, BundledShortFlagsAndValues) {
  bool quiet = false, json = false;
  std::string out, in;
  std::uint64_t n = 0;
  ArgParser p("cmd", "test");
  p.positional("IN", "input", &in)
      .flag("quiet", "-q", "quiet", &quiet)
      .flag("json", "-j", "json", &json)
      .option("output", "-o", "FILE", "output", &out)
      .uint_option("threads", "N", "threads", &n, 1, 8);
  EXPECT_TRUE(parse(p, "a -qj -qo x.tcsr --threads=8"));
  EXPECT_TRUE(quiet && json);
  EXPECT_EQ(out, "x.tcsr");
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(in, "a");
  ArgParser p2("cmd", "test");
  p2.flag("quiet", "-q", "quiet", &quiet).option("output", "-o", "FILE", "output", &out);
  EXPECT_TRUE(parse(p2, "-qoy.tcsr"));
  EXPECT_EQ(out, "y.tcsr");
  ArgParser p3("cmd", "test");
  p3.flag("quiet", "-q", "quiet", &quiet);
  EXPECT_THROW(parse(p3, "-qz"), Error);
  EXPECT_THROW(parse(p3, "--quiet=1"), Error);
}

// Every option's help starts in the same column, the -h, --help line included.
void expect_aligned(const std::string& help, const std::string& what) {
  std::istringstream in(help);
  std::string line;
  bool options = false;
  std::size_t column = 0, checked = 0;
  while (std::getline(in, line)) {
    if (line == "options:") options = true;
    if (options && line.empty()) break;  // the epilog follows
    if (!options || line.size() < 3 || line[0] != ' ' || line.find("--") == std::string::npos ||
        line.find_first_not_of(' ') > 2 + 4)
      continue;
    if (line.find("  ", line.find("--")) == std::string::npos) continue;  // help on the next line
    const std::size_t gap = line.find("  ", line.find("--"));
    const std::size_t col = line.find_first_not_of(' ', gap);
    if (column == 0) column = col;
    EXPECT_EQ(col, column) << what << ": " << line;
    ++checked;
    if (line.rfind("  -h, --help", 0) == 0) {
      EXPECT_EQ(col, column) << what;
    }
  }
  EXPECT_GT(checked, 2u) << what;
  EXPECT_NE(help.find("  -h, --help"), std::string::npos) << what;
}

TEST(Args, HelpIsAlignedInEveryCommand) {
  for (const char* cmd : {"convert", "count", "info", "generate", "plan"}) {
    const auto r = run_cli(std::string(cmd) + " --help");
    ASSERT_EQ(r.status, 0) << cmd;
    expect_aligned(r.out, cmd);
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      EXPECT_LE(line.size(), 88u) << cmd << ": " << line;
  }
}

TEST(Args, HelpCommandShowsTheCommandsHelp) {
  for (const char* cmd : {"convert", "count", "info", "generate", "plan"}) {
    const auto r = run_cli(std::string("help ") + cmd);
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_EQ(r.out, run_cli(std::string(cmd) + " --help").out) << cmd;
  }
  const auto r = run_cli("help frobnicate");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli("help").status, 0);
}

TEST(Args, NumericOptionsOfEveryCommandAreRangeChecked) {
  const std::string k = q(test::data_file("karate.el"));
  const std::string o = " -o /nonexistent-dir/x.tcsr";
  for (const std::string& cmd :
       {"count " + k + " --threads 4294967297", "count " + k + " --threads 0",
        "count " + k + " --threads 4097", "count " + k + " --parts 0",
        "count " + k + " --device 4294967296", "plan " + k + " --threads 4294967297",
        "info " + k + " --threads 99999", "convert " + k + o + " --zstd-level 20",
        "convert " + k + o + " --zstd-level 0", "convert " + k + o + " --threads 4294967297",
        "convert " + k + o + " --chunk-size 1K", "generate uniform --scale 33" + o,
        "generate uniform --edge-factor 0" + o, "count " + k + " --gpu-memory 1.5"}) {
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err.rfind("error: --", 0), 0u) << cmd << ": " << r.err;
  }
  // The largest thread count is accepted and counts (ThreadSanitizer cannot shadow 4096 threads'
  // stacks, so there it is 64).
#if defined(__SANITIZE_THREAD__)
  const std::string most = "64";
#else
  const std::string most = "4096";
#endif
  const auto r =
      run_cli("count " + k + " --backend cpu --threads " + most + " --gpu-memory 1.5G -qj");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"triangles\":45,"), std::string::npos) << r.out;
}

TEST(Args, InfoAndPlanAcceptEdgeLists) {
  const std::string k = q(test::data_file("karate.el"));
  auto r = run_cli("info " + k + " -j");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"converted\":true,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"vertices\":34,"), std::string::npos) << r.out;
  r = run_cli("plan " + k + " --backend cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"vertices\":34,"), std::string::npos) << r.out;
  // A damaged .tcsr file is still reported as one, not parsed as an edge list.
  test::TempDir tmp;
  test::write_text(tmp.file("bad.tcsr"), "1 2\n2 3\n");
  r = run_cli("info " + q(tmp.file("bad.tcsr")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.tcsr"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
