// row_claims_test.cpp — the in-core unit's rows claimed by several GPUs (stream/row_claims.hpp,
// claim_rows_in_core in stream/worker_plan.hpp): every row claimed once in contiguous runs from
// the top down whatever the claimants' timing (seeded, over sizes and claimants, against a plain
// tally); a run cut short by rows not yet arrived waits, one cut by the cap is taken, a row above
// the cap goes alone, the last runs shrink; and counts over several fake GPUs that each stream
// the in-core image and count the rows they claim: exact totals and per-vertex counts, no count
// before its bytes arrived, nothing registered, each row counted once, and the rule's refusals
// (claims off, one device, a CPU worker, a short count) leaving the plan as before.
#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "fake_backend.hpp"
#include "stream/in_core_image.hpp"
#include "stream/row_claims.hpp"
#include "stream/workers.hpp"
#include "stream_util.hpp"
#include "workers_util.hpp"

namespace tristream::stream_test {
namespace {

using stream::RowClaims;

// Row offsets of `rows` rows of 0-40 edges (a few rows of 200-1000), from base `base`.
std::vector<eid_t> random_offsets(std::uint64_t rows, std::uint64_t seed, eid_t base = 0) {
  std::mt19937_64 rng(seed);
  std::vector<eid_t> off(rows + 1, base);
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::uint64_t d = rng() % 97 == 0 ? 200 + rng() % 800 : rng() % 41;
    off[r + 1] = off[r] + d;
  }
  return off;
}

// Claimants on threads of their own, each claiming with the rows it "has" moving down from the
// top at a pace of its own (last once they reach 0), until nothing is left: each row is claimed
// by exactly one, every run lies at or above the claimant's rows, the runs of one claimant go
// down, and nothing is claimed after every row is.
TEST(RowClaims, EveryRowIsClaimedOnceWhateverTheClaimantsTiming) {
  for (const std::uint64_t rows : {1u, 2u, 17u, 1000u, 20000u}) {
    for (const std::uint32_t claimants : {1u, 2u, 3u, 4u}) {
      for (const std::uint64_t seed : {1u, 2u, 3u}) {
        SCOPED_TRACE(testing::Message()
                     << rows << " rows, " << claimants << " claimants, seed " << seed);
        const std::vector<eid_t> off = random_offsets(rows, seed, seed * 1000);
        RowClaims claims(off.data(), rows, off[rows] - off[0], claimants);
        std::vector<std::atomic<int>> owner(rows);
        for (auto& o : owner) o = -1;
        std::atomic<std::uint64_t> bad{0};
        auto claimant = [&](int c) {
          std::mt19937_64 rng(seed * 31 + static_cast<std::uint64_t>(c));
          std::uint64_t avail = rows, last_r0 = rows;
          for (;;) {
            avail -= std::min<std::uint64_t>(avail, rng() % (rows / 8 + 2));
            std::uint64_t r0 = 0, r1 = 0;
            if (!claims.claim(avail, avail == 0, &r0, &r1)) {
              if (avail == 0) return;  // (last: a refusal means every row is claimed)
              continue;
            }
            if (!(r0 < r1 && r1 <= last_r0 && r0 >= avail)) ++bad;
            last_r0 = r0;
            for (std::uint64_t r = r0; r < r1; ++r) {
              int none = -1;
              if (!owner[r].compare_exchange_strong(none, c)) ++bad;
            }
            if (rng() % 3 == 0) std::this_thread::yield();
          }
        };
        std::vector<std::thread> ts;
        for (std::uint32_t c = 0; c < claimants; ++c) ts.emplace_back(claimant, c);
        for (auto& t : ts) t.join();
        EXPECT_EQ(bad.load(), 0u);
        for (std::uint64_t r = 0; r < rows; ++r) ASSERT_GE(owner[r].load(), 0) << "row " << r;
        EXPECT_TRUE(claims.exhausted());
        std::uint64_t r0 = 0, r1 = 0;
        EXPECT_FALSE(claims.claim(0, true, &r0, &r1));
      }
    }
  }
}

// Ten rows of ten edges, two claimants, at least 20 edges a run while rows still arrive: row 9
// alone (10 edges) waits; with rows 6-9 arrived the cap (max(20, unclaimed / 4 = 25) edges) cuts
// the run to rows 8-9, which is taken; the last runs are taken whatever their size.
TEST(RowClaims, ARunCutByRowsNotArrivedWaitsOneCutByTheCapIsTaken) {
  std::vector<eid_t> off(11);
  for (int r = 0; r <= 10; ++r) off[r] = 10 * r;
  RowClaims claims(off.data(), 10, 100, 2, 20);
  std::uint64_t r0 = 0, r1 = 0;
  auto run = [&](std::uint64_t lo, std::uint64_t hi) {
    EXPECT_EQ(r0, lo);
    EXPECT_EQ(r1, hi);
  };
  EXPECT_FALSE(claims.claim(10, false, &r0, &r1));  // nothing arrived
  EXPECT_FALSE(claims.claim(9, false, &r0, &r1));   // 10 edges < 20, cut by the arrival
  ASSERT_TRUE(claims.claim(6, false, &r0, &r1));    // cut by the cap: 25 edges -> 2 rows
  run(8, 10);
  ASSERT_TRUE(claims.claim(0, false, &r0, &r1));  // cap max(20, 80 / 4) = 20: 2 rows
  run(6, 8);
  EXPECT_FALSE(claims.claim(5, false, &r0, &r1));  // one row arrived: 10 < 20
  ASSERT_TRUE(claims.claim(5, true, &r0, &r1));    // the last runs are taken whatever their size
  run(5, 6);
  EXPECT_FALSE(claims.exhausted());
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));
  run(3, 5);
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));
  run(1, 3);
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));
  run(0, 1);
  EXPECT_TRUE(claims.exhausted());
  EXPECT_FALSE(claims.claim(0, true, &r0, &r1));
}

