// census_extension_test.cpp — the census extension (format version 3, tcsr::attach_census): the
// payload comes back, the graph reads as before, a second attach replaces the first, and every
// flipped byte and every truncation of a version-3 file is an input error. A writer whose
// sections were written before the census was set (Writer::write_sections) writes the same bytes
// as one that wrote everything at finish(), with names and without; after its sections it takes
// no more rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;
using test::Bytes;

std::string small_file(const test::TempDir& dir) {
  const std::string path = dir.file("small.tcsr");
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 32;
  opt.threads = 1;
  tcsr::write_file(path, orient_edge_list(40, test::random_graph(40, 150, 3)), opt);
  return path;
}

std::vector<unsigned char> payload(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(seed + i * 7);
  return p;
}

// A graph written through a Writer with the census set at the end: its sections written first
// (write_sections) or by finish(); with vertex names or without.
std::string written(const test::TempDir& dir, const std::string& name, bool sections_first,
                    bool names) {
  const std::string path = dir.file(name);
  const OrientedGraph g = orient_edge_list(300, test::random_graph(300, 4000, 5));
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 256;
  opt.threads = 3;
  tcsr::Writer w(path, g.csr.rows(), opt);
  w.set_permutation(g.perm);
  if (names) {
    tcsr::Names nm;
    for (std::uint64_t v = 0; v < g.csr.rows(); ++v) nm.add("v" + std::to_string(v * 7));
    w.set_names(std::move(nm));
  }
  w.append_rows(g.csr.cols.data(), g.csr.offsets.data(), g.csr.rows());
  if (sections_first) w.write_sections();
  w.set_census(payload(500, 4));
  w.finish();
  return path;
}

TEST(CensusExtension, SectionsWrittenBeforeTheCensusGiveTheSameBytes) {
  test::TempDir dir;
  for (bool names : {false, true}) {
    const std::string a = test::read_text(written(dir, "a.tcsr", true, names));
    const std::string b = test::read_text(written(dir, "b.tcsr", false, names));
    EXPECT_TRUE(a == b) << "names " << names;
    const tcsr::Reader r(dir.file("a.tcsr"));
    EXPECT_EQ(r.census(), payload(500, 4));
    EXPECT_EQ(r.has_names(), names);
    r.check(2);
  }
}

TEST(CensusExtension, NoRowsAfterTheSectionsAreWritten) {
  test::TempDir dir;
  tcsr::Writer w(dir.file("x.tcsr"), 3);
  const vid_t row0[] = {1, 2};
  w.append_row(row0, 2);
  w.append_row(nullptr, 0);
  w.append_row(nullptr, 0);
  w.write_sections();
  EXPECT_THROW(w.append_row(nullptr, 0), Error);
  EXPECT_THROW(w.set_permutation({0, 1, 2}), Error);
}

TEST(CensusExtension, AttachKeepsTheGraphAndReturnsThePayload) {
  test::TempDir dir;
  const std::string path = small_file(dir);
  const OrientedGraph before = tcsr::Reader(path).load(true, 1);
  EXPECT_FALSE(tcsr::Reader(path).has_census());
  tcsr::attach_census(path, payload(1000, 1));
  {
    const tcsr::Reader r(path);
    EXPECT_TRUE(r.has_census());
    EXPECT_EQ(r.header().version, tcsr::kFormatVersionCensus);
    EXPECT_EQ(r.census(), payload(1000, 1));
    const std::vector<unsigned char> all = payload(1000, 1);
    EXPECT_EQ(r.census(10), std::vector<unsigned char>(all.begin(), all.begin() + 10));
    const OrientedGraph after = r.load(true, 1);
    EXPECT_EQ(before.csr.offsets, after.csr.offsets);
    EXPECT_EQ(before.csr.cols, after.csr.cols);
    EXPECT_EQ(before.perm, after.perm);
    r.check(1);
  }
  // A second attach replaces the extension.
  tcsr::attach_census(path, payload(33, 9));
  const tcsr::Reader r(path);
  EXPECT_EQ(r.census(), payload(33, 9));
  EXPECT_EQ(r.load(false, 1).csr.cols, before.csr.cols);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename(), "small.tcsr") << "a temporary was left";
}

TEST(CensusExtension, EveryFlippedByteIsDetected) {
  test::TempDir dir;
  const std::string path = small_file(dir);
  tcsr::attach_census(path, payload(200, 5));
  const Bytes good = test::read_bytes(path);
  const std::string bad = dir.file("bad.tcsr");
  for (std::size_t i = 0; i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= 0x41;
    test::write_bytes(bad, b);
    SCOPED_TRACE(i);
    test::expect_input_error(
        [&] {
          const tcsr::Reader r(bad);
          r.check(1);
          (void)r.census();
        },
        {bad});
  }
}

TEST(CensusExtension, EveryTruncationIsDetected) {
  test::TempDir dir;
  const std::string path = small_file(dir);
  tcsr::attach_census(path, payload(200, 5));
  const Bytes good = test::read_bytes(path);
  const std::string bad = dir.file("bad.tcsr");
  test::write_bytes(bad, good);
  for (std::size_t len = good.size(); len-- > 0;) {
    fs::resize_file(bad, len);
    test::expect_input_error(
        [&] {
          tcsr::Reader r(bad);
          (void)r.census();
        },
        {bad + ": section "});
  }
}

TEST(CensusExtension, AnInvalidFileIsNotRewritten) {
  test::TempDir dir;
  const std::string path = dir.file("edges.tcsr");
  test::write_text(path, "1 2\n");
  test::expect_input_error([&] { tcsr::attach_census(path, payload(10, 1)); }, {path});
  EXPECT_EQ(test::read_text(path), "1 2\n");
}

}  // namespace
}  // namespace tristream
