// format_damage_test.cpp — damaged .tcsr files: every flipped byte, every truncation and
// extension, and structural damage resealed (checksums recomputed) so that only the reader's
// structural checks can catch it.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>

#include "../../formats/layout.hpp"
#include "../../formats/xxh64.hpp"
#include "format_util.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using namespace format_testing;

// ---- helpers that edit a file and recompute its checksums, so that only the reader's
// structural checks can catch the edit ----
struct Edit {
  Bytes b;
  unsigned char* entry(std::size_t section) {
    return b.data() + kOffSectionTable + section * kSectionEntrySize;
  }
  std::uint64_t sec_offset(SectionKind k) { return get_u64(entry(k - 1) + kSecOffset); }
  std::uint64_t sec_size(SectionKind k) { return get_u64(entry(k - 1) + kSecSize); }
  unsigned char* chunk(std::size_t k) {
    return b.data() + sec_offset(kChunkIndex) + k * kChunkEntrySize;
  }
  void reseal(SectionKind k) {
    put_u64(entry(k - 1) + kSecChecksum, xxh64(b.data() + sec_offset(k), sec_size(k)));
  }
  void reseal_header() {
    put_u64(b.data() + kOffHeaderChecksum, xxh64(b.data(), kOffHeaderChecksum));
  }
  void reseal_all() {
    reseal(kRowOffsets);
    reseal(kChunkIndex);
    reseal(kPermutation);
    reseal_header();
  }
};

// ---- damaged files ----

std::string small_file(const test::TempDir& dir, bool delta, bool planes = true,
                       std::uint64_t seed = 11) {
  const std::string path = dir.file(delta ? "small_delta.tcsr" : "small_plain.tcsr");
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 32;  // 8 edges per chunk
  opt.delta = delta;
  opt.planes = planes;
  opt.threads = 1;
  tcsr::write_file(path, random_oriented(30, 90, seed, true), opt);
  return path;
}

// Overwrites one byte in place (rewriting whole files would be slow: ext4 flushes a file that
// was truncated and rewritten when it is closed).
void put_byte(const std::string& path, std::size_t offset, unsigned char value) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(value));
  ASSERT_TRUE(f.good());
}

// Flips every byte of `path` with three masks; each damaged copy must fail to open, load or check.
void expect_every_flip_detected(const test::TempDir& dir, const std::string& path) {
  const Bytes good = read_bytes(path);
  const std::string bad = dir.file("bad.tcsr");
  write_bytes(bad, good);
  for (unsigned char mask : {0xffu, 0x01u, 0x80u}) {
    for (std::size_t i = 0; i < good.size(); ++i) {
      put_byte(bad, i, good[i] ^ mask);
      try {
        open_and_verify(bad);
        ADD_FAILURE() << path << ": byte " << i << " ^ " << int(mask) << " went undetected";
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Input) << e.what();
        ASSERT_NE(std::string(e.what()).find(bad + ": section "), std::string::npos) << e.what();
      }
      put_byte(bad, i, good[i]);
    }
  }
  EXPECT_EQ(read_bytes(bad), good);
}

TEST(FormatDamage, EveryFlippedByteIsDetected) {
  test::TempDir dir;
  for (bool delta : {true, false})
    for (bool planes : {true, false}) {
      // (the first seed whose frames leave padding before the next section, to flip it too)
      std::string path;
      for (std::uint64_t seed = 11;; ++seed) {
        path = small_file(dir, delta, planes, seed);
        tcsr::Reader r(path);
        ASSERT_GT(r.chunks().size(), 5u);
        std::uint64_t adjacency = 0;
        for (const auto& c : r.chunks()) adjacency += c.compressed_size;
        if ((kHeaderSize + adjacency) % 8 != 0) break;
        ASSERT_LT(seed, 100u) << "no file with padding to cover";
      }
      expect_every_flip_detected(dir, path);
    }
}

