// format_test.cpp — the .tcsr format: round trips, the writer's contract, and damaged files.
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
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

namespace fs = std::filesystem;
using namespace tcsr::detail;
using test::Bytes;

OrientedGraph random_oriented(vid_t n, std::uint64_t m, std::uint64_t seed, bool skewed = false) {
  return orient_edge_list(n,
                          skewed ? test::skewed_graph(n, m, seed) : test::random_graph(n, m, seed));
}

std::uint64_t degree(const OrientedGraph& g, std::uint64_t r) {
  return g.csr.offsets[r + 1] - g.csr.offsets[r];
}

void expect_same(const OrientedGraph& a, const OrientedGraph& b) {
  ASSERT_EQ(a.csr.offsets, b.csr.offsets);
  ASSERT_EQ(a.csr.cols, b.csr.cols);
  EXPECT_EQ(a.csr.col_space, b.csr.col_space);
}

using test::read_bytes;
using test::write_bytes;

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

using test::expect_input_error;

void expect_internal_error(const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
  }
}

// Everything a reader can verify: opening, the whole graph and permutation, and check().
OrientedGraph open_and_verify(const std::string& path) {
  tcsr::Reader r(path);
  OrientedGraph g = r.load(true, 2);
  r.check(2);
  return g;
}

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

// ---- XXH64 ----

TEST(FormatXxh64, KnownValues) {
  EXPECT_EQ(xxh64("", 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64("abc", 3), 0x44BC2CF5AD770999ull);
}

// zstd's frame content checksum is the low 32 bits of XXH64 (seed 0) of the content: an
// independent implementation to compare with at every tail length and across stripes.
TEST(FormatXxh64, AgreesWithZstdContentChecksum) {
  std::mt19937_64 rng(7);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ASSERT_NE(c, nullptr);
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 130; ++len) lengths.push_back(len);
  lengths.push_back(4099);
  lengths.push_back(100000);
  for (std::size_t len : lengths) {
    Bytes data(len);
    for (auto& x : data) x = static_cast<unsigned char>(rng());
    Bytes frame(ZSTD_compressBound(len));
    const std::size_t size = ZSTD_compress2(c, frame.data(), frame.size(), data.data(), len);
    ASSERT_FALSE(ZSTD_isError(size));
    EXPECT_EQ(get_u32(frame.data() + size - 4), static_cast<std::uint32_t>(xxh64(data.data(), len)))
        << "length " << len;
  }
  ZSTD_freeCCtx(c);
}

// ---- round trips ----

struct RoundTripCase {
  vid_t n;
  std::uint64_t m;
  bool skewed;
  std::uint64_t chunk_bytes;
  bool delta;
  unsigned threads;
  bool planes;
};

class FormatRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(FormatRoundTrip, WritesAndReadsBack) {
  const RoundTripCase& p = GetParam();
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  const OrientedGraph g = random_oriented(p.n, p.m, 1000 + p.n + p.m, p.skewed);
  tcsr::WriteOptions opt;
  opt.chunk_bytes = p.chunk_bytes;
  opt.delta = p.delta;
  opt.planes = p.planes;
  opt.threads = p.threads;
  tcsr::write_file(path, g, opt);
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"g.tcsr"});

  tcsr::Reader r(path);
  const tcsr::Header& h = r.header();
  EXPECT_EQ(h.version, tcsr::kFormatVersion);
  EXPECT_EQ(h.flags, (p.delta ? std::uint32_t{tcsr::kFlagDelta} : 0u) |
                         (p.planes ? std::uint32_t{tcsr::kFlagPlanes} : 0u));
  EXPECT_EQ(h.n, g.n());
  EXPECT_EQ(h.m, g.m());
  EXPECT_EQ(r.file_size(), fs::file_size(path));
  const std::uint64_t ce = p.chunk_bytes / 4;
  EXPECT_EQ(h.chunk_edges, ce);
  EXPECT_EQ(h.num_chunks, (g.m() + ce - 1) / ce);
  EXPECT_EQ(r.chunks().size(), h.num_chunks);

  std::uint64_t max_out = 0, max_deg = 0;
  std::vector<std::uint64_t> deg(g.n(), 0);
  for (std::uint64_t v = 0; v < g.n(); ++v) {
    max_out = std::max(max_out, degree(g, v));
    deg[v] += degree(g, v);
  }
  for (vid_t c : g.csr.cols) ++deg[c];
  for (auto d : deg) max_deg = std::max(max_deg, d);
  EXPECT_EQ(h.max_out_degree, max_out);
  EXPECT_EQ(h.max_degree, max_deg);

  ASSERT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), r.offsets()));
  for (unsigned threads : {1u, 3u}) {
    const OrientedGraph back = r.load(true, threads);
    expect_same(g, back);
    EXPECT_EQ(back.perm, g.perm);
  }
  EXPECT_TRUE(r.load(false).perm.empty());
  EXPECT_EQ(r.permutation(), g.perm);
  EXPECT_NO_THROW(r.check(p.threads));

  // Every chunk alone, and chunk_of_edge at its ends.
  std::vector<vid_t> buf;
  for (std::uint64_t k = 0; k < r.chunks().size(); ++k) {
    const tcsr::ChunkInfo& c = r.chunks()[k];
    buf.assign(c.edges, 0);
    r.read_chunk(k, buf.data());
    ASSERT_TRUE(
        std::equal(buf.begin(), buf.end(), g.csr.cols.begin() + static_cast<long>(c.first_edge)))
        << "chunk " << k;
    EXPECT_EQ(r.chunk_of_edge(c.first_edge), k);
    EXPECT_EQ(r.chunk_of_edge(c.first_edge + c.edges - 1), k);
    EXPECT_LE(g.csr.offsets[c.first_row], c.first_edge);
    EXPECT_GT(g.csr.offsets[c.first_row + 1], c.first_edge);
  }
}

