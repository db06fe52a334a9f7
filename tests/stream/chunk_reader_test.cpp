// chunk_reader_test.cpp — the chunk reader and the block builder over an in-memory graph source:
// rows read every way equal the graph's, and every block built equals a naive filter of the rows.
#include "stream/chunk_reader.hpp"

#include <gtest/gtest.h>

#include "common/thread_pool.hpp"
#include "plan_helpers.hpp"
#include "stream/block_builder.hpp"
#include "stream/clock.hpp"
#include "stream_util.hpp"
#include "test_util.hpp"

namespace tristream {
namespace {

using stream::BlockBuilder;
using stream::BuildDest;
using stream::ChunkReader;
using stream::Recorder;

OrientedGraph skewed() {
  const auto e = test::skewed_graph(700, 6000, 11);
  return orient_edge_list(test::vertex_count(e), e);
}

std::vector<std::uint64_t> all_chunks(const GraphSource& g) {
  std::vector<std::uint64_t> c(g.chunks().size());
  for (std::uint64_t x = 0; x < c.size(); ++x) c[x] = x;
  return c;
}

// Every row of g read from pinned chunks (row_pinned, in order with a hint) and by the
// sequential walk (begun over all chunks) equals the graph's.
void expect_rows(const OrientedGraph& g, const ChunkReader& pinned, ChunkReader& walk) {
  std::vector<vid_t> tmp;
  std::uint64_t hint = ~std::uint64_t{0};
  for (std::uint64_t r = 0; r < g.n(); ++r) {
    const std::vector<vid_t> want(g.csr.cols.begin() + g.csr.offsets[r],
                                  g.csr.cols.begin() + g.csr.offsets[r + 1]);
    std::uint64_t d1 = 0, d2 = 0;
    const vid_t* a = pinned.row_pinned(r, d1, tmp, &hint);
    ASSERT_EQ(d1, want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), a));
    const vid_t* b = walk.row(r, d2);
    ASSERT_EQ(d2, want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), b));
  }
}

TEST(ChunkReader, EveryWayOfReadingGivesTheGraphsRows) {
  const OrientedGraph g = skewed();
  for (std::uint64_t chunk : {1u, 7u, 100u, 1000000u}) {
    SCOPED_TRACE(chunk);
    const auto src = memory_source(g, chunk);
    PipelineStats stats;
    Recorder rec(stream::now_s(), stats);
    ThreadPool pool(3);
    const std::uint64_t all_bytes = g.m() * sizeof(vid_t);
    ChunkReader pinned(*src, pool, 2, all_bytes, rec);
    ChunkReader walk(*src, pool, 2, 0, rec);  // no cache: windows only
    ASSERT_TRUE(pinned.pin(all_chunks(*src), 0));
    walk.begin(all_chunks(*src), 0);
    expect_rows(g, pinned, walk);
    EXPECT_LE(pinned.peak_bytes(), all_bytes);
    EXPECT_EQ(walk.peak_bytes(), 0u);
    // a range read straight into a buffer
    std::vector<vid_t> out(g.m() / 2);
    pinned.read_range(g.m() / 4, g.m() / 4 + out.size(), out.data(), 0);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), g.csr.cols.begin() + g.m() / 4));
  }
}

TEST(ChunkReader, PinRefusesChunksBeyondTheCache) {
  const OrientedGraph g = skewed();
  const auto src = memory_source(g, 64);
  PipelineStats stats;
  Recorder rec(stream::now_s(), stats);
  ThreadPool pool(2);
  ChunkReader r(*src, pool, 2, 3 * 64 * sizeof(vid_t), rec);
  EXPECT_FALSE(r.pin(all_chunks(*src), 0));
  EXPECT_TRUE(r.pin({0, 1, 2}, 0));
  EXPECT_TRUE(r.pin({3, 4}, 0));  // evicts chunks not needed now
  EXPECT_LE(r.peak_bytes(), 3 * 64 * sizeof(vid_t));
}

// Chunks the source holds decoded (GraphSource::resident_chunk, the in-core image's) are read in
// place: every way of reading gives the graph's rows, no resident chunk is copied out or cached,
// and pin() succeeds without a cache when every chunk needed is resident.
TEST(ChunkReader, ResidentChunksAreReadInPlace) {
  const OrientedGraph g = skewed();
  for (std::uint64_t every : {1u, 2u, 3u}) {
    for (std::uint64_t chunk : {1u, 7u, 100u}) {
      SCOPED_TRACE(testing::Message() << "chunk " << chunk << " every " << every);
      const auto mem = memory_source(g, chunk);
      const test::ResidentSource src(*mem, g.csr.cols, every);
      PipelineStats stats;
      Recorder rec(stream::now_s(), stats);
      ThreadPool pool(3);
      const std::uint64_t all_bytes = g.m() * sizeof(vid_t);
      ChunkReader pinned(src, pool, 2, all_bytes, rec);
      ChunkReader walk(src, pool, 2, 0, rec);
      ASSERT_TRUE(pinned.pin(all_chunks(src), 0));
      walk.begin(all_chunks(src), 0);
      expect_rows(g, pinned, walk);
      std::uint64_t not_resident = 0;
      for (std::uint64_t c = 0; c < src.chunks().size(); ++c)
        if (c % every) not_resident += src.chunks()[c].edges * sizeof(vid_t);
      EXPECT_EQ(pinned.peak_bytes(), not_resident);
      std::vector<vid_t> out(g.m() / 2);
      pinned.read_range(g.m() / 4, g.m() / 4 + out.size(), out.data(), 0);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), g.csr.cols.begin() + g.m() / 4));
      // the preload's batches: resident chunks get no buffer and are not cached
      const auto bufs = pinned.decompress(all_chunks(src), pool, 0);
      for (std::uint64_t c = 0; c < bufs.size(); ++c) EXPECT_EQ(bufs[c] == nullptr, c % every == 0);
      EXPECT_EQ(src.resident_copies(), 0u);
      ChunkReader none(src, pool, 2, 0, rec);
      std::vector<std::uint64_t> resident;
      for (std::uint64_t c = 0; c < src.chunks().size(); c += every) resident.push_back(c);
      EXPECT_TRUE(none.pin(resident, 0));
      EXPECT_EQ(none.pin(all_chunks(src), 0), every == 1);
    }
  }
}

