// stream/block_builder.cpp — a row part's blocks from its rows (stream/block_builder.hpp).
#include "stream/block_builder.hpp"

#include <cstring>

#include "common/thread_pool.hpp"
#include "tristream/packed_rows.hpp"

namespace tristream::stream {

namespace {

// x / d and x % d for 32-bit x by a multiplication (d a power of two: a shift and a mask). With
// M = ceil(2^64 / d) the quotient floor(x * M / 2^64) is exact for every x < 2^32.
class FastDiv {
 public:
  explicit FastDiv(std::uint32_t d) : d_(std::max<std::uint32_t>(1, d)) {
    pow2_ = (d_ & (d_ - 1)) == 0;
    if (pow2_)
      shift_ = static_cast<unsigned>(__builtin_ctz(d_));
    else
      magic_ = ~std::uint64_t{0} / d_ + 1;
  }
  std::uint32_t div(std::uint32_t x) const {
    if (pow2_) return x >> shift_;
    using u128 = unsigned __int128;
    return static_cast<std::uint32_t>((static_cast<u128>(x) * magic_) >> 64);
  }
  std::uint32_t mod(std::uint32_t x) const { return pow2_ ? x & (d_ - 1) : x - div(x) * d_; }

 private:
  std::uint32_t d_;
  bool pow2_ = true;
  unsigned shift_ = 0;
  std::uint64_t magic_ = 0;
};

}  // namespace

BlockBuilder::BlockBuilder(const Partition& partition, ChunkReader& reader)
    : P_(partition), reader_(reader), g_(reader.graph()), threads_(reader.pool().threads()) {
  // range cuts: the part of every 2^shift-th vertex, for build (at most 2^16 + 1)
  if (P_.scheme != Scheme::Hash && !P_.bounds.empty()) {
    while ((P_.n >> coarse_shift_) > (std::uint64_t{1} << 16)) ++coarse_shift_;
    for (std::uint64_t x = 0; x <= (P_.n >> coarse_shift_); ++x)
      coarse_part_.push_back(P_.part_of(x << coarse_shift_));
  }
}

void BlockBuilder::rows_needed(std::uint32_t part, std::vector<std::uint64_t>& needed) const {
  const Partition& P = P_;
  needed.clear();
  if (P.scheme == Scheme::Hash) {
    for (std::uint64_t r = part; r < g_.n(); r += P.p) reader_.need_row(r, needed);
  } else {
    const eid_t* off = g_.offsets();
    const std::uint64_t r0 = P.bounds[part], r1 = P.bounds[part + 1];
    if (off[r0] < off[r1]) {
      const std::uint64_t c0 = reader_.chunk_of(off[r0]), c1 = reader_.chunk_of(off[r1] - 1);
      for (std::uint64_t c = c0; c <= c1; ++c) needed.push_back(c);
    }
  }
}

std::vector<std::uint64_t> BlockBuilder::segments(std::uint32_t part, std::uint64_t R) const {
  const Partition& P = P_;
  const std::uint64_t S = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(R, std::max<std::uint64_t>(64, 8 * threads_)));
  std::vector<std::uint64_t> seg(S + 1, 0);
  if (P.scheme == Scheme::Hash) {
    for (std::uint64_t x = 0; x < S; ++x) seg[x] = chunk_range(R, S, x).lo;
    seg[S] = R;
    return seg;
  }
  const eid_t* off = g_.offsets();
  const std::uint64_t r0 = P.bounds[part], r1 = P.bounds[part + 1];
  const eid_t e0 = off[r0], E = off[r1] - e0;
  for (std::uint64_t x = 1; x < S; ++x) {
    const eid_t target = e0 + chunk_range(E, S, x).lo;
    const std::uint64_t r =
        static_cast<std::uint64_t>(std::lower_bound(off + r0, off + r1, target) - off);
    seg[x] = std::max(seg[x - 1], std::min(r, r1) - r0);
  }
  seg[S] = R;
  return seg;
}