TEST(FormatDamage, EveryFlippedByteIsDetectedInTinyFiles) {
  test::TempDir dir;
  const std::string path = dir.file("tiny.tcsr");
  tcsr::write_file(path, OrientedGraph{});  // n = 0
  expect_every_flip_detected(dir, path);
  {
    tcsr::Writer w(path, 3);  // n = 3, m = 0
    for (int r = 0; r < 3; ++r) w.append_row(nullptr, 0);
    w.finish();
  }
  expect_every_flip_detected(dir, path);
  tcsr::write_file(path, orient_edge_list(2, {{0, 1}}));  // one edge
  expect_every_flip_detected(dir, path);
}

TEST(FormatDamage, EveryTruncationAndExtensionIsDetected) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  const Bytes good = read_bytes(path);
  const std::string bad = dir.file("bad.tcsr");
  write_bytes(bad, good);
  for (std::size_t len = good.size(); len-- > 0;) {
    fs::resize_file(bad, len);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad + ": section "});
  }
  Bytes longer = good;
  longer.push_back(0);
  write_bytes(bad, longer);
  expect_input_error([&] { tcsr::Reader r(bad); }, {"trailing"});
}

TEST(FormatDamage, MissingFileIsNamed) {
  expect_input_error([] { tcsr::Reader r("/nonexistent/dir/graph.tcsr"); },
                     {"/nonexistent/dir/graph.tcsr", "No such file"});
}

TEST(FormatDamage, WrongMagic) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  Bytes b = read_bytes(path);
  b[1] = 'X';
  write_bytes(path, b);
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "bad magic"});
  write_bytes(path, Bytes{'1', ' ', '2', '\n'});  // an edge list
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "bad magic"});
}

TEST(FormatDamage, NewerVersionIsRefusedByName) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  Edit e{read_bytes(path)};
  put_u32(e.b.data() + kOffVersion, 4);  // (2: names, 3: the census extension)
  write_bytes(path, e.b);                // checksum not updated: the version is checked first
  expect_input_error(
      [&] { tcsr::Reader r(path); },
      {path, "section header", "unsupported .tcsr version 4 (this build reads 1, 2 and 3)"});
  e.reseal_header();
  write_bytes(path, e.b);
  expect_input_error([&] { tcsr::Reader r(path); }, {"unsupported .tcsr version 4"});
}

TEST(FormatDamage, WideIdsAndUnknownFlagsAreRefused) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  for (std::uint32_t flags : {std::uint32_t{tcsr::kFlagWideIds}, 0x10u}) {
    Edit e{read_bytes(path)};
    put_u32(e.b.data() + kOffFlags, flags);
    e.reseal_header();
    const std::string bad = dir.file("bad.tcsr");
    write_bytes(bad, e.b);
    expect_input_error(
        [&] { tcsr::Reader r(bad); },
        {bad, "section header", flags == 0x10u ? "unknown flags 0x10" : "not supported"});
  }
}

// The checksums are recomputed after each edit, so only the structural checks can catch it.
TEST(FormatDamage, ResealedIndexPointingOutsideTheFile) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  const std::string bad = dir.file("bad.tcsr");
  const Bytes good = read_bytes(path);
  const std::vector<std::pair<std::size_t, std::uint64_t>> edits = {
      {kChunkFileOffset, good.size() + 100},  // outside the file
      {kChunkFileOffset, 0},                  // inside the header
      {kChunkCompressedSize, 1ull << 40},     // runs past the end
      {kChunkRawSize, 12345},                 // != 4 * edges
      {kChunkEdges, 0},                       // empty chunk
      {kChunkFirstEdge, 3},                   // not contiguous
      {kChunkFirstRow, 29},                   // disagrees with the offsets
      {kChunkRows, 1000},                     // disagrees with the offsets
  };
  for (const auto& [field, value] : edits) {
    Edit e{good};
    put_u64(e.chunk(1) + field, value);
    e.reseal_all();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section chunk index", "chunk 1"});
  }
}

