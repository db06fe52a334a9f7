// convert_paths_test.cpp — the in-memory routes of the converter give the same graph: edges whose
// ids index a per-id array cheaply (sorted straight from the parsed blocks in their own ids), ids
// compacted through a bitmap (fewer edges per id), and sparse ids of 2^32 or more (a sorted id
// table, records); buckets of the first sort deduplicated by hashing or, above 2^16 keys, sorted;
// the two ways of ranking the vertices (a counting sort on degree when the degrees take few values,
// else a sort), the rows of G+ sorted straight into 32-bit columns (up to about 2^22 vertices) or
// as 64-bit keys, and every thread count and memory limit on each.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/counter.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using test::clean;
using test::edge_set;
using test::OrigEdge;
using test::read_text;
using test::TempDir;
using test::write_text;

ConvertOptions quiet(unsigned threads) {
  ConvertOptions o;
  o.quiet = true;
  o.threads = threads;
  return o;
}

// The edges (with repeats, reversed repeats and self-loops) with every id x written as f(x).
std::vector<OrigEdge> relabel(const test::EdgeList& e,
                              const std::function<std::uint64_t(std::uint64_t)>& f) {
  std::vector<OrigEdge> out;
  std::uint64_t i = 0;
  for (auto [a, b] : e) {
    out.emplace_back(f(a), f(b));
    if (++i % 9 == 0) out.emplace_back(f(b), f(a));
    if (i % 97 == 0) out.emplace_back(f(a), f(a));
  }
  return out;
}

void write_edges(const std::string& path, const std::vector<OrigEdge>& e) {
  std::string s;
  for (auto [a, b] : e) s += std::to_string(a) + " " + std::to_string(b) + "\n";
  write_text(path, s);
}

// Converts `path` with 1 thread, then with 2 and 5 threads, in memory and under a 256K limit (out
// of core unless the input fits it): the same bytes every time. Returns them.
std::string same_bytes_every_way(const TempDir& d, const std::string& path, bool fits = false) {
  convert(path, d.file("ref.tcsr"), quiet(1));
  const std::string want = read_text(d.file("ref.tcsr"));
  for (unsigned threads : {2u, 5u})
    for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{256} << 10}) {
      ConvertOptions o = quiet(threads);
      o.memory_limit = limit;
      o.tmp_dir = d.path();
      const ConvertSummary s = convert(path, d.file("t.tcsr"), o);
      EXPECT_EQ(s.out_of_core, limit != 0 && !fits) << threads << " " << limit;
      EXPECT_EQ(read_text(d.file("t.tcsr")), want) << path << " " << threads << " " << limit;
    }
  return want;
}

TEST(ConvertPaths, OwnIdsBitmapAndSparseIdsGiveTheSameGraph) {
  // 30000 vertices, about 330000 edge records: with the ids as they are, one id per 8 edges or
  // fewer (sorted in their own ids); times 9, more ids than that (compacted through a bitmap);
  // times 2^20 plus 5, ids above 2^32 (records, a sorted id table). The maps are increasing, so
  // the ranks, and the rows of G+, are the same; the permutations name the mapped ids.
  TempDir d;
  const test::EdgeList base = test::skewed_graph(30000, 300000, 21);
  const std::vector<std::function<std::uint64_t(std::uint64_t)>> maps = {
      [](std::uint64_t x) { return x; }, [](std::uint64_t x) { return 9 * x; },
      [](std::uint64_t x) { return (x << 20) + 5; }};
  std::vector<OrientedGraph> graphs;
  for (std::size_t k = 0; k < maps.size(); ++k) {
    const std::vector<OrigEdge> e = relabel(base, maps[k]);
    const std::string path = d.file("g" + std::to_string(k) + ".el");
    write_edges(path, e);
    same_bytes_every_way(d, path);
    EXPECT_EQ(edge_set(d.file("ref.tcsr")), clean(e)) << k;
    graphs.push_back(tcsr::Reader(d.file("ref.tcsr")).load(true));
  }
  for (std::size_t k = 1; k < graphs.size(); ++k) {
    EXPECT_EQ(graphs[k].csr.offsets, graphs[0].csr.offsets) << k;
    EXPECT_EQ(graphs[k].csr.cols, graphs[0].csr.cols) << k;
    ASSERT_EQ(graphs[k].perm.size(), graphs[0].perm.size());
    for (std::size_t r = 0; r < graphs[0].perm.size(); ++r)
      ASSERT_EQ(graphs[k].perm[r], maps[k](graphs[0].perm[r])) << k << " rank " << r;
  }
}

