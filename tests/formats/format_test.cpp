// format_test.cpp — the .tcsr format: XXH64, round trips and the writer's contract (damaged
// files: format_damage_test.cpp).
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

// The message of the error append_rows throws for the run (cols, offsets), "" for none.
std::string append_rows_error(tcsr::Writer& w, const std::vector<vid_t>& cols,
                              const std::vector<eid_t>& offsets) {
  try {
    w.append_rows(cols.data(), offsets.data(), offsets.size() - 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// append_rows applies append_row's rules (each bad row of RejectsInvalidRows, amid good rows of
// one run, on several threads): the error names the row and the writer stays failed.
TEST(FormatWriter, AppendRowsRejectsEveryKindOfInvalidRow) {
  test::TempDir dir;
  const vid_t n = 4000;
  struct Bad {
    vid_t row;
    std::vector<vid_t> cols;
  };
  const std::vector<Bad> bad_rows = {
      {1000, {1002, 1001}},  // not ascending
      {1000, {1001, 1001}},  // duplicate
      {1000, {1000}},        // not above its row
      {1000, {999}},         // below its row
      {1000, {1001, n}},     // >= n
      {3999, {3999}},        // the last row, not above itself
      {0, {0, 1}},           // the first row, its first id not above it
  };
  // The run: rows {r + 1, r + 2} up to n - 3, the bad row's ids in its place.
  struct Run {
    std::vector<vid_t> cols;
    std::vector<eid_t> offsets{0};
  };
  auto run_with = [n](const Bad* bad) {
    Run run;
    for (vid_t r = 0; r < n; ++r) {
      if (bad && r == bad->row)
        run.cols.insert(run.cols.end(), bad->cols.begin(), bad->cols.end());
      else if (r + 2 < n)
        run.cols.insert(run.cols.end(), {r + 1, r + 2});
      run.offsets.push_back(run.cols.size());
    }
    return run;
  };
  tcsr::WriteOptions o;
  o.threads = 3;
  for (const Bad& b : bad_rows) {
    const Run run = run_with(&b);
    tcsr::Writer w(dir.file("bad.tcsr"), n, o);
    const std::string error = append_rows_error(w, run.cols, run.offsets);
    EXPECT_NE(error.find("row " + std::to_string(b.row) + ":"), std::string::npos)
        << "row " << b.row << ": " << (error.empty() ? "no error" : error);
    expect_internal_error([&] { w.finish(); });
  }
  // The same rows without the bad one are accepted.
  const Run good = run_with(nullptr);
  tcsr::Writer w(dir.file("good.tcsr"), n, o);
  w.append_rows(good.cols.data(), good.offsets.data(), n);
  w.finish();
  EXPECT_EQ(tcsr::Reader(dir.file("good.tcsr")).header().m, good.cols.size());
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
  const std::string error = append_rows_error(w, cols, offsets);
  EXPECT_NE(error.find("row 12345:"), std::string::npos) << (error.empty() ? "no error" : error);
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

}  // namespace
}  // namespace tristream
