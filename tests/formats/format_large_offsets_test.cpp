// format_large_offsets_test.cpp — the row offsets of a file with millions of vertices (a section
// above 64 MiB, which the reader reads and checks on several threads): they read back exactly,
// and a damaged one is the same error as in a small file, naming the first row that breaks a
// rule or the checksum; with the checksum left for later (OpenOptions), verify_offsets() raises
// it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "../../formats/layout.hpp"
#include "../../formats/xxh64.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using namespace tcsr::detail;

// 9 M vertices (72 MB of offsets), a path through every 1000th vertex and a star at vertex 7.
OrientedGraph sparse_large_graph() {
  const vid_t n = 9000000;
  test::EdgeList e;
  for (vid_t v = 0; v + 1000 < n; v += 1000) e.emplace_back(v, v + 1000);
  for (vid_t v = 8; v < 4000; ++v) e.emplace_back(7, v);
  e.emplace_back(0, n - 1);
  return orient_edge_list(n, e);
}

// Overwrites 8 bytes at `at`, then the row offsets' checksum and the header's, so that only the
// reader's structural checks can see the change.
void put_resealed(const std::string& path, std::uint64_t at, std::uint64_t value) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  unsigned char head[kHeaderSize];
  f.read(reinterpret_cast<char*>(head), kHeaderSize);
  unsigned char* entry = head + kOffSectionTable + (kRowOffsets - 1) * kSectionEntrySize;
  const std::uint64_t offset = get_u64(entry + kSecOffset), size = get_u64(entry + kSecSize);
  test::Bytes sec(size);
  f.seekg(static_cast<std::streamoff>(offset));
  f.read(reinterpret_cast<char*>(sec.data()), static_cast<std::streamsize>(size));
  put_u64(sec.data() + (at - offset), value);
  put_u64(entry + kSecChecksum, xxh64(sec.data(), size));
  put_u64(head + kOffHeaderChecksum, xxh64(head, kOffHeaderChecksum));
  f.seekp(0);
  f.write(reinterpret_cast<const char*>(head), kHeaderSize);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(reinterpret_cast<const char*>(sec.data()), static_cast<std::streamsize>(size));
}

std::uint64_t offsets_at(const std::string& path) {
  const tcsr::Reader r(path);
  (void)r;
  std::ifstream f(path, std::ios::binary);
  unsigned char head[kHeaderSize];
  f.read(reinterpret_cast<char*>(head), kHeaderSize);
  return get_u64(head + kOffSectionTable + (kRowOffsets - 1) * kSectionEntrySize + kSecOffset);
}

TEST(FormatLargeOffsets, MillionsOfRowsReadBackExactly) {
  const OrientedGraph g = sparse_large_graph();
  test::TempDir dir;
  tcsr::write_file(dir.file("g.tcsr"), g);
  const tcsr::Reader r(dir.file("g.tcsr"));
  ASSERT_EQ(r.n(), g.n());
  EXPECT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), r.offsets()));
  std::uint64_t max_out = 0;
  for (vid_t v = 0; v < g.n(); ++v)
    max_out = std::max<std::uint64_t>(max_out, g.csr.offsets[v + 1] - g.csr.offsets[v]);
  EXPECT_EQ(r.header().max_out_degree, max_out);
}

TEST(FormatLargeOffsets, ADecreasingRowFarInIsNamed) {
  const OrientedGraph g = sparse_large_graph();
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  tcsr::write_file(path, g);
  const std::uint64_t base = offsets_at(path);
  // A row past the middle whose rows before it hold edges: offsets[row + 1] < offsets[row].
  std::uint64_t row = g.n() * 3 / 4;
  while (g.csr.offsets[row] == 0) ++row;
  put_resealed(path, base + 8 * (row + 1), g.csr.offsets[row] - 1);
  try {
    tcsr::Reader r(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(std::string(e.what()),
              path + ": section row offsets: offsets decrease at row " + std::to_string(row));
  }
}

TEST(FormatLargeOffsets, ADamagedByteIsAChecksumMismatch) {
  const OrientedGraph g = sparse_large_graph();
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  tcsr::write_file(path, g);
  const std::uint64_t at = offsets_at(path) + 8 * 8000001 + 3;
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(at));
    f.put('\x5a');
  }
  test::expect_input_error([&] { tcsr::Reader r(path); },
                           {path, "section row offsets", "checksum mismatch"});
}

// OpenOptions::offsets_checksum_later, on a section read on one thread and on one read on several:
// the open succeeds with the offsets as stored, verify_offsets() then raises the open's error
// (every time it is called); an intact file's verify_offsets() passes.
TEST(FormatLargeOffsets, AChecksumLeftForLaterFailsWhenVerified) {
  tcsr::OpenOptions later;
  later.offsets_checksum_later = true;
  for (const bool large : {false, true}) {
    SCOPED_TRACE(large ? "section read on several threads" : "section read on one thread");
    const OrientedGraph g =
        large ? sparse_large_graph() : orient_edge_list(50, test::skewed_graph(50, 300, 5));
    test::TempDir dir;
    const std::string path = dir.file("g.tcsr");
    tcsr::write_file(path, g);
    {
      const tcsr::Reader intact(path, later);
      EXPECT_NO_THROW(intact.verify_offsets());
      EXPECT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), intact.offsets()));
    }
    test::flip_offsets_checksum(path);
    test::expect_input_error([&] { tcsr::Reader r(path); },
                             {path, "section row offsets", "checksum mismatch"});
    const tcsr::Reader r(path, later);
    EXPECT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), r.offsets()));
    for (int twice = 0; twice < 2; ++twice)
      test::expect_input_error([&] { r.verify_offsets(); },
                               {path, "section row offsets", "checksum mismatch"});
  }
}

}  // namespace
}  // namespace tristream