std::vector<RoundTripCase> round_trip_cases() {
  std::vector<RoundTripCase> cases;
  for (bool skewed : {false, true})
    for (bool delta : {true, false})
      for (bool planes : {true, false})
        for (std::uint64_t cb : {4ull, 64ull, 4096ull, 8ull << 20}) {
          cases.push_back({40, 100, skewed, cb, delta, 1, planes});
          cases.push_back({2000, 12000, skewed, cb, delta, 3, planes});
          // (8 MiB chunks: 300000 ids, more than one block of byte planes)
          if (cb >= 64) cases.push_back({50000, 300000, skewed, cb, delta, 2, planes});
        }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  const RoundTripCase& p = info.param;
  return std::string(p.skewed ? "skewed" : "random") + "_n" + std::to_string(p.n) + "_m" +
         std::to_string(p.m) + "_chunk" + std::to_string(p.chunk_bytes) +
         (p.delta ? "_delta" : "_plain") + (p.planes ? "_planes" : "") + "_t" +
         std::to_string(p.threads);
}

INSTANTIATE_TEST_SUITE_P(Graphs, FormatRoundTrip, ::testing::ValuesIn(round_trip_cases()),
                         case_name);

TEST(FormatEdgeCases, EmptyGraphWithoutVertices) {
  test::TempDir dir;
  const std::string path = dir.file("empty.tcsr");
  OrientedGraph g;
  tcsr::write_file(path, g);
  tcsr::Reader r(path);
  EXPECT_EQ(r.n(), 0u);
  EXPECT_EQ(r.m(), 0u);
  EXPECT_EQ(r.header().num_chunks, 0u);
  EXPECT_EQ(r.offsets()[0], 0u);
  const OrientedGraph back = r.load(true);
  expect_same(g, back);
  EXPECT_TRUE(back.perm.empty());
  EXPECT_NO_THROW(r.check());
  std::vector<vid_t> none;
  EXPECT_NO_THROW(r.read_edges(0, 0, none.data()));
}

TEST(FormatEdgeCases, VerticesWithoutEdges) {
  test::TempDir dir;
  const std::string path = dir.file("isolated.tcsr");
  tcsr::Writer w(path, 5);
  for (int i = 0; i < 5; ++i) w.append_row(nullptr, 0);
  w.finish();
  tcsr::Reader r(path);
  EXPECT_EQ(r.n(), 5u);
  EXPECT_EQ(r.m(), 0u);
  EXPECT_EQ(r.header().max_degree, 0u);
  const OrientedGraph back = r.load(true);
  EXPECT_EQ(back.csr.offsets, std::vector<eid_t>(6, 0));
  EXPECT_EQ(back.perm, (std::vector<orig_id_t>{0, 1, 2, 3, 4}));  // identity when never set
  EXPECT_NO_THROW(r.check());
}