void BlockBuilder::build(std::uint32_t part, const std::uint32_t* col_parts, std::size_t q,
                         BuildDest* dests, const std::function<void(std::size_t, eid_t)>& sized) {
  const Partition& P = P_;
  const bool hash = P.scheme == Scheme::Hash;
  const std::uint32_t p = P.p;
  const std::uint64_t R = P.rows(part);
  const std::uint64_t r0 = hash ? part : P.bounds[part];
  const std::uint64_t step = hash ? p : 1;
  // Every column part from `first` on, in order (col_parts[d] == first + d): hash needs all p
  // of them; a range row part's columns all lie in parts >= its own (the DAG points up), so
  // for range any suffix starting at or before `part` catches every column. Pair: the plain
  // parts (the first `plain` dests) may be followed by suffix blocks starting at or before
  // `part` (col_parts[d] == p + s, s <= part), which hold whole rows.
  const std::uint32_t first = q ? col_parts[0] : 0;
  std::size_t plain = 0;
  while (plain < q && (hash || col_parts[plain] < p)) ++plain;
  bool all = hash ? q == p && first == 0 : plain == p - first && first <= part;
  for (std::size_t d = 0; d < q && all; ++d)
    all = d < plain ? col_parts[d] == first + d : col_parts[d] >= p && col_parts[d] - p <= part;
  std::vector<std::int32_t> dest_of(hash ? p : 0, -1);
  if (hash)
    for (std::size_t d = 0; d < q; ++d) dest_of[col_parts[d]] = static_cast<std::int32_t>(d);
  // range, pair: the first global id of each dest (its local id 0)
  std::vector<vid_t> lo_of(hash ? 0 : q);
  for (std::size_t d = 0; d < lo_of.size(); ++d)
    lo_of[d] = static_cast<vid_t>(P.col_lo(col_parts[d]));
  for (std::size_t d = 0; d < q; ++d) {
    dests[d].edges = 0;
    dests[d].nonempty = 0;
    dests[d].packed = false;
    if (R == 0) {
      sized(d, 0);
      if (dests[d].off) dests[d].off[0] = 0;
    }
  }
  if (R == 0) return;
  const std::vector<std::uint64_t> seg = segments(part, R);
  const std::size_t S = seg.size() - 1;
  const FastDiv fd(p);
  // Range: the part of a column without a binary search (most rows of a low row part are a
  // few columns long, so the search per run dominated the build): a table of the part of every
  // 2^shift-th vertex, then a step forward over the bounds.
  const std::uint64_t* bounds = hash ? nullptr : P.bounds.data();
  const unsigned shift = coarse_shift_;
  const std::vector<std::uint32_t>& coarse = coarse_part_;
  auto part_from = [&](std::uint32_t b, vid_t c) {
    while (c >= bounds[b + 1]) ++b;
    return b;
  };
  // The runs of a sorted range row that fall into wanted column parts: f(d, s, t) for the
  // columns [s, t) of the row going to dests[d], at most once per row and block.
  auto range_runs = [&](const vid_t* cols, std::uint64_t deg, auto&& f) {
    if (all) {  // one linear scan (rows are short; columns sorted)
      if (deg == 0) return;
      std::uint32_t b = part_from(coarse[cols[0] >> shift], cols[0]);
      std::uint64_t end = bounds[b + 1], s = 0;
      for (std::uint64_t e = 1; e < deg; ++e)
        if (cols[e] >= end) {
          f(static_cast<std::size_t>(b - first), s, e);
          s = e;
          b = part_from(b, cols[e]);
          end = bounds[b + 1];
        }
      f(static_cast<std::size_t>(b - first), s, deg);
      for (std::size_t d = plain; d < q; ++d) f(d, 0, deg);  // pair's whole rows
    } else {
      for (std::size_t d = 0; d < q; ++d) {
        const std::uint32_t b = col_parts[d];
        const vid_t* s = std::lower_bound(cols, cols + deg, P.col_lo(b));
        const vid_t* t = std::lower_bound(s, cols + deg, P.col_hi(b));
        if (t > s) f(d, static_cast<std::uint64_t>(s - cols), static_cast<std::uint64_t>(t - cols));
      }
    }
  };
  // The columns of a hash row that fall into wanted blocks: f(d, local id, opens) per column,
  // `opens` for the block's first column of row i (last[d]: the block's last row seen).
  auto hash_cols = [&](const vid_t* cols, std::uint64_t deg, std::uint64_t i,
                       std::vector<std::uint64_t>& last, auto&& f) {
    for (std::uint64_t e = 0; e < deg; ++e) {
      const vid_t c = cols[e];
      const std::uint32_t quo = fd.div(c);
      const std::uint32_t b = c - quo * p;
      const std::int32_t d = all ? static_cast<std::int32_t>(b) : dest_of[b];
      if (d < 0) continue;
      const auto ud = static_cast<std::size_t>(d);
      const bool opens = last[ud] != i;
      last[ud] = i;
      f(ud, quo, opens);
    }
  };
  // row(i, cols, deg) for the local rows of segment x in order, with the segment's own
  // scratch and chunk hint (and hash_cols' last rows, passed along)
  auto segment_rows = [&](std::size_t x, auto&& row) {
    std::vector<vid_t> tmp;
    std::vector<std::uint64_t> last(hash ? q : 0, ~std::uint64_t{0});
    std::uint64_t hint = ~std::uint64_t{0};
    for (std::uint64_t i = seg[x]; i < seg[x + 1]; ++i) {
      std::uint64_t deg = 0;
      const vid_t* cols = reader_.row_pinned(r0 + i * step, deg, tmp, &hint);
      row(i, cols, deg, last);
    }
  };
  // pass 1: columns and rows with columns per segment and block
  std::vector<eid_t> base(S * q, 0);
  std::vector<std::uint64_t> rbase(S * q, 0);
  reader_.pool().run(S, [&](std::size_t x) {
    eid_t* cnt = base.data() + x * q;
    std::uint64_t* nz = rbase.data() + x * q;
    segment_rows(x, [&](std::uint64_t i, const vid_t* cols, std::uint64_t deg,
                        std::vector<std::uint64_t>& last) {
      if (hash) {
        hash_cols(cols, deg, i, last, [&](std::size_t d, vid_t, bool opens) {
          ++cnt[d];
          nz[d] += opens;
        });
      } else {
        range_runs(cols, deg, [&](std::size_t d, std::uint64_t s, std::uint64_t t) {
          cnt[d] += t - s;
          ++nz[d];
        });
      }
    });
  });
  // every segment's start per block: an exclusive prefix over the segments
  auto segment_prefix = [&](std::vector<std::uint64_t>& v, std::size_t d) {
    std::uint64_t acc = 0;
    for (std::size_t x = 0; x < S; ++x) {
      const std::uint64_t w = v[x * q + d];
      v[x * q + d] = acc;
      acc += w;
    }
    return acc;
  };
  for (std::size_t d = 0; d < q; ++d) {
    const eid_t acc = segment_prefix(base, d);
    const std::uint64_t racc = segment_prefix(rbase, d);
    BuildDest& D = dests[d];
    D.edges = acc;
    D.nonempty = racc;
    D.packed = packs(R, racc);
    sized(d, acc);
    TS_CHECK(acc <= D.cap, "a block holds more columns than planned");
    if (D.packed) {
      auto* image = reinterpret_cast<unsigned char*>(D.off);
      D.ids = packed_ids_at(image);
      D.poff = packed_offsets_at(image, racc);
      D.poff[racc] = acc;
    } else {
      D.off[0] = 0;
    }
  }
  // Dense blocks without columns (range: G_ab with b < a, the DAG points up) get zero offsets
  // in one fill per segment; the rows write the offsets of the other dense blocks only.
  std::vector<std::size_t> live;
  for (std::size_t d = 0; d < q; ++d)
    if (dests[d].edges && !dests[d].packed) live.push_back(d);
  // pass 2: columns and offsets, every segment into its own ranges
  reader_.pool().run(S, [&](std::size_t x) {
    std::vector<eid_t> cur(base.begin() + static_cast<std::ptrdiff_t>(x * q),
                           base.begin() + static_cast<std::ptrdiff_t>((x + 1) * q));
    std::vector<std::uint64_t> rcur(rbase.begin() + static_cast<std::ptrdiff_t>(x * q),
                                    rbase.begin() + static_cast<std::ptrdiff_t>((x + 1) * q));
    for (std::size_t d = 0; d < q; ++d)
      if (!dests[d].edges && !dests[d].packed)
        std::fill(dests[d].off + seg[x] + 1, dests[d].off + seg[x + 1] + 1, 0);
    // a packed block's row i gets its entry before its first column
    auto open_row = [&](std::size_t d, std::uint64_t i) {
      BuildDest& D = dests[d];
      D.ids[rcur[d]] = static_cast<vid_t>(i);
      D.poff[rcur[d]++] = cur[d];
    };
    segment_rows(x, [&](std::uint64_t i, const vid_t* cols, std::uint64_t deg,
                        std::vector<std::uint64_t>& last) {
      if (hash) {
        hash_cols(cols, deg, i, last, [&](std::size_t d, vid_t quo, bool opens) {
          if (opens && dests[d].packed) open_row(d, i);
          dests[d].cols[cur[d]++] = quo;
        });
      } else {
        range_runs(cols, deg, [&](std::size_t d, std::uint64_t s, std::uint64_t t) {
          if (dests[d].packed) open_row(d, i);
          const vid_t lo = lo_of[d];
          vid_t* out = dests[d].cols + cur[d];
          for (std::uint64_t k = s; k < t; ++k) *out++ = cols[k] - lo;
          cur[d] += t - s;
        });
      }
      for (std::size_t d : live) dests[d].off[i + 1] = cur[d];
    });
  });
}

