// spill_test.cpp — the out-of-core store's runs (converter/spill.hpp, spill_file.hpp): a run laid
// out over several files reads back as one sequence across the files' edges, and a spill of
// packed keys written into several files (one writer each) holds the blocks' keys sorted, each
// once, for 1 to 4 threads and files of any size; the ids seen are all marked. merge_runs keeps
// the ids of packed runs where their direct table fits (own_ids) and compacts them otherwise,
// with the same keys in order and the same degrees.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "converter/parse.hpp"
#include "converter/spill.hpp"
#include "converter/spill_file.hpp"
#include "converter/write_graph.hpp"
#include "test_util.hpp"

namespace tristream::conv {
namespace {

// The run's records read back through RunReader (its segments, buffers of `buffer` records).
std::vector<std::uint64_t> read_all(const Run& run, std::size_t buffer) {
  RunReader<std::uint64_t> r(run, run.segments, buffer);
  std::vector<std::uint64_t> out;
  for (; r.valid(); r.advance()) out.push_back(r.head());
  return out;
}

TEST(SpillRun, ReadsAcrossTheEdgesOfItsFiles) {
  test::TempDir dir;
  std::vector<std::uint64_t> keys(1000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 7 + 3;
  conv::Run run;
  run.packed = true;
  const std::vector<std::uint64_t> firsts = {0, 1, 250, 251, 999};  // files of 1, 249, 1, 748, 1
  for (std::size_t f = 0; f < firsts.size(); ++f) {
    const std::uint64_t end = f + 1 < firsts.size() ? firsts[f + 1] : keys.size();
    run.files.push_back({firsts[f], std::make_unique<TempFile>(dir.path())});
    run.files.back().file->write_at(0, keys.data() + firsts[f], (end - firsts[f]) * 8);
  }
  run.edges = keys.size();
  run.segments = {Segment{0, keys.size()}};
  for (std::size_t buffer : {16u, 100u, 1000u}) EXPECT_EQ(read_all(run, buffer), keys) << buffer;
  // any stretch, in one read
  std::mt19937_64 rng(5);
  for (int t = 0; t < 200; ++t) {
    const std::uint64_t a = rng() % keys.size(), b = a + rng() % (keys.size() - a + 1);
    std::vector<std::uint64_t> got(b - a);
    run.read(a, b - a, got.data());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), keys.begin() + a)) << a << " " << b;
  }
  for (std::uint64_t i : {0u, 1u, 249u, 250u, 251u, 998u, 999u})
    EXPECT_EQ(run.at(i).b, keys[i] & 0xffffffffu) << i;
}

// Blocks of random packed keys (a < b < 50000, repeats inside and across blocks), enough of them
// for the sorter's buckets (kSmallSort keys or more).
std::vector<std::unique_ptr<Block>> random_blocks(std::uint64_t seed,
                                                  std::vector<std::uint64_t>* all) {
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<Block>> blocks;
  for (int k = 0; k < 6; ++k) {
    auto b = std::make_unique<Block>();
    const std::size_t n = 20000 + rng() % 30000;
    b->keys.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t x = rng() % 50000, y = rng() % 50000;
      if (x == y) y = (y + 1) % 50000;
      const std::uint64_t key = std::min(x, y) << 32 | std::max(x, y);
      b->keys.push_back(key);
      all->push_back(key);
    }
    b->max_id = 49999;
    blocks.push_back(std::move(b));
  }
  std::sort(all->begin(), all->end());
  all->erase(std::unique(all->begin(), all->end()), all->end());
  return blocks;
}