TEST(FormatEdgeCases, OneEdge) {
  test::TempDir dir;
  const std::string path = dir.file("one.tcsr");
  const OrientedGraph g = orient_edge_list(2, {{1, 0}});
  tcsr::write_file(path, g);
  tcsr::Reader r(path);
  EXPECT_EQ(r.m(), 1u);
  EXPECT_EQ(r.header().max_out_degree, 1u);
  EXPECT_EQ(r.header().max_degree, 1u);
  EXPECT_EQ(r.chunks().size(), 1u);
  vid_t col = 0;
  r.read_chunk(0, &col);
  EXPECT_EQ(col, 1u);
  expect_same(g, r.load());
  EXPECT_EQ(r.permutation(), g.perm);
  EXPECT_NO_THROW(r.check());
}

TEST(FormatEdgeCases, RowLargerThanAChunkAndLargerThanABatch) {
  // Row 0 -> every other vertex: with 64-byte chunks it spans 1250 chunks; with 4-byte chunks
  // one edge per chunk, more than a writer batch.
  const vid_t n = 20000;
  std::vector<vid_t> star(n - 1);
  std::iota(star.begin(), star.end(), vid_t{1});
  for (std::uint64_t cb : {4ull, 64ull}) {
    for (bool delta : {true, false}) {
      test::TempDir dir;
      const std::string path = dir.file("star.tcsr");
      tcsr::WriteOptions opt;
      opt.chunk_bytes = cb;
      opt.delta = delta;
      opt.threads = 2;
      tcsr::Writer w(path, n, opt);
      w.append_row(star.data(), star.size());
      const vid_t tail[] = {n - 1};
      w.append_row(tail, 1);  // row 1 -> n-1
      for (vid_t r = 2; r < n; ++r) w.append_row(nullptr, 0);
      w.set_max_degree(n - 1);
      w.finish();
      tcsr::Reader rd(path);
      EXPECT_EQ(rd.header().max_out_degree, n - 1u);
      EXPECT_EQ(rd.header().max_degree, n - 1u);
      EXPECT_EQ(rd.chunks().size(), (n + cb / 4 - 1) / (cb / 4));
      EXPECT_EQ(rd.chunks().front().rows, 1u);
      EXPECT_EQ(rd.chunks().back().rows, cb == 4 ? 1u : 2u);
      const OrientedGraph g = rd.load(true);
      ASSERT_EQ(g.m(), n);
      EXPECT_TRUE(std::equal(star.begin(), star.end(), g.csr.cols.begin()));
      EXPECT_EQ(g.csr.cols.back(), n - 1);
      EXPECT_NO_THROW(rd.check());
    }
  }
}

TEST(FormatEdgeCases, PermutationRoundTrip) {
  test::TempDir dir;
  const std::string path = dir.file("perm.tcsr");
  OrientedGraph g = random_oriented(3000, 10000, 5);
  std::mt19937_64 rng(9);
  for (auto& p : g.perm) p = p * 1000003ull + (1ull << 40);  // 64-bit original ids
  std::shuffle(g.perm.begin(), g.perm.end(), rng);
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 256;
  tcsr::write_file(path, g, opt);
  tcsr::Reader r(path);
  EXPECT_EQ(r.permutation(), g.perm);
  EXPECT_EQ(r.load(true).perm, g.perm);
  EXPECT_NO_THROW(r.check());
}

TEST(FormatEdgeCases, ReadEdgesAcrossChunkBoundaries) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  const OrientedGraph g = random_oriented(500, 4000, 3, true);
  tcsr::WriteOptions opt;
  opt.chunk_bytes = 100;  // 25 edges per chunk
  tcsr::write_file(path, g, opt);
  tcsr::Reader r(path);
  std::mt19937_64 rng(4);
  const eid_t m = g.m();
  std::vector<std::pair<eid_t, eid_t>> ranges = {{0, m},   {0, 0},   {m, m},
                                                 {24, 26}, {25, 50}, {1, m - 1}};
  for (int i = 0; i < 200; ++i) {
    eid_t a = rng() % (m + 1), b = rng() % (m + 1);
    ranges.emplace_back(std::min(a, b), std::max(a, b));
  }
  for (auto [first, last] : ranges) {
    std::vector<vid_t> out(last - first + 1, 0xdeadbeef);
    r.read_edges(first, last, out.data());
    ASSERT_TRUE(
        std::equal(out.begin(), out.end() - 1, g.csr.cols.begin() + static_cast<long>(first)))
        << first << ".." << last;
    EXPECT_EQ(out.back(), 0xdeadbeefu) << "wrote past the range";
  }
  std::vector<vid_t> out(2);
  expect_internal_error([&] { r.read_edges(m, m + 1, out.data()); });
  expect_internal_error([&] { r.read_chunk(r.chunks().size(), out.data()); });
  expect_internal_error([&] { r.chunk_of_edge(m); });
}

