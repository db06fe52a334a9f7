// tristream/csr.hpp — in-memory CSR graphs and the views every counter consumes.
//
// The counting model (DESIGN.md): after conversion the graph is a DAG G+ on vertices 0..n-1 in
// rank order; u -> v only if u < v; each row is sorted ascending and has no duplicates.
// A triangle u < v < w is counted once, at the edge u -> v, as w in N+(u) ∩ N+(v).
//
// Partitioned counting works on three block views of one task (i, j, k):
//     A = G_ij (rows: part i, columns: part j), B = G_ik, C = G_jk
//     count(A, B, C) = sum over u, over v in A(u), of |B(u) ∩ C(v)|
// Inside a task every id is local: A's columns index C's rows; B's and C's columns share the
// id space of part k. At p = 1, A = B = C = the whole oriented graph.
#pragma once

#include <algorithm>
#include <vector>

#include "tristream/types.hpp"

namespace tristream {

// The part of a sorted row cols[0..deg) with ids in [lo, hi): [*s, *t).
inline void cut_range(const vid_t* cols, std::uint64_t deg, std::uint64_t lo, std::uint64_t hi,
                      const vid_t** s, const vid_t** t) {
  *s = std::lower_bound(cols, cols + deg, lo);
  *t = std::lower_bound(*s, cols + deg, hi);
}

// A read-only CSR view. Row r's neighbours are cols[offsets[r] .. offsets[r+1]).
// offsets[0] need not be 0 (a view may point into a larger array). Rows are sorted ascending.
struct CsrView {
  std::uint64_t rows = 0;          // number of rows
  const eid_t* offsets = nullptr;  // rows + 1 entries
  const vid_t* cols = nullptr;     // indexed by offsets
  std::uint64_t col_space = 0;     // exclusive upper bound of column ids (for bitmaps, checks)

  eid_t edges() const { return rows ? offsets[rows] - offsets[0] : 0; }
  eid_t degree(std::uint64_t r) const { return offsets[r + 1] - offsets[r]; }
  const vid_t* begin(std::uint64_t r) const { return cols + offsets[r]; }
  const vid_t* end(std::uint64_t r) const { return cols + offsets[r + 1]; }
};

// An owning CSR (offsets.size() == rows + 1, offsets[0] == 0).
struct Csr {
  std::vector<eid_t> offsets{0};
  std::vector<vid_t> cols;
  std::uint64_t col_space = 0;

  std::uint64_t rows() const { return offsets.size() - 1; }
  eid_t edges() const { return offsets.back(); }
  CsrView view() const { return CsrView{rows(), offsets.data(), cols.data(), col_space}; }
};

// The oriented graph of one .tcsr file loaded whole: n vertices in rank order, m directed edges
// u -> v (u < v), one per undirected simple edge.
struct OrientedGraph {
  Csr csr;                      // rows() == n, col_space == n
  std::vector<orig_id_t> perm;  // perm[new id] = original id (may be empty if not loaded)
  std::uint64_t n() const { return csr.rows(); }
  eid_t m() const { return csr.edges(); }
};

// Builds the oriented graph from an undirected edge list given in compact ids 0..n-1
// (self-loops dropped, duplicates and reverse duplicates merged), ranking vertices by
// (degree, id) and renaming them to their rank. new_of_old, if non-null, receives the renaming.
// Used by tests, generators and the in-memory converter path.
OrientedGraph orient_edge_list(std::uint64_t n, std::vector<std::pair<vid_t, vid_t>> edges,
                               std::vector<vid_t>* new_of_old = nullptr);

}  // namespace tristream