TEST(ConvertPaths, RanksOfAHubAboveTheCountingSortsReach) {
  // A hub joined to 100000 vertices among a few thousand other edges: its degree times the
  // threads exceeds the id space for 2 threads and more (the vertices ranked by a sort), not for
  // one (a counting sort on degree). The same bytes either way, and the hub ranked last.
  TempDir d;
  std::vector<OrigEdge> e;
  for (std::uint64_t v = 1; v <= 100000; ++v) e.emplace_back(0, v);
  for (auto [a, b] : test::random_graph(100001, 20000, 22)) e.emplace_back(a, b);
  write_edges(d.file("hub.el"), e);
  same_bytes_every_way(d, d.file("hub.el"));
  EXPECT_EQ(edge_set(d.file("ref.tcsr")), clean(e));
  const OrientedGraph g = tcsr::Reader(d.file("ref.tcsr")).load(true);
  ASSERT_FALSE(g.perm.empty());
  EXPECT_EQ(g.perm.back(), 0u);
}

TEST(ConvertPaths, DegreeCountsOfFewEdgesAndSmallIds) {
  // Fewer keys than a radix sort takes (one bucket sorted whole) and ids below 2^12 (a sorted
  // bucket shares its first ids with others): the routes still agree.
  TempDir d;
  const test::EdgeList base = test::random_graph(1000, 80000, 23);
  const std::vector<OrigEdge> e = relabel(base, [](std::uint64_t x) { return x; });
  write_edges(d.file("small.el"), e);
  same_bytes_every_way(d, d.file("small.el"));
  EXPECT_EQ(edge_set(d.file("ref.tcsr")), clean(e));
  const std::vector<OrigEdge> few(e.begin(), e.begin() + 5000);
  write_edges(d.file("few.el"), few);
  same_bytes_every_way(d, d.file("few.el"), true);
  EXPECT_EQ(edge_set(d.file("ref.tcsr")), clean(few));
}

TEST(ConvertPaths, HubBucketAboveTheHashTablesReach) {
  // Ids below 10000 sorted in their own ids: vertex 1 joined to every other id ten times over
  // (one bucket of the first sort holds about 100000 keys, sorted with its repeats removed; the
  // other buckets lose theirs by hashing), among random edges. The same bytes every way.
  TempDir d;
  std::vector<OrigEdge> e;
  for (int rep = 0; rep < 10; ++rep)
    for (std::uint64_t v = 0; v < 10000; ++v)
      if (v != 1) e.emplace_back(rep % 2 ? v : 1, rep % 2 ? 1 : v);
  for (auto [a, b] : test::random_graph(10000, 60000, 24)) e.emplace_back(a, b);
  write_edges(d.file("hub.el"), e);
  same_bytes_every_way(d, d.file("hub.el"));
  EXPECT_EQ(edge_set(d.file("ref.tcsr")), clean(e));
}

TEST(ConvertPaths, RowsOfMoreThan2To22VerticesSortAs64BitKeys) {
  // A path through 4.3 M vertices with a chord (i, i + 2) at every 1000th vertex: too many
  // vertices for the rows' 32-bit sort. 4300 triangles, the same bytes on 1 and 3 threads.
  TempDir d;
  const std::uint64_t n = 4300000;
  std::string bin;
  auto put = [&](std::uint32_t a, std::uint32_t b) {
    bin.append(reinterpret_cast<const char*>(&a), 4);
    bin.append(reinterpret_cast<const char*>(&b), 4);
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    put(i, i + 1);
    if (i % 1000 == 0) put(i + 2, i);
  }
  write_text(d.file("path.bin32"), bin);
  convert(d.file("path.bin32"), d.file("one.tcsr"), quiet(1));
  convert(d.file("path.bin32"), d.file("three.tcsr"), quiet(3));
  EXPECT_EQ(read_text(d.file("three.tcsr")), read_text(d.file("one.tcsr")));
  const OrientedGraph g = tcsr::Reader(d.file("one.tcsr")).load();
  EXPECT_EQ(g.n(), n + 1);
  EXPECT_EQ(g.m(), n + 4300);
  EXPECT_EQ(make_cpu_counter()->count(g.csr.view()), 4300u);
}

}  // namespace
}  // namespace tristream