// ---- the writer's contract ----

TEST(FormatWriter, RejectsInvalidRows) {
  test::TempDir dir;
  const std::string path = dir.file("bad.tcsr");
  const std::vector<std::pair<vid_t, std::vector<vid_t>>> bad_rows = {
      {0, {2, 1}},  // not ascending
      {0, {1, 1}},  // duplicate
      {1, {1}},     // not above its row
      {1, {0}},     // below its row
      {0, {5}},     // >= n
  };
  for (const auto& [row, cols] : bad_rows) {
    tcsr::Writer w(path, 5);
    for (vid_t r = 0; r < row; ++r) w.append_row(nullptr, 0);
    expect_internal_error([&] { w.append_row(cols.data(), cols.size()); });
    expect_internal_error([&] { w.finish(); });  // a failed writer stays failed
  }
  {
    tcsr::Writer w(path, 1);
    w.append_row(nullptr, 0);
    expect_internal_error([&] { w.append_row(nullptr, 0); });  // more than n rows
  }
  {
    tcsr::Writer w(path, 3);
    w.append_row(nullptr, 0);
    expect_internal_error([&] { w.finish(); });  // fewer than n rows
  }
  {
    tcsr::Writer w(path, 3);
    expect_internal_error([&] { w.set_permutation({1, 2}); });
  }
  {
    tcsr::Writer w(path, 3);
    const vid_t row0[] = {1, 2};
    w.append_row(row0, 2);
    w.append_row(nullptr, 0);
    w.append_row(nullptr, 0);
    w.set_max_degree(1);  // really 2
    expect_internal_error([&] { w.finish(); });
  }
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

// Rows appended in uneven runs (append_rows, checked on all threads) with a budget of one chunk in
// flight make the same file as rows appended one by one with the default batch.
TEST(FormatWriter, AppendRowsInRunsUnderAWriterBudgetWritesTheSameBytes) {
  test::TempDir dir;
  const OrientedGraph g = random_oriented(3000, 40000, 17, true);
  const Csr& c = g.csr;
  tcsr::WriteOptions by_row;
  by_row.chunk_bytes = 4096;
  by_row.threads = 3;
  {
    tcsr::Writer w(dir.file("rows.tcsr"), c.rows(), by_row);
    for (std::uint64_t r = 0; r < c.rows(); ++r)
      w.append_row(c.cols.data() + c.offsets[r], c.offsets[r + 1] - c.offsets[r]);
    w.finish();
  }
  tcsr::WriteOptions tight = by_row;
  tight.memory_bytes = tcsr::writer_floor_bytes(tight.chunk_bytes, tight.zstd_level);
  {
    tcsr::Writer w(dir.file("runs.tcsr"), c.rows(), tight);
    std::uint64_t r = 0;
    for (std::uint64_t run = 1; r < c.rows(); run = run * 3 + 1) {
      const std::uint64_t k = std::min<std::uint64_t>(run, c.rows() - r);
      w.append_rows(c.cols.data() + c.offsets[r], c.offsets.data() + r, k);
      r += k;
    }
    w.finish();
  }
  EXPECT_EQ(read_bytes(dir.file("runs.tcsr")), read_bytes(dir.file("rows.tcsr")));
  tight.memory_bytes -= 1;  // below the floor: refused before anything is written
  EXPECT_THROW(tcsr::Writer(dir.file("floor.tcsr"), c.rows(), tight), Error);
  EXPECT_FALSE(fs::exists(dir.file("floor.tcsr")));
}

// One run of rows of very uneven lengths (long rows first, then tens of thousands of empty and
// single-edge rows), cut into pieces of about equal rows plus edges on 8 threads: the same bytes
// as rows appended one by one, the longest row in the header.
TEST(FormatWriter, AppendRowsOfVeryUnevenLengthsInOneRunWritesTheSameBytes) {
  test::TempDir dir;
  const vid_t n = 50000;
  std::vector<eid_t> offsets{0};
  std::vector<vid_t> cols;
  for (vid_t r = 0; r < n; ++r) {
    const vid_t len = r < 40 ? 2000 + r : (r % 3 == 0 && r + 1 < n ? 1 : 0);
    for (vid_t k = 1; k <= len; ++k) cols.push_back(r + k);
    offsets.push_back(cols.size());
  }
  tcsr::WriteOptions o;
  o.threads = 8;
  o.chunk_bytes = 4096;
  {
    tcsr::Writer w(dir.file("run.tcsr"), n, o);
    w.append_rows(cols.data(), offsets.data(), n);
    w.finish();
  }
  {
    tcsr::Writer w(dir.file("rows.tcsr"), n, o);
    for (vid_t r = 0; r < n; ++r)
      w.append_row(cols.data() + offsets[r], offsets[r + 1] - offsets[r]);
    w.finish();
  }
  EXPECT_EQ(read_bytes(dir.file("run.tcsr")), read_bytes(dir.file("rows.tcsr")));
  tcsr::Reader back(dir.file("run.tcsr"));
  EXPECT_EQ(back.header().max_out_degree, 2039u);
  EXPECT_EQ(back.header().m, cols.size());
}

// Of several bad rows in one run, the error names the first.
TEST(FormatWriter, AppendRowsNamesTheFirstBadRow) {
  test::TempDir dir;
  const vid_t n = 20000;
  std::vector<eid_t> offsets{0};
  std::vector<vid_t> cols;
  for (vid_t r = 0; r + 1 < n; ++r) {
    cols.push_back(r + 1);
    if (r == 12345 || r == 17000) cols.back() = r;  // not above its row
    offsets.push_back(cols.size());
  }
  offsets.push_back(cols.size());
  tcsr::WriteOptions o;
  o.threads = 4;
  tcsr::Writer w(dir.file("bad.tcsr"), n, o);
  try {
    w.append_rows(cols.data(), offsets.data(), n);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 12345:"), std::string::npos) << e.what();
  }
  expect_internal_error([&] { w.finish(); });
}

// set_max_degree() before the first row is trusted (no in-degree counting); check() verifies it.
TEST(FormatWriter, MaxDegreeGivenBeforeTheRows) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  // Triangle 0-1-2 plus edge 1-3 and the isolated vertex 4: degrees 2, 3, 2, 1, 0.
  auto write = [&](std::uint64_t max_degree) {
    tcsr::Writer w(path, 5);
    w.set_max_degree(max_degree);
    const vid_t row0[] = {1, 2}, row1[] = {2, 3};
    w.append_row(row0, 2);
    w.append_row(row1, 2);
    for (int r = 2; r < 5; ++r) w.append_row(nullptr, 0);
    w.finish();
  };
  write(3);
  {
    tcsr::Reader r(path);
    EXPECT_EQ(r.header().max_degree, 3u);
    EXPECT_NO_THROW(r.check());
  }
  write(4);  // wrong, but within [out-degrees, n - 1]: written, and check() finds it
  {
    tcsr::Reader r(path);
    EXPECT_EQ(r.header().max_degree, 4u);
    EXPECT_THROW(r.check(), Error);
  }
  EXPECT_THROW(write(1), Error);  // below the largest out-degree (2)
  EXPECT_THROW(write(5), Error);  // above n - 1: no simple graph on 5 vertices has it
}