// A row of more edges than the cap is claimed alone; empty rows go with their neighbours.
TEST(RowClaims, ARowAboveTheCapIsClaimedAlone) {
  const std::vector<eid_t> off = {0, 0, 1000, 1000, 1001, 1001};  // rows 1 (1000) and 3 (1)
  RowClaims claims(off.data(), 5, 1001, 2, 10);
  std::uint64_t r0 = 0, r1 = 0;
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));  // cap 250: rows 2-4 (1 edge)
  EXPECT_EQ(r0, 2u);
  EXPECT_EQ(r1, 5u);
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));  // row 1 alone
  EXPECT_EQ(r0, 1u);
  EXPECT_EQ(r1, 2u);
  ASSERT_TRUE(claims.claim(0, true, &r0, &r1));
  EXPECT_EQ(r0, 0u);
  EXPECT_EQ(r1, 1u);
  EXPECT_TRUE(claims.exhausted());
}

// Guided self-scheduling: with every row arrived the runs shrink (by edges) to the minimum.
TEST(RowClaims, TheLastRunsShrinkToTheMinimum) {
  std::vector<eid_t> off(100001);
  for (std::size_t r = 0; r < off.size(); ++r) off[r] = r;  // one edge a row
  RowClaims claims(off.data(), 100000, 100000, 2);
  EXPECT_EQ(claims.min_edges(), 100000u / (stream::kRowCounts * 2));
  std::vector<std::uint64_t> runs;
  std::uint64_t r0 = 0, r1 = 0;
  while (claims.claim(0, true, &r0, &r1)) runs.push_back(r1 - r0);
  ASSERT_GE(runs.size(), 3u);
  EXPECT_EQ(runs.front(), 25000u);  // unclaimed / (2 * claimants)
  for (std::size_t k = 1; k < runs.size(); ++k) EXPECT_LE(runs[k], runs[k - 1]);
  EXPECT_LE(runs.back(), claims.min_edges());
}

// Over processes: the runs are cut alike in every process from the same offsets (at most
// min_edges edges each, one row at least), and claimants in two or three "processes" (claims
// objects sharing one counter, two threads each, at random paces) claim every row exactly once;
// a run fetched before its rows arrived is held until a claimant of its process has them.
TEST(RowClaims, ProcessesSharingACounterClaimEveryRowOnce) {
  for (const std::uint64_t rows : {1u, 5u, 3000u}) {
    for (const int processes : {2, 3}) {
      SCOPED_TRACE(testing::Message() << rows << " rows, " << processes << " processes");
      const std::vector<eid_t> off = random_offsets(rows, rows + 7, 11);
      std::atomic<std::uint64_t> counter{0};
      std::vector<std::unique_ptr<RowClaims>> claims;
      for (int p = 0; p < processes; ++p)
        claims.push_back(std::make_unique<RowClaims>(off.data(), rows, off[rows] - off[0],
                                                     2 * processes, 0,
                                                     [&counter] { return counter.fetch_add(1); }));
      const std::vector<std::uint64_t>& runs = claims[0]->runs();
      ASSERT_EQ(runs.front(), rows);
      ASSERT_EQ(runs.back(), 0u);
      for (std::size_t k = 0; k + 1 < runs.size(); ++k) {
        EXPECT_LT(runs[k + 1], runs[k]);
        EXPECT_TRUE(off[runs[k]] - off[runs[k + 1]] <= claims[0]->min_edges() ||
                    runs[k + 1] + 1 == runs[k]);
      }
      for (const auto& c : claims) EXPECT_EQ(c->runs(), runs);
      std::vector<std::atomic<int>> owner(rows);
      for (auto& o : owner) o = -1;
      std::atomic<std::uint64_t> bad{0};
      auto claimant = [&](int p, int c) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(p * 7 + c));
        std::uint64_t avail = rows;
        for (;;) {
          avail -= std::min<std::uint64_t>(avail, rng() % (rows / 8 + 2));
          std::uint64_t r0 = 0, r1 = 0;
          if (!claims[p]->claim(avail, avail == 0, &r0, &r1)) {
            if (avail == 0) return;
            continue;
          }
          if (!(r0 < r1 && r0 >= avail)) ++bad;
          for (std::uint64_t r = r0; r < r1; ++r) {
            int none = -1;
            if (!owner[r].compare_exchange_strong(none, p)) ++bad;
          }
        }
      };
      std::vector<std::thread> ts;
      for (int p = 0; p < processes; ++p)
        for (int c = 0; c < 2; ++c) ts.emplace_back(claimant, p, c);
      for (auto& t : ts) t.join();
      EXPECT_EQ(bad.load(), 0u);
      for (std::uint64_t r = 0; r < rows; ++r) ASSERT_GE(owner[r].load(), 0) << "row " << r;
      for (const auto& c : claims) EXPECT_TRUE(c->exhausted());
    }
  }
}

