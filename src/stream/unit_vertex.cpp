// stream/unit_vertex.cpp — a vertex (LSTC) unit's blocks (stream/unit_vertex.hpp).
#include "stream/unit_vertex.hpp"

#include "common/thread_pool.hpp"

namespace tristream::stream {

VertexUnitBuilder::VertexUnitBuilder(const Partition& partition, BlockBuilder& builder)
    : P_(partition),
      builder_(builder),
      reader_(builder.reader()),
      g_(builder.reader().graph()),
      threads_(builder.reader().pool().threads()) {}

void VertexUnitBuilder::build(const WorkUnit& w, bool per_vertex, unsigned char* slot,
                              UnitLayout& L, SlotState& st) {
  const Partition& P = P_;
  const std::uint64_t n = g_.n();
  const std::uint64_t r0 = P.bounds[w.i], r1 = P.bounds[w.i + 1];
  const eid_t* off = g_.offsets();
  ThreadPool& pool = reader_.pool();
  // 1. A = rows of V_i, raw global columns first; X = the set of their columns.
  const std::uint64_t words = (n + 63) / 64;
  bits_.assign(words, 0);
  BlockWriter A;
  A.start(slot, L.blocks[L.a], L.blocks[L.a].edges);
  {
    std::vector<std::uint64_t> needed;
    if (off[r0] < off[r1])
      for (std::uint64_t c = reader_.chunk_of(off[r0]); c <= reader_.chunk_of(off[r1] - 1); ++c)
        needed.push_back(c);
    const std::uint64_t R = r1 - r0;
    const eid_t e0 = off[r0], E = off[r1] - off[r0];
    if (R > 0 && reader_.pin(needed, L.unit)) {
      TS_CHECK(E <= A.capacity, "a block holds more columns than planned");
      const std::vector<std::uint64_t> seg = builder_.segments(w.i, R);
      pool.run(seg.size() - 1, [&](std::size_t x) {
        std::vector<vid_t> tmp;
        for (std::uint64_t i = seg[x]; i < seg[x + 1]; ++i) {
          const std::uint64_t r = r0 + i;
          std::uint64_t deg = 0;
          const vid_t* cols = reader_.row_pinned(r, deg, tmp);
          vid_t* out = A.cols + (off[r] - e0);
          for (std::uint64_t k = 0; k < deg; ++k) {
            const vid_t c = cols[k];
            out[k] = c;
            std::uint64_t* word = &bits_[c >> 6];
            const std::uint64_t bit = std::uint64_t{1} << (c & 63);
            if (!(__atomic_load_n(word, __ATOMIC_RELAXED) & bit))
              __atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
          }
          A.offsets[i + 1] = off[r + 1] - e0;
        }
      });
      A.rows = R;
      A.edges = E;
    } else {
      reader_.begin(std::move(needed), L.unit);
      std::uint64_t deg = 0;
      for (std::uint64_t r = r0; r < r1; ++r) {
        const vid_t* cols = reader_.row(r, deg);
        for (std::uint64_t x = 0; x < deg; ++x) {
          A.push(cols[x]);
          bits_[cols[x] >> 6] |= std::uint64_t{1} << (cols[x] & 63);
        }
        A.end_row();
      }
    }
  }
  rank_.resize(words + 1);
  std::uint64_t acc = 0;
  for (std::uint64_t x = 0; x < words; ++x) {
    rank_[x] = static_cast<std::uint32_t>(acc);
    acc += static_cast<std::uint64_t>(__builtin_popcountll(bits_[x]));
  }
  rank_[words] = static_cast<std::uint32_t>(acc);
  auto rank = [&](vid_t v) -> vid_t {
    const std::uint64_t word = bits_[v >> 6] & ((std::uint64_t{1} << (v & 63)) - 1);
    return static_cast<vid_t>(rank_[v >> 6] +
                              static_cast<std::uint32_t>(__builtin_popcountll(word)));
  };
  // A's columns rebased and the proxy list X (word x's members start at rank_[x]), in pieces
  {
    const eid_t E = A.edges;
    pool.parallel_for(E, 65536, [&](std::uint64_t lo, std::uint64_t hi) {
      for (eid_t e = lo; e < hi; ++e) A.cols[e] = rank(A.cols[e]);
    });
    st.proxies.resize(acc);
    pool.parallel_for(words, 4096, [&](std::uint64_t lo, std::uint64_t hi) {
      for (std::uint64_t wd = lo; wd < hi; ++wd) {
        std::uint32_t at = rank_[wd];
        for (std::uint64_t b = bits_[wd]; b; b &= b - 1)
          st.proxies[at++] =
              static_cast<vid_t>(wd * 64 + static_cast<std::uint64_t>(__builtin_ctzll(b)));
      }
    });
  }
  TS_CHECK(st.proxies.size() == w.c.rows, "the proxy set differs from the census");
  st.row0 = r0;
  // 2. C = proxy rows restricted to X, rebased.
  BlockWriter C;
  C.start(slot, L.blocks[L.c], L.blocks[L.c].edges);
  {
    const std::uint64_t xs = st.proxies.size();
    const std::size_t S = static_cast<std::size_t>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(xs, std::max<std::uint64_t>(64, 8 * threads_))));
    // the chunks of the proxy rows, marked in parallel
    const auto& chunks = g_.chunks();
    std::vector<unsigned char> mark(chunks.size(), 0);
    pool.run(S, [&](std::size_t x) {
      for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
        const vid_t v = st.proxies[i];
        if (off[v] == off[v + 1]) continue;
        for (std::uint64_t c = reader_.chunk_of(off[v]); c <= reader_.chunk_of(off[v + 1] - 1); ++c)
          __atomic_store_n(&mark[c], static_cast<unsigned char>(1), __ATOMIC_RELAXED);
      }
    });
    std::vector<std::uint64_t> needed;
    for (std::uint64_t c = 0; c < chunks.size(); ++c)
      if (mark[c]) needed.push_back(c);
    if (xs > 0 && reader_.pin(needed, L.unit)) {
      std::vector<eid_t> base(S, 0);
      pool.run(S, [&](std::size_t x) {
        std::vector<vid_t> tmp;
        eid_t cnt = 0;
        for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
          std::uint64_t deg = 0;
          const vid_t* cols = reader_.row_pinned(st.proxies[i], deg, tmp);
          for (std::uint64_t k = 0; k < deg; ++k) cnt += bits_[cols[k] >> 6] >> (cols[k] & 63) & 1;
        }
        base[x] = cnt;
      });
      eid_t total = 0;
      for (std::size_t x = 0; x < S; ++x) {
        const eid_t v = base[x];
        base[x] = total;
        total += v;
      }
      TS_CHECK(total <= C.capacity, "a block holds more columns than planned");
      pool.run(S, [&](std::size_t x) {
        std::vector<vid_t> tmp;
        eid_t cur = base[x];
        for (std::uint64_t i = chunk_range(xs, S, x).lo; i < chunk_range(xs, S, x).hi; ++i) {
          std::uint64_t deg = 0;
          const vid_t* cols = reader_.row_pinned(st.proxies[i], deg, tmp);
          for (std::uint64_t k = 0; k < deg; ++k) {
            const vid_t c = cols[k];
            if (bits_[c >> 6] >> (c & 63) & 1) C.cols[cur++] = rank(c);
          }
          C.offsets[i + 1] = cur;
        }
      });
      C.rows = xs;
      C.edges = total;
    } else {
      reader_.begin(std::move(needed), L.unit);
      std::uint64_t deg = 0;
      for (vid_t v : st.proxies) {
        const vid_t* cols = reader_.row(v, deg);
        for (std::uint64_t x = 0; x < deg; ++x) {
          const vid_t c = cols[x];
          if (bits_[c >> 6] >> (c & 63) & 1) C.push(rank(c));
        }
        C.end_row();
      }
    }
  }
  const std::uint64_t xs = st.proxies.size();
  L.blocks[L.a].col_space = xs;
  L.blocks[L.c].rows = xs;
  L.blocks[L.c].col_space = xs;
  L.blocks[L.c].edges = C.edges;  // exact now (the plan had a bound)
  if (per_vertex) {
    L.num_spaces = 2;
    L.space_rows[0] = r1 - r0;
    L.space_rows[1] = xs;
    L.u_space = 0;
    L.v_space = L.w_space = 1;
  }
}

}  // namespace tristream::stream