TEST(SpillStore, PackedSpillsInSeveralFilesHoldEveryKeyOnce) {
  for (unsigned threads : {1u, 2u, 4u})
    for (std::uint64_t file_bytes : {std::uint64_t{1}, std::uint64_t{4096}, kSpillFileBytes}) {
      SCOPED_TRACE(testing::Message()
                   << threads << " threads, files of " << file_bytes << " bytes");
      test::TempDir dir;
      SpillStore store(threads, std::uint64_t{64} << 20, dir.path(), file_bytes);
      std::vector<std::uint64_t> all;
      auto blocks = random_blocks(threads * 31 + file_bytes, &all);
      store.spill(blocks, 49999, true);
      ASSERT_EQ(store.runs().size(), 1u);
      const conv::Run& run = *store.runs()[0];
      const std::size_t want_files = std::max<std::size_t>(
          1, std::min<std::size_t>({threads, kSpillFiles, all.size() * 8 / file_bytes}));
      EXPECT_EQ(run.files.size(), want_files);
      EXPECT_EQ(run.edges, all.size());
      EXPECT_EQ(read_all(run, 64), all);
      IdMap ids;
      store.make_idmap(ids);
      std::vector<std::uint64_t> seen;
      for (std::uint64_t k : all) {
        seen.push_back(k >> 32);
        seen.push_back(k & 0xffffffffu);
      }
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      EXPECT_EQ(ids.n(), seen.size());
    }
}

// Two spills of packed keys with even ids only (half the id space absent), merged: under a limit
// whose eighth holds the ids' direct table the keys keep the input's ids and the degrees span
// the id space (0 for the absent ids); under a smaller one the ids are compacted (rank among the
// ids present) and the degrees are per vertex. Either way every unique key comes once, in order,
// and each id's degree is its number of distinct neighbours.
TEST(MergeRuns, PackedRunsKeepTheirIdsWhereTheDirectTableFits) {
  for (std::uint64_t limit : {std::uint64_t{64} << 20, std::uint64_t{256} << 10}) {
    SCOPED_TRACE(testing::Message() << "limit " << limit);
    test::TempDir dir;
    SpillStore store(2, limit, dir.path());
    std::mt19937_64 rng(limit);
    std::vector<std::uint64_t> all;
    for (int spill = 0; spill < 2; ++spill) {
      std::vector<std::unique_ptr<Block>> blocks;
      for (int k = 0; k < 3; ++k) {
        auto b = std::make_unique<Block>();
        b->keys.reserve(30000);
        for (int i = 0; i < 30000; ++i) {
          std::uint64_t x = 2 * (rng() % 20000), y = 2 * (rng() % 20000);
          if (x == y) y = (y + 2) % 40000;
          const std::uint64_t key = std::min(x, y) << 32 | std::max(x, y);
          b->keys.push_back(key);
          all.push_back(key);
        }
        b->max_id = 39998;
        blocks.push_back(std::move(b));
      }
      store.spill(blocks, 39998, true, /*keep=*/spill == 1);
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<std::uint32_t> degree(40000, 0);
    for (std::uint64_t k : all) {
      ++degree[k >> 32];
      ++degree[k & 0xffffffffu];
    }
    std::vector<std::uint64_t> compact(40000, 0);  // (rank among the ids present)
    std::uint64_t n = 0;
    for (std::uint64_t x = 0; x < 40000; ++x)
      if (degree[x]) compact[x] = n++;
    IdMap idmap;
    store.make_idmap(idmap);
    ASSERT_EQ(idmap.n(), n);
    CloseBehind close_behind;
    MergedEdges e;
    merge_runs(store.runs(), idmap, 2, limit, dir.path(), close_behind, e);
    const bool own = limit == (std::uint64_t{64} << 20);
    EXPECT_EQ(e.own_ids, own);
    std::vector<std::uint64_t> got;
    e.source.for_each_block(4096, 1, [&](const std::uint64_t* k, std::size_t cnt) {
      got.insert(got.end(), k, k + cnt);
    });
    std::vector<std::uint64_t> want = all;
    if (!own)
      for (std::uint64_t& k : want) k = compact[k >> 32] << 32 | compact[k & 0xffffffffu];
    EXPECT_TRUE(got == want);
    ASSERT_EQ(e.degree.size(), own ? idmap.table_bytes() / 4 : n);
    std::size_t wrong = 0;
    for (std::uint64_t x = 0; x < 40000; ++x)
      if (own ? e.degree[x] != degree[x] : degree[x] && e.degree[compact[x]] != degree[x]) ++wrong;
    if (own)
      for (std::uint64_t x = 40000; x < e.degree.size(); ++x) wrong += e.degree[x] != 0;
    EXPECT_EQ(wrong, 0u);
  }
}

}  // namespace
}  // namespace tristream::conv