bool BlockBuilder::build_into(std::uint32_t part, int nout, const std::uint32_t* col_parts,
                              BlockWriter** outs, std::int64_t unit) {
  std::vector<std::uint64_t> needed;
  rows_needed(part, needed);
  if (!reader_.pin(needed, unit)) return false;
  BuildDest d[2];
  for (int o = 0; o < nout; ++o) {
    d[o].off = outs[o]->offsets;
    d[o].cols = outs[o]->cols;
    d[o].cap = outs[o]->capacity;
  }
  build(part, col_parts, static_cast<std::size_t>(nout), d, [](std::size_t, eid_t) {});
  for (int o = 0; o < nout; ++o) {
    outs[o]->rows = P_.rows(part);
    outs[o]->edges = d[o].edges;
    outs[o]->packed = d[o].packed;
    outs[o]->packed_rows = d[o].nonempty;
  }
  return true;
}

void BlockBuilder::walk(std::uint32_t part,
                        const std::function<void(const vid_t*, std::uint64_t)>& fn,
                        std::int64_t unit) {
  const Partition& P = P_;
  std::vector<std::uint64_t> needed;
  rows_needed(part, needed);
  reader_.begin(std::move(needed), unit);
  std::uint64_t deg = 0;
  if (P.scheme == Scheme::Hash) {
    for (std::uint64_t r = part; r < g_.n(); r += P.p) {
      const vid_t* cols = reader_.row(r, deg);
      fn(cols, deg);
    }
  } else {
    for (std::uint64_t r = P.bounds[part]; r < P.bounds[part + 1]; ++r) {
      const vid_t* cols = reader_.row(r, deg);
      fn(cols, deg);
    }
  }
}

}  // namespace tristream::stream
