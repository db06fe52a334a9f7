// build.cpp — a candidate plan's partition and units from the census (plan/build.hpp): range
// (and pair) parts grouped from the fine buckets by one of three cuts, hash parts folded from the
// residues, vertex parts from the wedge-balanced groups; the tasks pruned where a block is empty,
// in the partition's own order.
#include "plan/build.hpp"

#include <algorithm>
#include <vector>

#include "common/thread_pool.hpp"
#include "plan/replay.hpp"
#include "tristream/error.hpp"

namespace tristream::plan_internal {
namespace {

// The work of rows: the sum of d (d - 1) / 2 over their out-degrees, exact (128-bit), as a double
// (rows_work, row_work): equal to a double sum in row order while below 2^53, whatever the threads.
// Many rows are summed in pieces on all cores (the in-core unit of a graph of 100 M rows: 0.15 s on
// one).
using u128 = unsigned __int128;
u128 wedges_of_rows(const eid_t* off, std::uint64_t a, std::uint64_t b) {
  u128 w = 0;
  for (std::uint64_t r = a; r < b; ++r) {
    const std::uint64_t d = off[r + 1] - off[r];
    if (d < (std::uint64_t{1} << 32)) {
      w += d * (d - (d > 0)) / 2;  // (below 2^64: one 64-bit product)
    } else {
      const u128 D = d;
      w += D * (D - 1) / 2;
    }
  }
  return w;
}

// The wedges of each span of rows [b[g], b[g + 1]), exact. Many rows (at least 4 pieces' worth)
// are summed in pieces of kPiece rows on all cores, every span cut into pieces of its own: the
// census's vertex groups balance wedges, not rows (the first of Kronecker 25's 16 holds 96% of its
// rows), so a thread per span would leave one thread most of the pass. The sums are integers, the
// same whatever the pieces.
std::vector<u128> wedges_of_spans(const eid_t* off, const std::vector<std::uint64_t>& b) {
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  const std::size_t G = b.size() - 1;
  std::vector<std::size_t> first(G + 1, 0);  // span g's pieces: [first[g], first[g + 1])
  for (std::size_t g = 0; g < G; ++g)
    first[g + 1] = first[g] + (b[g + 1] - b[g] + kPiece - 1) / kPiece;
  std::vector<u128> part(first[G], 0);
  auto sum_piece = [&](std::size_t x) {
    const std::size_t g = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), x) -
                                                   first.begin() - 1);
    const std::uint64_t a = b[g] + (x - first[g]) * kPiece;
    part[x] = wedges_of_rows(off, a, std::min(b[g + 1], a + kPiece));
  };
  if (b.back() - b.front() >= 4 * kPiece && part.size() > 1) {
    ThreadPool pool(static_cast<unsigned>(std::min<std::size_t>(resolve_threads(0), part.size())));
    pool.for_each_item(part.size(), [&](std::size_t x, unsigned) { sum_piece(x); });
  } else {
    for (std::size_t x = 0; x < part.size(); ++x) sum_piece(x);
  }
  std::vector<u128> spans(G, 0);
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t x = first[g]; x < first[g + 1]; ++x) spans[g] += part[x];
  return spans;
}

double rows_work(const eid_t* off, std::uint64_t r0, std::uint64_t r1) {
  return static_cast<double>(wedges_of_spans(off, {r0, r1})[0]);
}