// Builds every block of every row part with build() and with the walk, against naive_block.
void expect_blocks_equal_naive(const OrientedGraph& g, const Partition& P, std::uint64_t chunk,
                               std::uint64_t cache) {
  const auto src = memory_source(g, chunk);
  PipelineStats stats;
  Recorder rec(stream::now_s(), stats);
  ThreadPool pool(3);
  ChunkReader reader(*src, pool, 2, cache, rec);
  BlockBuilder builder(P, reader);
  for (std::uint32_t a = 0; a < P.p; ++a) {
    const std::uint32_t first = P.first_block(a), q = P.p - first;
    std::vector<std::uint64_t> needed;
    builder.rows_needed(a, needed);
    const bool pinned = reader.pin(needed, 0);
    std::vector<std::vector<unsigned char>> off(q);
    std::vector<std::vector<vid_t>> cols(q);
    std::vector<BuildDest> dests(q);
    std::vector<std::uint32_t> parts(q);
    for (std::uint32_t d = 0; d < q; ++d) parts[d] = first + d;
    if (pinned)
      builder.build(a, parts.data(), q, dests.data(), [&](std::size_t d, eid_t edges) {
        off[d].assign(packed_bytes(P.rows(a)) + dense_offsets_bytes(P.rows(a)) + 64, 0);
        cols[d].assign(edges + 1, 0);
        dests[d].off = reinterpret_cast<eid_t*>(off[d].data());
        dests[d].cols = cols[d].data();
        dests[d].cap = edges;
      });
    for (std::uint32_t d = 0; d < q; ++d) {
      SCOPED_TRACE(testing::Message() << "G_" << a << "," << parts[d] << " pinned " << pinned);
      const test::DenseBlock want = test::naive_block(g.csr, P, a, parts[d]);
      if (pinned) {
        ASSERT_EQ(dests[d].edges, want.cols.size());
        EXPECT_EQ(test::dense_offsets(off[d].data(), dests[d].packed, dests[d].nonempty, P.rows(a)),
                  want.offsets);
        EXPECT_TRUE(std::equal(want.cols.begin(), want.cols.end(), cols[d].begin()));
      }
      // the sequential walk with filter_row
      struct Out {
        std::vector<vid_t> cols;
        void push(vid_t c) { cols.push_back(c); }
      } out;
      std::vector<eid_t> offs{0};
      builder.walk(
          a,
          [&](const vid_t* c, std::uint64_t deg) {
            builder.filter_row(c, deg, parts[d], out);
            offs.push_back(out.cols.size());
          },
          0);
      EXPECT_EQ(offs, want.offsets);
      EXPECT_EQ(out.cols, want.cols);
    }
  }
}

TEST(BlockBuilder, RangeBlocksEqualANaiveFilter) {
  const OrientedGraph g = skewed();
  for (std::uint32_t p : {1u, 3u, 8u})
    expect_blocks_equal_naive(g, test::test_partition(Scheme::Range, p, g.n()), 50,
                              g.m() * sizeof(vid_t));
}

TEST(BlockBuilder, HashBlocksEqualANaiveFilter) {
  const OrientedGraph g = skewed();
  for (std::uint32_t p : {2u, 5u})
    expect_blocks_equal_naive(g, test::test_partition(Scheme::Hash, p, g.n()), 50,
                              g.m() * sizeof(vid_t));
}

TEST(BlockBuilder, WalkWithoutACacheEqualsANaiveFilter) {
  const OrientedGraph g = skewed();
  expect_blocks_equal_naive(g, test::test_partition(Scheme::Range, 4, g.n()), 30, 0);
  expect_blocks_equal_naive(g, test::test_partition(Scheme::Hash, 3, g.n()), 30, 0);
}

TEST(BlockBuilder, EmptyGraphBuildsEmptyBlocks) {
  const OrientedGraph g = orient_edge_list(5, {});
  expect_blocks_equal_naive(g, test::test_partition(Scheme::Range, 2, g.n()), 8, 1024);
}

}  // namespace
}  // namespace tristream
