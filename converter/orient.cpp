// orient.cpp — orientation of an in-memory undirected edge list (compact ids) into G+.
//
// Contract: input ids are < n; output is the DAG G+ where vertices are renamed to their rank by
// (undirected degree, original compact id) ascending, each undirected simple edge {a, b} becomes
// exactly one directed edge rank(a) -> rank(b) with rank(a) < rank(b), rows sorted ascending.
// Self-loops are dropped and duplicates (in either direction) merged.
#include <algorithm>
#include <numeric>

#include "tristream/csr.hpp"
#include "tristream/error.hpp"

namespace tristream {

OrientedGraph orient_edge_list(std::uint64_t n, std::vector<std::pair<vid_t, vid_t>> edges,
                               std::vector<vid_t>* new_of_old) {
  if (n > kMaxVertices)
    throw Error(ErrorKind::Input,
                "graph has " + std::to_string(n) + " vertices; at most 2^32-1 are supported");
  // 1. Normalise each edge to (min, max), drop self-loops, sort and deduplicate.
  std::size_t w = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    auto [a, b] = edges[i];
    if (a == b) continue;
    TS_CHECK(a < n && b < n, "edge endpoint out of range");
    edges[w++] = a < b ? std::make_pair(a, b) : std::make_pair(b, a);
  }
  edges.resize(w);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

  // 2. Undirected degrees and ranks by (degree, id).
  std::vector<eid_t> degree(n, 0);
  for (auto [a, b] : edges) {
    ++degree[a];
    ++degree[b];
  }
  std::vector<vid_t> order(n);
  std::iota(order.begin(), order.end(), vid_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](vid_t x, vid_t y) { return degree[x] < degree[y]; });
  std::vector<vid_t> rank(n);
  for (std::uint64_t r = 0; r < n; ++r) rank[order[r]] = static_cast<vid_t>(r);

  // 3. Orient low rank -> high rank and build the CSR with sorted rows.
  for (auto& e : edges) {
    vid_t a = rank[e.first], b = rank[e.second];
    e = a < b ? std::make_pair(a, b) : std::make_pair(b, a);
  }
  std::sort(edges.begin(), edges.end());
  OrientedGraph g;
  g.csr.offsets.assign(n + 1, 0);
  g.csr.cols.resize(edges.size());
  g.csr.col_space = n;
  for (auto [a, b] : edges) ++g.csr.offsets[a + 1];
  for (std::uint64_t i = 0; i < n; ++i) g.csr.offsets[i + 1] += g.csr.offsets[i];
  for (std::size_t i = 0; i < edges.size(); ++i) g.csr.cols[i] = edges[i].second;
  g.perm.resize(n);
  for (std::uint64_t r = 0; r < n; ++r) g.perm[r] = order[r];
  if (new_of_old) *new_of_old = std::move(rank);
  return g;
}

}  // namespace tristream