// Units of a range or hash partition from a p x p edge matrix.
void block_units(Plan& plan, const std::vector<eid_t>& E, const eid_t* off, eid_t m) {
  const Partition& P = plan.partition;
  const std::uint32_t p = P.p;
  const bool range = P.scheme == Scheme::Range;
  std::vector<eid_t> row_edges(p, 0);  // edges of the rows of each part
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = 0; b < p; ++b) row_edges[a] += E[a * p + b];
  auto block = [&](std::uint32_t a, std::uint32_t b) {
    BlockInfo bi;
    bi.row_part = a;
    bi.col_part = b;
    bi.rows = P.rows(a);
    bi.edges = E[a * p + b];
    bi.col_space = P.rows(b);
    bi.bytes = block_bytes(bi.rows, bi.edges);
    bi.upload_bytes = packed_block_bytes(bi.rows, bi.edges);
    return bi;
  };
  auto walk_bytes = [&](std::uint32_t a) -> std::uint64_t {
    // range rows are contiguous; hash rows are spread over (almost) every chunk
    return (range ? row_edges[a] : m) * sizeof(vid_t);
  };
  (void)off;
  // what the host block cache needs: all blocks of one row part, of every row part
  plan.row_part_max_bytes = plan.row_parts_bytes = plan.row_part_chunk_bytes = 0;
  plan.row_part_bytes.assign(p, 0);
  for (std::uint32_t a = 0; a < p; ++a) {
    // the blocks G_ab with b >= first_block(a) (range: those below the diagonal are empty),
    // each with dense or packed offsets, whichever is smaller
    std::uint64_t b = 0;
    for (std::uint32_t c = P.first_block(a); c < p; ++c)
      b += packed_block_bytes(P.rows(a), E[a * p + c]);
    plan.row_part_bytes[a] = b;
    plan.row_part_max_bytes = std::max(plan.row_part_max_bytes, b);
    plan.row_parts_bytes += b;
    plan.row_part_chunk_bytes = std::max<std::uint64_t>(plan.row_part_chunk_bytes, walk_bytes(a));
  }
  // Order: range tasks by descending i (the row part of A and B), then j >= i, then k >= j, so
  // that the units needing only row parts i..p-1 (A, B from row part i, C from row part j >= i)
  // come first and the pipeline counts them while lower row parts are still being built. The
  // high row parts are few rows holding the dense core: cheap to build and the most work, so
  // kernels start at once and the heavy units overlap the build of the low row parts (millions
  // of short rows, the longest to build and the least work). Hash tasks by i, j, k. Either way
  // A = G_ij stays for the run of k, and the slot keeps it (reuse_a).
  // Only the tasks whose three blocks hold edges become units (no triangle lies elsewhere); they
  // are found from each row part's nonempty blocks, so the work is the pairs of nonempty blocks
  // of a row part, never all p^3 triples.
  std::vector<std::uint32_t> nonempty;  // row part i's column parts b >= first_block(i) with edges
  for (std::uint32_t x = 0; x < p; ++x) {
    const std::uint32_t i = range ? p - 1 - x : x;
    nonempty.clear();
    for (std::uint32_t b = P.first_block(i); b < p; ++b)
      if (E[static_cast<std::size_t>(i) * p + b] != 0) nonempty.push_back(b);
    for (std::size_t y = 0; y < nonempty.size(); ++y)
      for (std::size_t z = range ? y : 0; z < nonempty.size(); ++z) {
        const std::uint32_t j = nonempty[y], k = nonempty[z];
        const eid_t eij = E[static_cast<std::size_t>(i) * p + j],
                    eik = E[static_cast<std::size_t>(i) * p + k],
                    ejk = E[static_cast<std::size_t>(j) * p + k];
        if (ejk == 0) continue;  // pruned: no triangle possible
        WorkUnit w;
        w.i = i;
        w.j = j;
        w.k = k;
        w.a = block(i, j);
        w.b = block(i, k);
        w.c = block(j, k);
        w.b_is_a = j == k;
        w.c_is_a = i == j && j == k;
        w.c_is_b = i == j;
        w.decompress_bytes = walk_bytes(i) + (i == j ? 0 : walk_bytes(j));
        const double ri = std::max<double>(1, static_cast<double>(w.a.rows));
        const double rj = std::max<double>(1, static_cast<double>(w.c.rows));
        w.work = static_cast<double>(eij) *
                 (static_cast<double>(eik) / ri + static_cast<double>(ejk) / rj);
        plan.units.push_back(w);
      }
  }
}