TEST(FormatDamage, ResealedSectionTableErrors) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  const std::string bad = dir.file("bad.tcsr");
  const Bytes good = read_bytes(path);
  {
    Edit e{good};  // the permutation section pointing past the end
    put_u64(e.entry(kPermutation - 1) + kSecOffset, good.size() + 8);
    e.reseal_header();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section permutation"});
  }
  {
    Edit e{good};  // the chunk index overlapping the row offsets
    put_u64(e.entry(kChunkIndex - 1) + kSecOffset, e.sec_offset(kRowOffsets) + 8);
    e.reseal_header();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section chunk index"});
  }
  {
    Edit e{good};  // a huge chunk count: more chunks than m and chunk_edges make
    put_u64(e.b.data() + kOffNumChunks, 1ull << 60);
    e.reseal_header();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section header", "chunks"});
  }
  {
    Edit e{good};  // a section kind out of place
    put_u32(e.entry(0) + kSecKind, kPermutation);
    e.reseal_header();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section header"});
  }
}

TEST(FormatDamage, ResealedOffsetsErrors) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  const std::string bad = dir.file("bad.tcsr");
  const Bytes good = read_bytes(path);
  Edit probe{good};
  const std::uint64_t n = get_u64(good.data() + kOffN);
  const std::uint64_t base = probe.sec_offset(kRowOffsets);
  {
    Edit e{good};  // decreasing
    put_u64(e.b.data() + base + 8 * (n - 1), get_u64(good.data() + base + 8 * n) + 1);
    e.reseal_all();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section row offsets"});
  }
  {
    Edit e{good};  // offsets[0] != 0
    put_u64(e.b.data() + base, 1);
    e.reseal_all();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section row offsets", "offsets[0]"});
  }
  {
    Edit e{good};  // header max out-degree wrong
    put_u64(e.b.data() + kOffMaxOutDegree, get_u64(good.data() + kOffMaxOutDegree) - 1);
    e.reseal_header();
    write_bytes(bad, e.b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "maximum out-degree"});
  }
  {
    Edit e{good};  // header max degree wrong: only check() sees it (it needs every chunk)
    put_u64(e.b.data() + kOffMaxDegree, get_u64(good.data() + kOffMaxDegree) + 1);
    e.reseal_header();
    write_bytes(bad, e.b);
    tcsr::Reader r(bad);
    EXPECT_NO_THROW(r.load());
    expect_input_error([&] { r.check(); }, {bad, "maximum degree"});
  }
}

TEST(FormatDamage, ResealedFrameDamageIsCaughtByZstdOrTheIdChecks) {
  test::TempDir dir;
  for (bool delta : {true, false}) {
    const std::string path = small_file(dir, delta);
    const std::string bad = dir.file("bad.tcsr");
    const Bytes good = read_bytes(path);
    const tcsr::Reader r(path);
    const std::size_t chunks = r.chunks().size();
    std::size_t caught = 0, total = 0;
    for (std::size_t k = 0; k < chunks; ++k) {
      const tcsr::ChunkInfo c = r.chunks()[k];
      for (std::uint64_t i = 0; i < c.compressed_size; ++i) {
        Edit e{good};
        e.b[c.file_offset + i] ^= 0x55;
        put_u64(e.chunk(k) + kChunkFrameChecksum,
                xxh64(e.b.data() + c.file_offset, c.compressed_size));
        e.reseal_all();
        write_bytes(bad, e.b);
        tcsr::Reader rb(bad);
        ++total;
        try {
          const OrientedGraph g = rb.load();
          // zstd may ignore a few frame-header bits (window size); the content must still match.
          expect_same(r.load(), g);
        } catch (const Error& err) {
          ++caught;
          EXPECT_NE(std::string(err.what()).find("section adjacency: chunk " + std::to_string(k)),
                    std::string::npos)
              << err.what();
        }
      }
    }
    EXPECT_GT(caught, total * 9 / 10);
  }
}

