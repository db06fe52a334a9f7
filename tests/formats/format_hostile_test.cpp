// format_hostile_test.cpp — the .tcsr reader against crafted files whose checksums are valid
// (the header's counts must not size allocations the file cannot back) and against a file that
// shrinks or is rewritten after it was opened (an error naming it, never SIGBUS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "../../formats/layout.hpp"
#include "../../formats/reseal.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;
using namespace tcsr::detail;
using test::Bytes;

using test::read_bytes;
using test::write_bytes;

using test::expect_input_error;

// A hand-made file: the header's counts, the row offsets and one entry per chunk are given; the
// frames are placeholder bytes (the reader must refuse the file before it decompresses any).
struct Crafted {
  std::uint64_t n = 0, m = 0, max_out_degree = 0, max_degree = 0, chunk_edges = 0;
  std::vector<eid_t> offsets;         // n + 1
  std::vector<std::uint64_t> edges;   // per chunk
  std::uint64_t frame_bytes = 16;     // per chunk
  std::uint64_t raw_size_factor = 4;  // raw_size = factor * edges
};

// Lays `c` out as FORMAT.md says (first_row and rows from the offsets) and reseals it.
Bytes build(const Crafted& c) {
  const std::uint64_t chunks = c.edges.size();
  const std::uint64_t adjacency = kHeaderSize, adj_size = chunks * c.frame_bytes;
  const std::uint64_t row_offsets = (adjacency + adj_size + 7) / 8 * 8;
  const std::uint64_t index = row_offsets + (c.n + 1) * 8;
  const std::uint64_t perm = index + chunks * kChunkEntrySize;
  Bytes b(perm + c.n * 8, 0);
  unsigned char* h = b.data();
  std::memcpy(h + kOffMagic, tcsr::kMagic, sizeof tcsr::kMagic);
  put_u32(h + kOffVersion, tcsr::kFormatVersion);
  put_u32(h + kOffFlags, tcsr::kFlagDelta);
  put_u64(h + kOffN, c.n);
  put_u64(h + kOffM, c.m);
  put_u64(h + kOffMaxOutDegree, c.max_out_degree);
  put_u64(h + kOffMaxDegree, c.max_degree);
  put_u64(h + kOffChunkEdges, c.chunk_edges);
  put_u64(h + kOffNumChunks, chunks);
  put_u32(h + kOffHeaderSize, kHeaderSize);
  put_u32(h + kOffSectionCount, kSectionCount);
  const std::uint64_t where[][2] = {{row_offsets, (c.n + 1) * 8},
                                    {index, chunks * kChunkEntrySize},
                                    {adjacency, adj_size},
                                    {perm, c.n * 8}};
  for (std::uint32_t i = 0; i < kSectionCount; ++i) {
    unsigned char* e = h + kOffSectionTable + i * kSectionEntrySize;
    put_u32(e + kSecKind, i + 1);
    put_u64(e + kSecOffset, where[i][0]);
    put_u64(e + kSecSize, where[i][1]);
  }
  for (std::uint64_t r = 0; r <= c.n; ++r) put_u64(h + row_offsets + 8 * r, c.offsets[r]);
  for (std::uint64_t v = 0; v < c.n; ++v) put_u64(h + perm + 8 * v, v);
  auto row_of = [&](eid_t e) {
    return static_cast<std::uint64_t>(std::upper_bound(c.offsets.begin(), c.offsets.end(), e) -
                                      c.offsets.begin() - 1);
  };
  eid_t first = 0;
  for (std::uint64_t k = 0; k < chunks; ++k) {
    unsigned char* e = h + index + k * kChunkEntrySize;
    const std::uint64_t first_row = row_of(first);
    put_u64(e + kChunkFirstRow, first_row);
    put_u64(e + kChunkFirstEdge, first);
    put_u64(e + kChunkRows, row_of(first + c.edges[k] - 1) - first_row + 1);
    put_u64(e + kChunkEdges, c.edges[k]);
    put_u64(e + kChunkFileOffset, adjacency + k * c.frame_bytes);
    put_u64(e + kChunkCompressedSize, c.frame_bytes);
    put_u64(e + kChunkRawSize, c.raw_size_factor * c.edges[k]);
    first += c.edges[k];
  }
  reseal(b);
  return b;
}

// n = 2 with m edges all in row 0: one chunk holding them all.
Crafted two_vertices(std::uint64_t m) {
  Crafted c;
  c.n = 2;
  c.m = c.max_out_degree = c.max_degree = c.chunk_edges = m;
  c.offsets = {0, m, m};
  c.edges = {m};
  return c;
}

// The crafted layout itself is sound: a file that keeps to the header's limits opens (and fails
// only when its placeholder frame is decompressed).
TEST(FormatHostile, CraftedLayoutOpensWhenConsistent) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  write_bytes(path, build(two_vertices(1)));
  tcsr::Reader r(path);
  EXPECT_EQ(r.m(), 1u);
  vid_t out[1];
  expect_input_error([&] { r.read_chunk(0, out); }, {path, "section adjacency: chunk 0"});
}

TEST(FormatHostile, TwoVerticesWithTwoToThe32EdgesIsRefusedAtOpen) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  const Bytes b = build(two_vertices(1ull << 32));
  EXPECT_LT(b.size(), 400u);
  write_bytes(path, b);
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "n(n-1)/2"});
}