// Pair: one unit per pair i <= j of range parts, A = G_ij, B = R_i and C = R_j, where R_a =
// G_{a,>=0} is row part a whole with global column ids (the suffix block of column part code p:
// the columns in parts 0..p-1, ids column - bounds[0]). A triangle u < v < w lies in the unit
// (part u, part v) only, found as count(A, B, C): for the edge u -> v of A, w lies in B(u) =
// N+(u) and in C(v) = N+(v), the in-core rows. Every edge of the graph is an edge of A once, and
// every intersection is the in-core one, so the kernels do the in-core work over p(p+1)/2 units.
// B stays for the run of i and C = R_j serves every i <= j (and is B of the unit (j, j)). A is cut
// from B by the backend (SlotBlock::cut), so the host holds and uploads the row parts R_a only.
void pair_units(Plan& plan, const std::vector<eid_t>& E) {
  const Partition& P = plan.partition;
  const std::uint32_t p = P.p;
  const std::uint32_t rows_code = P.suffix_block(0);  // R_a's column part
  // 1. Row part a's edges (range: all of them in column parts >= a).
  std::vector<eid_t> R(p, 0);
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = 0; b < p; ++b) R[a] += E[static_cast<std::size_t>(a) * p + b];
  auto edges = [&](std::uint32_t a, std::uint32_t c) {
    return c == rows_code ? R[a] : E[static_cast<std::size_t>(a) * p + c];
  };
  auto block = [&](std::uint32_t a, std::uint32_t c) {
    BlockInfo bi;
    bi.row_part = a;
    bi.col_part = c;
    bi.rows = P.rows(a);
    bi.edges = edges(a, c);
    bi.col_space = P.col_hi(c) - P.col_lo(c);
    bi.bytes = block_bytes(bi.rows, bi.edges);
    // A = G_ij is cut from B = R_i on the device (Partition::cuts_a): never uploaded
    bi.upload_bytes = c == rows_code || !P.cuts_a() ? packed_block_bytes(bi.rows, bi.edges) : 0;
    return bi;
  };
  auto walk_bytes = [&](std::uint32_t a) -> std::uint64_t { return R[a] * sizeof(vid_t); };
  // 2. What the host block cache needs: row part a whole, R_a (the G_ab are cut from it on the
  // device).
  plan.row_part_max_bytes = plan.row_parts_bytes = plan.row_part_chunk_bytes = 0;
  plan.row_part_bytes.assign(p, 0);
  for (std::uint32_t a = 0; a < p; ++a) {
    const std::uint64_t b = packed_block_bytes(P.rows(a), R[a]);
    plan.row_part_bytes[a] = b;
    plan.row_part_max_bytes = std::max(plan.row_part_max_bytes, b);
    plan.row_parts_bytes += b;
    plan.row_part_chunk_bytes = std::max<std::uint64_t>(plan.row_part_chunk_bytes, walk_bytes(a));
  }
  // 3. The units by descending i, then j (range's order: the units needing only row parts
  // i..p-1 first; B = R_i stays for the run), pruned where A or C is empty (B holds A).
  for (std::uint32_t i = p; i-- > 0;)
    for (std::uint32_t j = i; j < p; ++j) {
      const eid_t eij = edges(i, j);
      if (eij == 0 || R[j] == 0) continue;
      WorkUnit w;
      w.i = i;
      w.j = w.k = j;
      w.a = block(i, j);
      w.b = block(i, rows_code);
      w.c = block(j, rows_code);
      w.c_is_b = i == j;
      w.decompress_bytes = walk_bytes(i) + (i == j ? 0 : walk_bytes(j));
      const double ri = std::max<double>(1, static_cast<double>(w.a.rows));
      const double rj = std::max<double>(1, static_cast<double>(w.c.rows));
      w.work = static_cast<double>(eij) *
               (static_cast<double>(R[i]) / ri + static_cast<double>(R[j]) / rj);
      plan.units.push_back(w);
    }
}

// Range: the fine buckets grouped into p parts (sets the bounds); returns the p x p block edges.
std::vector<eid_t> range_block_edges(Partition& P, int variant, const Census& census) {
  const std::uint32_t p = P.p;
  const auto& fb = census.fine_bounds;
  const std::uint32_t F = static_cast<std::uint32_t>(fb.size() - 1);
  // group fine buckets into p parts balanced by out-edges (variant 0), by out- plus in-edges
  // (variant 1: blocks balanced as rows and as columns, BBTC's symmetric cut), or by bytes
  // (variant 2: 4 per column and 8 per row, an offsets entry — in rank order the first parts
  // hold millions of short rows, whose offsets, repeated in each of their blocks, make the
  // largest units; at Kronecker 24 and a quarter of the footprint this cut fits p = 17 where
  // the others need 20 and more, moving fewer bytes)
  // (the row and column sums of the fine histogram from its prefix sums: O(F) per candidate;
  // every sum is an integer below 2^53, so the doubles are exact in any order)
  const auto& S = census.fine_prefix();
  const std::size_t W = F + 1;
  std::vector<double> weight(F, 0);
  for (std::uint32_t x = 0; x < F; ++x) {
    const double row = static_cast<double>(S[(x + 1) * W + F] - S[x * W + F]);
    const double col = static_cast<double>(S[F * W + x + 1] - S[F * W + x]);
    weight[x] = variant == 2 ? row * sizeof(vid_t) : row;
    if (variant == 1) weight[x] += col;
    if (variant == 2) weight[x] += static_cast<double>(fb[x + 1] - fb[x]) * sizeof(eid_t);
  }
  double total = 0;
  for (double w : weight) total += w;
  std::vector<std::uint32_t> gidx(p + 1, 0);
  gidx[p] = F;
  {
    double acc = 0;
    std::uint32_t a = 1;
    for (std::uint32_t f = 0; f < F && a < p; ++f) {
      // cut before f when that lands closer to the target than cutting after it
      while (a < p && acc + weight[f] / 2 >= total * a / p) gidx[a++] = f;
      acc += weight[f];
    }
    for (; a < p; ++a) gidx[a] = F;
    for (std::uint32_t x = 1; x <= p; ++x) gidx[x] = std::max(gidx[x], gidx[x - 1]);
  }
  P.bounds.resize(p + 1);
  for (std::uint32_t a = 0; a <= p; ++a) P.bounds[a] = fb[gidx[a]];
  // block edges from the 2D prefix sums of the fine histogram
  std::vector<eid_t> E(static_cast<std::size_t>(p) * p, 0);
  for (std::uint32_t a = 0; a < p; ++a)
    for (std::uint32_t b = 0; b < p; ++b) {
      const std::size_t x0 = gidx[a], x1 = gidx[a + 1], y0 = gidx[b], y1 = gidx[b + 1];
      E[a * p + b] = S[x1 * W + y1] - S[x0 * W + y1] - S[x1 * W + y0] + S[x0 * W + y0];
    }
  return E;
}