// Row 0 -> 1..8 in two 4-edge chunks; swapping the two frames leaves each chunk valid alone
// (ids above the row, ascending) but the row descends across the cut: only check() sees it.
TEST(FormatDamage, ResealedRowNotAscendingAcrossChunks) {
  test::TempDir dir;
  for (bool delta : {true, false}) {
    const std::string path = dir.file("g.tcsr");
    tcsr::WriteOptions opt;
    opt.chunk_bytes = 16;
    opt.delta = delta;
    {
      tcsr::Writer w(path, 9, opt);
      const vid_t row0[] = {1, 2, 3, 4, 5, 6, 7, 8};
      w.append_row(row0, 8);
      for (int r = 1; r < 9; ++r) w.append_row(nullptr, 0);
      w.finish();
    }
    Edit e{read_bytes(path)};
    ASSERT_EQ(get_u64(e.b.data() + kOffNumChunks), 2u);
    const std::uint64_t off0 = get_u64(e.chunk(0) + kChunkFileOffset);
    const std::uint64_t size0 = get_u64(e.chunk(0) + kChunkCompressedSize);
    const std::uint64_t size1 = get_u64(e.chunk(1) + kChunkCompressedSize);
    const Bytes f0(e.b.begin() + off0, e.b.begin() + off0 + size0);
    const Bytes f1(e.b.begin() + off0 + size0, e.b.begin() + off0 + size0 + size1);
    std::copy(f1.begin(), f1.end(), e.b.begin() + off0);
    std::copy(f0.begin(), f0.end(), e.b.begin() + off0 + size1);
    put_u64(e.chunk(0) + kChunkCompressedSize, size1);
    put_u64(e.chunk(1) + kChunkCompressedSize, size0);
    put_u64(e.chunk(1) + kChunkFileOffset, off0 + size1);
    const std::uint64_t sum0 = get_u64(e.chunk(0) + kChunkFrameChecksum);
    put_u64(e.chunk(0) + kChunkFrameChecksum, get_u64(e.chunk(1) + kChunkFrameChecksum));
    put_u64(e.chunk(1) + kChunkFrameChecksum, sum0);
    e.reseal_all();
    write_bytes(path, e.b);
    tcsr::Reader r(path);
    const OrientedGraph g = r.load();
    EXPECT_EQ(g.csr.cols, (std::vector<vid_t>{5, 6, 7, 8, 1, 2, 3, 4}));
    expect_input_error([&] { r.check(); }, {path, "section adjacency: chunk 1", "row 0"});
  }
}

TEST(FormatDamage, ResealedPlanesFlagFlipIsCaught) {
  // The chunks' bytes read as ids where they are byte planes (and back): rows out of order.
  test::TempDir dir;
  for (bool planes : {true, false}) {
    const std::string path = dir.file("p.tcsr");
    tcsr::WriteOptions opt;
    opt.chunk_bytes = 4096;
    opt.planes = planes;
    opt.threads = 1;
    tcsr::write_file(path, random_oriented(3000, 20000, 12, true), opt);
    Edit e{read_bytes(path)};
    put_u32(e.b.data() + kOffFlags,
            std::uint32_t{tcsr::kFlagDelta} | (planes ? 0u : std::uint32_t{tcsr::kFlagPlanes}));
    e.reseal_header();
    const std::string bad = dir.file("bad.tcsr");
    write_bytes(bad, e.b);
    tcsr::Reader r(bad);
    expect_input_error([&] { r.load(); }, {bad, "section adjacency: chunk"});
  }
}

TEST(FormatDamage, ResealedDeltaFlagFlipIsCaught) {
  test::TempDir dir;
  for (bool delta : {true, false}) {
    const std::string path = small_file(dir, delta);
    Edit e{read_bytes(path)};
    put_u32(e.b.data() + kOffFlags,
            (delta ? 0u : std::uint32_t{tcsr::kFlagDelta}) | std::uint32_t{tcsr::kFlagPlanes});
    e.reseal_header();
    const std::string bad = dir.file("bad.tcsr");
    write_bytes(bad, e.b);
    tcsr::Reader r(bad);
    expect_input_error([&] { r.load(); }, {bad, "section adjacency: chunk"});
  }
}

TEST(FormatDamage, DuplicateOriginalIdsInThePermutation) {
  test::TempDir dir;
  const std::string path = small_file(dir, true);
  Edit e{read_bytes(path)};
  const std::uint64_t p = e.sec_offset(kPermutation);
  put_u64(e.b.data() + p + 8, get_u64(e.b.data() + p));
  e.reseal_all();
  write_bytes(path, e.b);
  tcsr::Reader r(path);
  expect_input_error([&] { r.check(); }, {path, "section permutation"});
}

}  // namespace
}  // namespace tristream