// A fake GPU on `device` that counts row pieces, of rows it claims (a unit may send part).
Worker claiming_gpu(int device) {
  auto fake = std::make_unique<FakeBackend>();
  fake->row_pieces = true;
  fake->claimed_rows = true;
  Worker w{std::move(fake), false};
  w.device = device;
  return w;
}

// An in-core count's options with the image of `src` streamed in row pieces at any size and
// the split's threshold at split_s, per-vertex counts on.
PipelineOptions claims_options(const GraphSource& src, double split_s) {
  PipelineOptions o = popts(Scheme::Auto, 0, true);
  o.in_core_image = std::make_shared<stream::InCoreImage>(src, 2);
  o.row_pieces_from = 0;
  o.split_in_core_s = split_s;
  return o;
}

// Fake GPUs (devices of their own) that each stream the in-core image and count the rows they
// claim: exact totals and per-vertex counts for 2-4 GPUs, busy or not, every row counted once
// over all of them, no count before its bytes, nothing registered, a slice per GPU.
TEST(RowClaims, GpusThatClaimRowsCountExactly) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 40000, 23));
  for (const std::uint64_t chunk : {13u, 4000u}) {
    auto src = memory_source(g, chunk);
    for (const int gpus : {2, 3, 4}) {
      for (const bool busy : {false, true}) {
        SCOPED_TRACE(testing::Message() << gpus << " GPUs, chunks of " << chunk
                                        << (busy ? ", busy every other time" : ""));
        std::vector<Worker> ws;  // (before the image, which unregisters itself from them)
        std::vector<FakeBackend*> fakes;
        std::atomic<std::uint64_t> asked{0};
        for (int d = 0; d < gpus; ++d) {
          ws.push_back(claiming_gpu(d));
          fakes.push_back(static_cast<FakeBackend*>(ws.back().backend.get()));
          if (busy) fakes.back()->rows_busy_answer = [&asked] { return ++asked % 2 == 0; };
        }
        const PipelineOptions o = claims_options(*src, 0.0);
        const CountReport r = count_with_workers(*src, o, ws);
        EXPECT_EQ(r.triangles, oracle);
        EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
        EXPECT_NE(r.plan.reason.find("count the rows they claim"), std::string::npos)
            << r.plan.reason;
        EXPECT_EQ(r.plan.partition.p, 1u);
        EXPECT_EQ(r.plan.units.size(), static_cast<std::size_t>(gpus));
        std::uint64_t rows = 0;
        for (const FakeBackend* f : fakes) {
          rows += f->counted_rows;
          EXPECT_EQ(f->premature_rows, 0u);
          EXPECT_EQ(f->registered.load(), 0u);
          EXPECT_EQ(f->sliced_counts, 0u);  // (the claims, not the slice, say which rows)
        }
        EXPECT_EQ(rows, g.n());
      }
    }
  }
}

// Where the rule says no, the GPUs count as before (the in-core split of a long count here, or
// one GPU alone): claims turned off, workers on one device (unless asked for: 2), a CPU worker
// among them, a count shorter than the split's threshold. Exact either way.
TEST(RowClaims, GpusClaimRowsOnlyWhereTheRuleSaysSo) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 29));
  auto src = memory_source(g, 64);
  struct Case {
    std::vector<int> devices;  // -1: a CPU worker
    int claims;
    double split_s;
    bool claimed;
  };
  const Case cases[] = {{{0, 1}, 1, 0.0, true}, {{0, 1}, 0, 0.0, false},  {{0, 0}, 1, 0.0, false},
                        {{0, 0}, 2, 0.0, true}, {{0, -1}, 1, 0.0, false}, {{0, 1}, 1, 1e9, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.devices.size() << " workers, claims " << c.claims
                                    << ", split at " << c.split_s << " s");
    std::vector<Worker> ws;
    for (int d : c.devices) {
      if (d < 0) {
        ws.push_back({cpu_backend(), false});
        continue;
      }
      ws.push_back(claiming_gpu(d));
    }
    PipelineOptions o = claims_options(*src, c.split_s);
    o.in_core_row_claims = c.claims;
    const CountReport r = count_with_workers(*src, o, ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    EXPECT_EQ(r.plan.reason.find("count the rows they claim") != std::string::npos, c.claimed)
        << r.plan.reason;
  }
}

}  // namespace
}  // namespace tristream::stream_test