// Hash: the residues mod H folded into residues mod p; returns the p x p block edges.
std::vector<eid_t> hash_block_edges(const Partition& P, const Census& census) {
  const std::uint32_t p = P.p;
  const std::uint32_t H = census.hash_mod;
  TS_CHECK(H % p == 0, "hash census does not match the number of parts");
  std::vector<eid_t> E(static_cast<std::size_t>(p) * p, 0);
  for (std::uint32_t x = 0; x < H; ++x)
    for (std::uint32_t y = 0; y < H; ++y) E[(x % p) * p + (y % p)] += census.hash_hist[x * H + y];
  return E;
}

// Vertex: one unit per part (the bounds from the wedge-balanced groups), A = B = the rows of V_i
// and C the proxy rows X_i.
void vertex_units(Plan& plan, eid_t m, const eid_t* off, const Census& census,
                  const RowWork* work) {
  Partition& P = plan.partition;
  const std::uint32_t p = P.p;
  const Census::VertexParts* vp = nullptr;
  for (const auto& v : census.vertex)
    if (v.p == p) vp = &v;
  TS_CHECK(vp != nullptr, "vertex census does not match the number of parts");
  const std::uint32_t G = static_cast<std::uint32_t>(census.vertex_bounds.size() - 1);
  P.bounds.resize(p + 1);
  for (std::uint32_t a = 0; a <= p; ++a) P.bounds[a] = census.vertex_bounds[a * (G / p)];
  for (std::uint32_t i = 0; i < p; ++i) {
    const std::uint64_t r0 = P.bounds[i], r1 = P.bounds[i + 1];
    const eid_t ea = off[r1] - off[r0];
    if (ea == 0) continue;
    WorkUnit w;
    w.i = w.j = w.k = i;
    w.a.row_part = i;
    w.a.col_part = 0;
    w.a.rows = r1 - r0;
    w.a.edges = ea;
    w.a.col_space = vp->proxies[i];
    w.a.bytes = w.a.upload_bytes = block_bytes(w.a.rows, w.a.edges);
    w.b = w.a;
    w.b_is_a = true;
    w.c.row_part = i;
    w.c.col_part = 1;
    w.c.rows = vp->proxies[i];
    w.c.edges = vp->proxy_edges_bound[i];
    w.c.col_space = vp->proxies[i];
    w.c.bytes = w.c.upload_bytes = block_bytes(w.c.rows, w.c.edges);
    w.decompress_bytes = (ea + (m - (off[r0] - off[0]))) * sizeof(vid_t);
    w.work = work ? work->of(r0, r1) : rows_work(off, r0, r1);
    plan.units.push_back(w);
  }
}

}  // namespace

double RowWork::of(std::uint64_t r0, std::uint64_t r1) const {
  const auto g0 = std::lower_bound(bounds.begin(), bounds.end(), r0);
  const auto g1 = std::lower_bound(bounds.begin(), bounds.end(), r1);
  TS_CHECK(g0 != bounds.end() && *g0 == r0 && g1 != bounds.end() && *g1 == r1,
           "a span of rows that is not one of the census's vertex groups");
  return prefix[static_cast<std::size_t>(g1 - bounds.begin())] -
         prefix[static_cast<std::size_t>(g0 - bounds.begin())];
}

RowWork row_work(std::uint64_t n, const eid_t* off, const Census& census) {
  RowWork t;
  t.bounds = census.vertex_bounds.size() >= 2 && census.vertex_bounds.front() == 0 &&
                     census.vertex_bounds.back() == n
                 ? census.vertex_bounds
                 : std::vector<std::uint64_t>{0, n};
  t.prefix.assign(t.bounds.size(), 0);
  const std::vector<u128> spans = wedges_of_spans(off, t.bounds);
  for (std::size_t g = 0; g < spans.size(); ++g)
    t.prefix[g + 1] = t.prefix[g] + static_cast<double>(spans[g]);
  return t;
}

