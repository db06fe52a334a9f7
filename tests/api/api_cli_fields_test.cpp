// api_cli_fields_test.cpp — the parts of the C++ API the command line is built on: the degrees
// beside the per-vertex counts, the declared isolated vertices (count_isolated), the CSV dialect
// options, whether the input was converted, write_trace, and fractional byte sizes.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

CountOptions cpu() {
  CountOptions o;
  o.backend = "cpu";
  o.threads = 2;
  return o;
}

// A Matrix Market file declaring 8 vertices with one triangle 1-2-3 and the edge 5-6: vertices
// 4, 7 and 8 are isolated.
std::string declared_mtx(const test::TempDir& dir) {
  const std::string path = dir.file("declared.mtx");
  test::write_text(path,
                   "%%MatrixMarket matrix coordinate pattern symmetric\n"
                   "8 8 4\n2 1\n3 1\n3 2\n6 5\n");
  return path;
}

TEST(ApiCliFields, DegreesComeWithThePerVertexCounts) {
  test::TempDir dir;
  const std::string path = dir.file("wheel.el");
  test::write_edge_list(path, test::wheel(5));  // hub 0 of degree 5, rim vertices of degree 3
  CountOptions o = cpu();
  o.per_vertex = true;
  const CountResult r = count(path, o);
  ASSERT_TRUE(r.has_per_vertex);
  ASSERT_EQ(r.degrees.size(), 6u);
  EXPECT_EQ(r.vertex_ids[0], 0u);
  EXPECT_EQ(r.degrees[0], 5u);
  EXPECT_EQ(r.per_vertex[0], 5u);
  for (std::size_t i = 1; i < 6; ++i) {
    EXPECT_EQ(r.degrees[i], 3u) << i;
    EXPECT_EQ(r.per_vertex[i], 2u) << i;
  }
  EXPECT_TRUE(r.converted);
  EXPECT_FALSE(r.counted_isolated);
}

TEST(ApiCliFields, CountIsolatedAddsTheDeclaredVerticesWithoutEdges) {
  test::TempDir dir;
  CountOptions o = cpu();
  o.count_isolated = true;
  o.clustering = true;
  const CountResult r = count(declared_mtx(dir), o);
  EXPECT_EQ(r.triangles, 1u);
  EXPECT_EQ(r.declared_vertices, 8u);
  EXPECT_EQ(r.isolated_vertices, 3u);
  EXPECT_EQ(r.vertices, 8u);
  ASSERT_EQ(r.vertex_ids, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(r.degrees, (std::vector<std::uint64_t>{2, 2, 2, 0, 1, 1, 0, 0}));
  EXPECT_EQ(r.per_vertex, (std::vector<std::uint64_t>{1, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.clustering, (std::vector<double>{1, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_NEAR(r.average_clustering, 3.0 / 8.0, 1e-12);  // networkx's average over all 8
  const std::string j = r.to_json("declared.mtx");
  EXPECT_NE(j.find("\"isolated_vertices\":3"), std::string::npos) << j;
}

TEST(ApiCliFields, CountIsolatedOfATcsrFileIsAUsageError) {
  test::TempDir dir;
  const std::string tcsr = dir.file("g.tcsr");
  ConvertOptions c;
  convert(declared_mtx(dir), tcsr, c);
  CountOptions o = cpu();
  o.count_isolated = true;
  try {
    count(tcsr, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
  o.count_isolated = false;
  EXPECT_FALSE(count(tcsr, o).converted);
}

TEST(ApiCliFields, CsvDelimiterAndHeaderReachTheConversion) {
  test::TempDir dir;
  const std::string path = dir.file("k4.csv");
  test::write_text(path, "src;dst\n0;1\n0;2\n0;3\n1;2\n1;3\n2;3\n");
  CountOptions o = cpu();
  o.delimiter = ";";
  o.header = true;
  EXPECT_EQ(count(path, o).triangles, 4u);
}

TEST(ApiCliFields, WriteTraceWritesTheRunsTrace) {
  test::TempDir dir;
  const std::string path = dir.file("k5.el");
  test::write_edge_list(path, test::complete_graph(5));
  const CountResult r = count(path, cpu());
  const std::string trace = dir.file("trace.json");
  std::FILE* f = std::fopen(trace.c_str(), "w");
  ASSERT_NE(f, nullptr);
  r.write_trace(f);
  std::fclose(f);
  EXPECT_NE(test::read_text(trace).find("traceEvents"), std::string::npos);
}

TEST(ApiCliFields, ByteSizesTakeFractions) {
  EXPECT_EQ(ByteSize("1.5G").bytes(), 3ull << 29);
  EXPECT_EQ(parse_byte_size("0.5K", "x"), 512u);
  EXPECT_THROW(parse_byte_size("1.5", "x"), Error);  // a fraction needs a suffix
  EXPECT_THROW(parse_byte_size(".5G", "x"), Error);
}

}  // namespace
}  // namespace tristream
