// parse_test.cpp — the text parser on hostile and unusual bytes: the line cap (memory stays
// bounded on input without line ends), lone CR line ends, a UTF-8 byte order mark, control bytes
// escaped in messages, standard input named <stdin>, and ids of every length on the fast path.
#include <gtest/gtest.h>

#include <cstdlib>
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

ConvertOptions quiet_options() {
  ConvertOptions o;
  o.quiet = true;
  o.threads = 2;
  return o;
}

count_t count_file(const std::string& path) {
  tcsr::Reader r(path);
  const OrientedGraph g = r.load();
  return make_cpu_counter()->count(g.csr.view());
}

// The message of the Error that converting `text` throws ("" when it converts).
std::string convert_error(const TempDir& d, const std::string& name, const std::string& text,
                          ConvertOptions o = quiet_options()) {
  write_text(d.file(name), text);
  try {
    convert(d.file(name), d.file(name + ".tcsr"), o);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
    EXPECT_FALSE(std::filesystem::exists(d.file(name + ".tcsr")));
    return e.what();
  }
  return "";
}

// AddressSanitizer and ThreadSanitizer reserve terabytes of address space: no `ulimit -v` under
// them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kAddressLimit = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kAddressLimit = false;
#else
constexpr bool kAddressLimit = true;
#endif
#else
constexpr bool kAddressLimit = true;
#endif

// Runs a shell command line with the tristream binary as $T, at most 1 GB of address space
// (unbounded memory fails instead of filling the machine) and 60 s; returns the exit status and
// stderr.
test::RunResult run_shell(const TempDir& d, const std::string& line) {
  const std::string err = d.file("shell.err");
  const std::string cmd = std::string(kAddressLimit ? "ulimit -v 1000000; " : "") + "export T='" +
                          std::string(TRISTREAM_BINARY) + "'; timeout 60 sh -c '" + line + "' 2>'" +
                          err + "'";
  const int raw = std::system(cmd.c_str());
  test::RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
  r.err = test::read_text(err);
  return r;
}