// The single in-core unit.
void in_core_unit(Plan& plan, std::uint64_t n, eid_t m, const eid_t* off, const RowWork* work) {
  plan.partition = Partition{};
  plan.partition.scheme = Scheme::Range;
  plan.partition.p = 1;
  plan.partition.n = n;
  plan.partition.bounds = {0, n};
  if (m == 0) return;
  WorkUnit w;
  BlockInfo b;
  b.rows = n;
  b.edges = m;
  b.col_space = n;
  b.bytes = b.upload_bytes = block_bytes(n, m);
  w.a = w.b = w.c = b;
  w.b_is_a = w.c_is_a = w.c_is_b = true;
  w.decompress_bytes = m * sizeof(vid_t);
  w.work = work ? work->of(0, n) : rows_work(off, 0, n);
  plan.units.push_back(w);
}

std::uint64_t device_floor(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                           const Census& census) {
  if (p <= 1 || m == 0 || scheme == Scheme::Vertex) return 0;
  // 1. The partition's block edges, as build_plan draws them.
  Partition P;
  P.scheme = scheme;
  P.p = p;
  P.n = n;
  const std::vector<eid_t> E =
      scheme == Scheme::Hash ? hash_block_edges(P, census) : range_block_edges(P, variant, census);
  auto at = [&](std::uint32_t a, std::uint32_t b) {
    return E[static_cast<std::size_t>(a) * p + b];
  };
  auto bytes = [&](std::uint32_t a, eid_t edges) { return block_bytes(P.rows(a), edges); };
  // 2. The units' slots (their distinct blocks), as block_units and pair_units make them.
  std::uint64_t slot = 0, units = 0;
  if (scheme == Scheme::Pair) {
    std::vector<eid_t> R(p, 0);
    for (std::uint32_t a = 0; a < p; ++a)
      for (std::uint32_t b = 0; b < p; ++b) R[a] += at(a, b);
    for (std::uint32_t i = 0; i < p; ++i)
      for (std::uint32_t j = i; j < p; ++j) {
        if (at(i, j) == 0 || R[j] == 0) continue;
        ++units;
        slot = std::max(slot, bytes(i, at(i, j)) + bytes(i, R[i]) + (i == j ? 0 : bytes(j, R[j])));
      }
  } else {
    const bool range = scheme == Scheme::Range;
    std::vector<std::uint32_t> nonempty;
    for (std::uint32_t i = 0; i < p; ++i) {
      nonempty.clear();
      for (std::uint32_t b = P.first_block(i); b < p; ++b)
        if (at(i, b) != 0) nonempty.push_back(b);
      for (std::size_t y = 0; y < nonempty.size(); ++y)
        for (std::size_t z = range ? y : 0; z < nonempty.size(); ++z) {
          const std::uint32_t j = nonempty[y], k = nonempty[z];
          if (at(j, k) == 0) continue;
          ++units;
          slot = std::max(slot, bytes(i, at(i, j)) + (j == k ? 0 : bytes(i, at(i, k))) +
                                    (i == j ? 0 : bytes(j, at(j, k))));
        }
    }
  }
  // 3. Two slots at least once there are two units (finish_units; the device cache only adds).
  return (units >= 2 ? 2 : 1) * slot;
}

Plan build_plan(Scheme scheme, std::uint32_t p, int variant, std::uint64_t n, eid_t m,
                const eid_t* off, const Census& census, bool per_vertex, std::uint64_t cache_room,
                const RowWork* work) {
  Plan plan;
  plan.device_cache_room = cache_room;
  // 1. p = 1 (or nothing to count): the in-core unit.
  if (p <= 1 || m == 0) {
    in_core_unit(plan, n, m, off, work);
    finish_units(plan, per_vertex);
    return plan;
  }
  // 2. The partition and its units.
  Partition& P = plan.partition;
  P.scheme = scheme;
  P.p = p;
  P.n = n;
  if (scheme == Scheme::Range)
    block_units(plan, range_block_edges(P, variant, census), off, m);
  else if (scheme == Scheme::Pair)
    pair_units(plan, range_block_edges(P, variant, census));
  else if (scheme == Scheme::Hash)
    block_units(plan, hash_block_edges(P, census), off, m);
  else
    vertex_units(plan, m, off, census, work);
  // 3. Their bytes and the device cache's replay.
  finish_units(plan, per_vertex);
  return plan;
}

}  // namespace tristream::plan_internal