TEST(FormatHostile, TwoToThe40EdgesIsRefusedAtOpen) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  write_bytes(path, build(two_vertices(1ull << 40)));
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "n(n-1)/2"});
}

TEST(FormatHostile, MaxDegreeOfNOrMoreIsRefused) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  Crafted c = two_vertices(1);
  c.max_degree = 2;
  write_bytes(path, build(c));
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "n - 1"});
}

// The degrees sum to 2m: with m = 1 no vertex has degree 3 (below n - 1 = 3 and the
// out-degrees, so only the sum rules it out); with m = 3 on 4 vertices none has only 1.
TEST(FormatHostile, MaxDegreeOutsideWhatTheEdgeCountAllows) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  Crafted c;
  c.n = 4;
  c.m = 1;
  c.max_out_degree = 1;
  c.max_degree = 3;
  c.chunk_edges = 4;
  c.offsets = {0, 1, 1, 1, 1};
  c.edges = {1};
  write_bytes(path, build(c));
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "max degree 3"});
  c.m = 3;
  c.max_degree = 1;
  c.offsets = {0, 1, 2, 3, 3};
  c.edges = {3};
  write_bytes(path, build(c));
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "max degree 1"});
}

// m fits n(n-1)/2, but row 1 claims more neighbours than there are vertices above it.
TEST(FormatHostile, RowWithMoreEdgesThanVerticesAboveIt) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  Crafted c;
  c.n = 4;
  c.m = 4;
  c.max_out_degree = c.max_degree = 3;
  c.chunk_edges = 4;
  c.offsets = {0, 1, 4, 4, 4};
  c.edges = {4};
  write_bytes(path, build(c));
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section row offsets", "row 1"});
}

// Valid offsets for 2^32 edges on 100,000 vertices (about 1.6 MB of offsets and permutation),
// but one 16-byte frame claiming 16 GiB raw: zstd cannot expand 16 bytes that far.
TEST(FormatHostile, RawSizeBeyondWhatTheFrameCanHoldIsRefusedAtOpen) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  Crafted c;
  c.n = 100000;
  c.m = 1ull << 32;
  c.offsets.assign(c.n + 1, 0);
  std::uint64_t left = c.m;
  for (std::uint64_t r = 0; r < c.n; ++r) {
    const std::uint64_t d = std::min(left, c.n - 1 - r);
    left -= d;
    c.offsets[r + 1] = c.offsets[r] + d;
    c.max_out_degree = std::max(c.max_out_degree, d);
  }
  ASSERT_EQ(left, 0u);
  c.max_degree = c.n - 1;
  c.chunk_edges = c.m;
  c.edges = {c.m};
  write_bytes(path, build(c));
  expect_input_error([&] { tcsr::Reader r(path); },
                     {path, "section chunk index", "chunk 0", "cannot come from a 16-byte"});
}

TEST(FormatHostile, ChunkCountThatDisagreesWithMIsRefused) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  Crafted c = two_vertices(1);
  c.chunk_edges = 1ull << 40;
  Bytes b = build(c);
  put_u64(b.data() + kOffNumChunks, 3);
  reseal(b);
  write_bytes(path, b);
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "3 chunks"});
}

// ---- a file changed after it was opened ----

std::string chunked_file(const test::TempDir& dir) {
  const std::string path = dir.file("g.tcsr");
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 32;  // 8 edges per chunk
  opt.threads = 1;
  tcsr::write_file(path, orient_edge_list(40, test::random_graph(40, 200, 7)), opt);
  return path;
}

TEST(FormatHostile, TruncatedAfterOpenIsReportedAsChanged) {
  test::TempDir dir;
  const std::string path = chunked_file(dir);
  tcsr::Reader r(path);
  ASSERT_GT(r.chunks().size(), 4u);
  fs::resize_file(path, 300);  // keeps the header and the first frames
  std::vector<vid_t> out(r.chunks().back().edges);
  expect_input_error([&] { r.read_chunk(r.chunks().size() - 1, out.data()); },
                     {path + ": changed while being read"});
  expect_input_error([&] { r.permutation(); }, {path + ": changed while being read"});
  expect_input_error([&] { r.load(); }, {path + ": changed while being read"});
  expect_input_error([&] { r.check(2); }, {path + ": changed while being read"});
  fs::resize_file(path, 0);
  expect_input_error([&] { r.read_chunk(0, out.data()); }, {path + ": changed while being read"});
}

// Same size, different bytes: the frame checksum fails and the new modification time tells a
// change from damage.
TEST(FormatHostile, RewrittenInPlaceAfterOpenIsReportedAsChanged) {
  test::TempDir dir;
  const std::string path = chunked_file(dir);
  tcsr::Reader r(path);
  const tcsr::ChunkInfo c = r.chunks()[1];
  Bytes b = read_bytes(path);
  b[c.file_offset + c.compressed_size / 2] ^= 0x5a;
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  fs::last_write_time(path, fs::last_write_time(path) - std::chrono::hours(1));
  std::vector<vid_t> out(c.edges);
  expect_input_error([&] { r.read_chunk(1, out.data()); }, {path + ": changed while being read"});
}

}  // namespace
}  // namespace tristream
