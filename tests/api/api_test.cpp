// api_test.cpp — the public C++ API (tristream.hpp): counts of files and in-memory edge arrays
// against the brute-force oracle, per-vertex figures in original-id order, options given as the
// command line's strings, an edge list's sorts on a given edge sorter, and the errors of bad input
// and bad options.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "host_edge_sorter.hpp"
#include "test_util.hpp"
#include "tristream/tristream.hpp"

namespace tristream {
namespace {

using test::EdgeList;

// Edge pairs u0 v0 u1 v1 ... with every id mapped through id -> id * 7 + 1000 (sparse original
// ids, so alignment with original ids is checked and not just 0..n-1).
std::vector<std::uint64_t> sparse_pairs(const EdgeList& e) {
  std::vector<std::uint64_t> p;
  for (auto [u, v] : e) {
    p.push_back(std::uint64_t{u} * 7 + 1000);
    p.push_back(std::uint64_t{v} * 7 + 1000);
  }
  return p;
}

// Undirected simple degrees of the cleaned graph (self-loops and duplicates dropped).
std::vector<std::uint64_t> degrees(std::uint64_t n, const EdgeList& e) {
  std::vector<std::pair<vid_t, vid_t>> s;
  for (auto [u, v] : e)
    if (u != v) s.emplace_back(std::min(u, v), std::max(u, v));
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  std::vector<std::uint64_t> d(n, 0);
  for (auto [u, v] : s) ++d[u], ++d[v];
  return d;
}

CountOptions cpu() {
  CountOptions o;
  o.backend = "cpu";
  o.threads = 2;
  return o;
}

TEST(Api, CountEdges64MatchesBruteForceWithSparseIds) {
  const EdgeList e = test::random_graph(300, 3000, 11);
  const std::uint64_t n = test::vertex_count(e);
  CountOptions o = cpu();
  o.clustering = true;
  const std::vector<std::uint64_t> pairs = sparse_pairs(e);
  const CountResult r = count_edges(pairs.data(), e.size(), o);
  EXPECT_EQ(r.triangles, test::brute_force_triangles(n, e));
  EXPECT_EQ(r.backend, "cpu");

  // Per-vertex counts and local clustering, ordered by original id.
  const auto pv = test::brute_force_per_vertex(n, e);
  const auto deg = degrees(n, e);
  std::map<std::uint64_t, std::uint64_t> seen;  // original id -> internal id, vertices with edges
  for (std::uint64_t v = 0; v < n; ++v)
    if (deg[v] > 0) seen[v * 7 + 1000] = v;
  ASSERT_EQ(r.vertex_ids.size(), seen.size());
  ASSERT_EQ(r.per_vertex.size(), seen.size());
  ASSERT_EQ(r.clustering.size(), seen.size());
  EXPECT_EQ(r.vertices, seen.size());
  std::size_t i = 0;
  double wedges = 0, sum_cc = 0;
  for (auto [id, v] : seen) {
    EXPECT_EQ(r.vertex_ids[i], id);
    EXPECT_EQ(r.per_vertex[i], pv[v]) << "vertex " << id;
    const double d = static_cast<double>(deg[v]);
    const double cc = d < 2 ? 0.0 : 2.0 * static_cast<double>(pv[v]) / (d * (d - 1));
    EXPECT_NEAR(r.clustering[i], cc, 1e-12);
    wedges += d * (d - 1) / 2;
    sum_cc += cc;
    ++i;
  }
  EXPECT_NEAR(r.transitivity, 3.0 * static_cast<double>(r.triangles) / wedges, 1e-12);
  EXPECT_NEAR(r.average_clustering, sum_cc / static_cast<double>(seen.size()), 1e-12);
}

TEST(Api, CountEdges32MatchesBruteForce) {
  const EdgeList e = test::skewed_graph(400, 4000, 5);
  std::vector<std::uint32_t> pairs;
  for (auto [u, v] : e) pairs.insert(pairs.end(), {u, v});
  const CountResult r = count_edges(pairs.data(), e.size(), cpu());
  EXPECT_EQ(r.triangles, test::brute_force_triangles(test::vertex_count(e), e));
  EXPECT_TRUE(r.per_vertex.empty());  // not requested
  EXPECT_TRUE(r.clustering.empty());
}

TEST(Api, CountFileEdgeListAndTcsrAgree) {
  const EdgeList e = test::random_graph(200, 1500, 3);
  test::TempDir dir;
  test::write_edge_list(dir.file("g.el"), e);
  const CountResult from_list = count(dir.file("g.el"), cpu());
  EXPECT_EQ(from_list.triangles, test::brute_force_triangles(test::vertex_count(e), e));
  EXPECT_GT(from_list.convert_seconds, 0.0);
  EXPECT_EQ(from_list.convert_sorter, "host");

  ConvertOptions co;
  co.quiet = true;
  convert(dir.file("g.el"), dir.file("g.tcsr"), co);
  const CountResult from_tcsr = count(dir.file("g.tcsr"), cpu());
  EXPECT_EQ(from_tcsr.triangles, from_list.triangles);
  EXPECT_EQ(from_tcsr.edges, from_list.edges);
  EXPECT_EQ(from_tcsr.convert_seconds, 0.0);
  EXPECT_EQ(from_tcsr.convert_sorter, "");
}

TEST(Api, CountOfANamedPipeReadsEveryByte) {
  // (a probe for the .tcsr magic once took the first bytes of a pipe: no triangle left)
  const EdgeList e = test::random_graph(100, 600, 7);
  test::TempDir dir;
  test::write_edge_list(dir.file("g.el"), e);
  const std::string fifo = dir.file("g.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = test::read_text(dir.file("g.el"));
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << text;
  });
  const CountResult r = count(fifo, cpu());
  writer.join();
  EXPECT_EQ(r.edges, count(dir.file("g.el"), cpu()).edges);
  EXPECT_EQ(r.triangles, test::brute_force_triangles(test::vertex_count(e), e));
}

TEST(Api, CountOfAnEdgeListSortsOnTheGivenEdgeSorter) {
  const EdgeList e = test::random_graph(300, 2500, 11);
  test::TempDir dir;
  test::write_edge_list(dir.file("g.el"), e);
  CountOptions o = cpu();
  o.per_vertex = true;
  const CountResult host = count(dir.file("g.el"), o);
  test::HostEdgeSorter sorter;
  o.edge_sorter = &sorter;
  const CountResult sorted = count(dir.file("g.el"), o);
  EXPECT_GT(sorter.appends, 0);  // the parsed edges went there
  EXPECT_TRUE(sorter.sorted);
  EXPECT_TRUE(sorter.released);
  EXPECT_EQ(sorted.convert_sorter, "host sorter (test)");
  EXPECT_EQ(sorted.triangles, test::brute_force_triangles(test::vertex_count(e), e));
  EXPECT_EQ(sorted.triangles, host.triangles);
  EXPECT_EQ(sorted.edges, host.edges);
  EXPECT_EQ(sorted.vertex_ids, host.vertex_ids);
  EXPECT_EQ(sorted.per_vertex, host.per_vertex);
}

TEST(Api, ConvertEdgesWritesTheSameGraphAsTheFileConverter) {
  const EdgeList e = test::complete_graph(9);
  const std::vector<std::uint64_t> pairs = sparse_pairs(e);
  test::TempDir dir;
  const ConvertSummary s = convert_edges(pairs.data(), e.size(), dir.file("k9.tcsr"));
  EXPECT_EQ(s.vertices, 9u);
  EXPECT_EQ(s.edges, 36u);
  const CountResult r = count(dir.file("k9.tcsr"), cpu());
  EXPECT_EQ(r.triangles, 84u);  // C(9, 3)
}

TEST(Api, OutOfCorePartitionsGiveTheSameCount) {
  const EdgeList e = test::random_graph(500, 6000, 17);
  const std::vector<std::uint64_t> pairs = sparse_pairs(e);
  const count_t expected = test::brute_force_triangles(test::vertex_count(e), e);
  for (const char* scheme : {"range", "hash", "vertex"}) {
    CountOptions o = cpu();
    o.scheme = scheme;
    o.parts = 3;
    o.per_vertex = true;
    const CountResult r = count_edges(pairs.data(), e.size(), o);
    EXPECT_EQ(r.triangles, expected) << scheme;
    EXPECT_NE(r.plan.find(std::string("\"scheme\":\"") + scheme + "\""), std::string::npos)
        << r.plan;
    std::uint64_t sum = 0;
    for (auto t : r.per_vertex) sum += t;
    EXPECT_EQ(sum, 3 * expected) << scheme;
  }
}

TEST(Api, ByteSizesAsTextOrBytes) {
  CountOptions o = cpu();
  o.gpu_memory = "4G";
  o.host_memory = std::uint64_t{512} << 20;
  EXPECT_EQ(o.gpu_memory.bytes(), std::uint64_t{4} << 30);
  EXPECT_EQ(o.host_memory.bytes(), std::uint64_t{512} << 20);
  EXPECT_EQ(ByteSize("1kib").bytes(), 1024u);
  EXPECT_EQ(ByteSize("").bytes(), 0u);
  EXPECT_EQ(ByteSize(4096).bytes(), 4096u);
  EXPECT_EQ(ByteSize(4096L).bytes(), 4096u);
  EXPECT_EQ(ByteSize(4096u).bytes(), 4096u);
  EXPECT_EQ(ByteSize(std::int64_t{1} << 40).bytes(), std::uint64_t{1} << 40);
  const EdgeList e = test::wheel(10);
  const std::vector<std::uint64_t> pairs = sparse_pairs(e);
  EXPECT_EQ(count_edges(pairs.data(), e.size(), o).triangles, 10u);
}

TEST(Api, JsonOutputsAreObjects) {
  const EdgeList e = test::friendship(4);
  const std::vector<std::uint64_t> pairs = sparse_pairs(e);
  CountOptions o = cpu();
  o.per_vertex = true;
  const CountResult r = count_edges(pairs.data(), e.size(), o);
  EXPECT_EQ(r.stats.front(), '{');
  EXPECT_EQ(r.plan.front(), '{');
  const std::string j = r.to_json("friendship");
  EXPECT_NE(j.find("\"triangles\":4"), std::string::npos) << j;
  EXPECT_NE(j.find("\"input\":\"friendship\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"average_clustering\":"), std::string::npos) << j;
  EXPECT_FALSE(version().empty());
  EXPECT_NE(r.plan_summary.find(", p = "), std::string::npos) << r.plan_summary;
  EXPECT_FALSE(r.stats_summary.empty());
  EXPECT_FALSE(r.interrupted);
}

TEST(Api, EmptyEdgeArrayHasNoTriangles) {
  const CountResult r = count_edges(static_cast<const std::uint64_t*>(nullptr), 0, cpu());
  EXPECT_EQ(r.triangles, 0u);
  EXPECT_EQ(r.edges, 0u);
}

TEST(Api, SelfLoopsAndDuplicatesAreCleaned) {
  const std::vector<std::uint32_t> pairs = {1, 2, 2, 1, 2, 3, 3, 1, 3, 3, 1, 2};
  const CountResult r = count_edges(pairs.data(), pairs.size() / 2, cpu());
  EXPECT_EQ(r.triangles, 1u);
  EXPECT_EQ(r.edges, 3u);
  EXPECT_EQ(r.vertices, 3u);
}

TEST(Api, BadOptionsThrowUsageErrors) {
  const std::vector<std::uint32_t> pairs = {0, 1, 1, 2, 2, 0};
  auto kind_of = [&](CountOptions o) {
    try {
      count_edges(pairs.data(), 3, o);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  CountOptions o = cpu();
  o.backend = "abacus";
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  o = cpu();
  o.scheme = "diagonal";
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  o = cpu();
  o.parts = 5000;
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  EXPECT_THROW(ByteSize("4Q"), Error);
  EXPECT_THROW(ByteSize(-1), Error);
  try {
    parse_byte_size("lots", "gpu_memory");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("gpu_memory"), std::string::npos);
  }
}

TEST(Api, MissingOrBadInputThrowsInputErrors) {
  test::TempDir dir;
  try {
    count(dir.file("absent.el"), cpu());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("absent.el"), std::string::npos);
  }
  test::write_text(dir.file("bad.el"), "0 1\n1 two\n");
  try {
    count(dir.file("bad.el"), cpu());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("bad.el:2"), std::string::npos) << e.what();
  }
  ConvertOptions co;
  co.quiet = true;
  EXPECT_THROW(convert(dir.file("bad.el"), dir.file("bad.tcsr"), co), Error);
  EXPECT_FALSE(std::ifstream(dir.file("bad.tcsr")).good());  // no half-written output
}

TEST(Api, TemporaryFilesAreRemoved) {
  test::TempDir dir;
  CountOptions o = cpu();
  o.tmp_dir = dir.path();
  const std::vector<std::uint32_t> pairs = {0, 1, 1, 2, 2, 0};
  EXPECT_EQ(count_edges(pairs.data(), 3, o).triangles, 1u);
  test::write_text(dir.file("g.el"), "0 1\n1 2\n");
  EXPECT_EQ(count(dir.file("g.el"), o).triangles, 0u);
  std::size_t left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    left += entry.path().filename() != "g.el";
  EXPECT_EQ(left, 0u);
}

}  // namespace
}  // namespace tristream