TEST(FormatWriter, LeavesNothingBehindWithoutFinish) {
  test::TempDir dir;
  {
    tcsr::Writer w(dir.file("g.tcsr"), 10);
    const vid_t row[] = {3, 4};
    w.append_row(row, 2);
    EXPECT_EQ(dir_entries(dir.path()).size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

TEST(FormatWriter, ReplacesAnExistingFileAtomically) {
  test::TempDir dir;
  const std::string path = dir.file("g.tcsr");
  const OrientedGraph a = random_oriented(100, 300, 1), b = random_oriented(200, 700, 2);
  tcsr::write_file(path, a);
  {
    tcsr::Writer w(path, b.n());
    for (std::uint64_t r = 0; r < b.n(); ++r) {
      w.append_row(b.csr.cols.data() + b.csr.offsets[r], degree(b, r));
      if (r == b.n() / 2) expect_same(a, tcsr::Reader(path).load());  // still the old file
    }
    w.set_permutation(b.perm);
    w.finish();
  }
  expect_same(b, open_and_verify(path));
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"g.tcsr"});
  // An unfinished writer over an existing file leaves the old file alone.
  { tcsr::Writer w(path, 3); }
  expect_same(b, open_and_verify(path));
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"g.tcsr"});
}

TEST(FormatWriter, CannotCreateInAMissingDirectory) {
  test::TempDir dir;
  EXPECT_THROW(tcsr::Writer(dir.file("no/such/dir/g.tcsr"), 3), Error);
}

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