TEST(Parse, LineWithoutEndOnStdinStopsAtTheCap) {
  // `yes 1 | tr -d '\n'` never ends a line: the converter must stop at the cap, not grow.
  TempDir d;
  auto r = run_shell(d, "yes 1 | tr -d \"\\n\" | $T convert - -o " + d.file("y.tcsr") +
                            " --memory-limit 16M --quiet");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("<stdin>:1: line longer than 1048576 bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.file("y.tcsr")));
}

TEST(Parse, DevZeroAsPlainStopsAtTheCap) {
  TempDir d;
  auto r = run_shell(d, "$T convert /dev/zero --format plain -o " + d.file("z.tcsr") + " -q");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("/dev/zero:1: line longer than 1048576 bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.file("z.tcsr")));
}

TEST(Parse, LongLineInsideABlockIsRefusedWithItsLine) {
  TempDir d;
  const std::string msg =
      convert_error(d, "l.el", "1 2\n2 3\n3 1" + std::string(2 << 20, ' ') + "\n4 5\n");
  EXPECT_NE(msg.find("l.el:3: line longer than 1048576 bytes"), std::string::npos) << msg;
  // A long comment in a Matrix Market header.
  const std::string mtx = "%%MatrixMarket matrix coordinate pattern general\n%" +
                          std::string(2 << 20, 'x') + "\n2 2 1\n1 2\n";
  EXPECT_NE(convert_error(d, "h.mtx", mtx).find("h.mtx:2: line longer than"), std::string::npos);
}

TEST(Parse, EndlessLastLineFarInIsNamedByItsLine) {
  // Many 64 KiB jobs, then 3 MiB without a line end: the reader stops at the cap.
  TempDir d;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  ConvertOptions o = quiet_options();
  o.memory_limit = 4 << 20;
  const std::string msg = convert_error(d, "e.el", text + std::string(3 << 20, '7'), o);
  EXPECT_NE(msg.find("e.el:100001: line longer than 1048576 bytes"), std::string::npos) << msg;
}

TEST(Parse, AdjacencyLinesGetALargerCapUnderALargerLimit) {
  // 1.5 MiB of neighbours on one line: over the 1 MiB cap of a 16M limit, under the 4 MiB cap of
  // a 1G limit.
  TempDir d;
  std::string line = "1";
  for (int v = 2; line.size() < (3u << 19); ++v) line += " " + std::to_string(v);
  const std::string text = line + "\n2 3\n";
  ConvertOptions small = quiet_options();
  small.memory_limit = 16 << 20;
  EXPECT_NE(convert_error(d, "a.adjlist", text, small).find("a.adjlist:1: line longer than"),
            std::string::npos);
  ConvertOptions big = quiet_options();
  big.memory_limit = std::uint64_t{1} << 30;
  EXPECT_EQ(convert_error(d, "b.adjlist", text, big), "");
  EXPECT_EQ(count_file(d.file("b.adjlist.tcsr")), 1u);  // 1-2-3
}

TEST(Parse, LoneCrEndsALine) {
  TempDir d;
  write_text(d.file("cr.el"), "1 2\r2 3\r3 1\r");
  const ConvertSummary s = convert(d.file("cr.el"), d.file("cr.tcsr"), quiet_options());
  EXPECT_EQ(s.input_edges, 3u);
  EXPECT_EQ(s.edges, 3u);
  EXPECT_EQ(count_file(d.file("cr.tcsr")), 1u);
  // Mixed line ends count one line each; a blank CR line too.
  EXPECT_NE(convert_error(d, "m.el", "1 2\r\n2 3\r\r3 1\n4 x\r").find("m.el:5: unparsable"),
            std::string::npos);
  // A lone CR in a Matrix Market header.
  write_text(d.file("c.mtx"),
             "%%MatrixMarket matrix coordinate pattern general\r3 3 3\r1 2\r2 "
             "3\r3 1");
  EXPECT_EQ(convert(d.file("c.mtx"), d.file("c.tcsr"), quiet_options()).edges, 3u);
}

TEST(Parse, CrLineNumbersAcrossParallelBlocks) {
  // 64 KiB jobs cut CR-only and CRLF text; some cuts fall between the CR and the LF.
  TempDir d;
  for (const char* eol : {"\r", "\r\n"}) {
    std::string text;
    for (int i = 0; i < 60000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + eol;
    text += std::string("7 y") + eol;
    ConvertOptions o = quiet_options();
    o.memory_limit = 4 << 20;
    o.threads = 4;
    const std::string msg = convert_error(d, "cr.el", text, o);
    EXPECT_NE(msg.find("cr.el:60001: unparsable token 'y'"), std::string::npos) << msg;
    text.resize(text.size() - 3 - std::string(eol).size());
    EXPECT_EQ(convert_error(d, "ok.el", text, o), "");
  }
}

TEST(Parse, LongCommentPreambleKeepsLineNumbers) {
  // The header reader walks comment lines across many refills of its buffer.
  TempDir d;
  std::string comments;
  for (int i = 0; i < 100000; ++i) comments += "# comment line " + std::to_string(i) + "\n";
  ConvertOptions o = quiet_options();
  o.memory_limit = 4 << 20;
  std::string msg = convert_error(d, "c.el", comments + "src dst\n1 2\n2 x\n", o);
  EXPECT_NE(msg.find("c.el:100003: unparsable token 'x'"), std::string::npos) << msg;
  std::string dimacs;
  for (int i = 0; i < 100000; ++i) dimacs += "c comment line " + std::to_string(i) + "\n";
  msg = convert_error(d, "c.gr", dimacs + "p sp 3 2\na 1 2 1\na 2 x 1\n", o);
  EXPECT_NE(msg.find("c.gr:100003: unparsable token 'x'"), std::string::npos) << msg;
}

TEST(Parse, Utf8ByteOrderMarkIsSkipped) {
  TempDir d;
  write_text(d.file("b.el"),
             "\xEF\xBB\xBF"
             "1 2\n2 3\n3 1\n");
  EXPECT_EQ(convert(d.file("b.el"), d.file("b.tcsr"), quiet_options()).edges, 3u);
  write_text(d.file("b.mtx"),
             "\xEF\xBB\xBF%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 1\n"
             "3 2\n");
  EXPECT_EQ(convert(d.file("b.mtx"), d.file("m.tcsr"), quiet_options()).edges, 3u);
  EXPECT_EQ(count_file(d.file("m.tcsr")), 1u);
}

TEST(Parse, ControlBytesInTokensAreEscaped) {
  TempDir d;
  EXPECT_NE(convert_error(d, "f.el", "1 2\n2\f 3\n").find(":2: unparsable token '2\\f'"),
            std::string::npos);
  EXPECT_NE(convert_error(d, "v.el", "1 2\n\v3 4\n").find(":2: unparsable token '\\v3'"),
            std::string::npos);
  // Other control bytes make the input look binary unless the dialect is given.
  ConvertOptions plain = quiet_options();
  plain.format = "plain";
  EXPECT_NE(convert_error(d, "x.el", "1 a\x01z\n", plain).find("unparsable token 'a\\x01z'"),
            std::string::npos);
}

// The fast path reads up to 8 digits from one 8-byte load (the rest one by one): ids of every
// length from 1 to 20 digits, a last line without its end a few bytes before the end of the
// input, and bytes right after the digits, of 2 and of 8, that look like digits to a nibble test
// (':' is 0x3A) or carry (0xFA).
TEST(Parse, IdsOfEveryLengthAndBytesAfterThem) {
  TempDir d;
  std::string text;
  std::vector<test::OrigEdge> want;
  std::uint64_t p = 1;
  for (int digits = 1; digits <= 20; ++digits, p *= 10) {
    const std::uint64_t a = digits == 20 ? 18446744073709551615ull : p + 7 * (p / 10);
    const std::uint64_t b = digits == 1 ? 9 : a - 1;
    text += std::to_string(a) + (digits % 2 ? " " : "\t") + std::to_string(b) + "\n";
    want.push_back({a, b});
  }
  text += "12 3";  // no line end, 4 bytes before the end
  want.push_back({12, 3});
  write_text(d.file("ids.el"), text);
  convert(d.file("ids.el"), d.file("ids.tcsr"), quiet_options());
  EXPECT_EQ(test::edge_set(d.file("ids.tcsr")), test::clean(want));
  EXPECT_NE(convert_error(d, "colon.el", "1 2\n12:3 4\n5 6\n").find(":2: unparsable token '12:3'"),
            std::string::npos);
  EXPECT_NE(convert_error(d, "high.el", "1 2\n5 6\xfa\n7 8\n").find(":2:"), std::string::npos);
  EXPECT_NE(convert_error(d, "colon8.el", "1 2\n12345678:3 4\n5 6\n")
                .find(":2: unparsable token '12345678:3'"),
            std::string::npos);
  EXPECT_NE(convert_error(d, "high8.el", "1 2\n5 12345678\xfa\n7 8\n").find(":2:"),
            std::string::npos);
}

TEST(Parse, StandardInputIsNamedStdin) {
  TempDir d;
  auto r = run_shell(d, "$T convert - -o " + d.file("s.tcsr") + " <&-");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: <stdin>: cannot read"), std::string::npos) << r.err;
  r = run_shell(d, "printf \"1 2\\n2 x\\n\" | $T convert - -o " + d.file("s.tcsr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: <stdin>:2: unparsable token 'x'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tristream
