// unit_queue_test.cpp — the shared queue's hand-out among plain workers (stream/unit_queue.hpp):
// pair's column parts owned by the workers (each moves about its share of the row parts R_j),
// every unit handed out once whatever the workers' speeds; other schemes from the one head.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "plan/build.hpp"
#include "plan/order.hpp"
#include "stream/unit_queue.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/plan.hpp"

namespace tristream::stream_test {
namespace {

// A pair plan of p parts as the planner builds it (plan/build.cpp pair_units: A = G_ij, B = R_i,
// C = R_j), in the order of groups of 3 row parts (plan/order.cpp pair_group_order).
Plan pair_plan(std::uint32_t p) {
  const OrientedGraph g = orient_edge_list(4000, test::random_graph(4000, 60000, 13));
  auto src = memory_source(g, 256);
  CensusOptions co;
  co.fine = 64;
  co.vertex = false;
  co.threads = 2;
  const Census c = take_census(*src, co);
  Plan plan =
      plan_internal::build_plan(Scheme::Pair, p, 0, g.n(), g.m(), g.csr.offsets.data(), c, false);
  plan_internal::pair_group_order(plan, 3);
  return plan;
}

// Workers taking and collecting units at random relative speeds until none is left; returns
// each worker's units in the order taken.
std::vector<std::vector<std::size_t>> hand_out(const Plan& plan, std::size_t workers,
                                               std::uint64_t seed) {
  stream::UnitQueue q(plan, std::vector<bool>(workers, false), {});
  std::vector<std::vector<std::size_t>> got(workers);
  std::vector<bool> done(workers, false);
  std::mt19937_64 rng(seed);
  for (std::size_t left = workers; left > 0;) {
    const std::size_t w = rng() % workers;
    if (done[w]) continue;
    const std::int64_t u = q.try_next(static_cast<int>(w));
    if (u < 0) {
      done[w] = true;
      --left;
      continue;
    }
    got[w].push_back(static_cast<std::size_t>(u));
    q.done(static_cast<int>(w), static_cast<std::size_t>(u));
  }
  return got;
}

class PairColumnOwners : public ::testing::TestWithParam<std::tuple<std::uint32_t, std::size_t>> {};

// Every unit once; each worker's units mostly of its own column parts (j % workers: all but the
// tail's, where a worker without units of its own takes the others'), so that the row parts R_j
// it uploads are about its share: at most one R_j in five needed by two workers in a group.
TEST_P(PairColumnOwners, EachWorkerTakesItsOwnColumnParts) {
  const auto [p, workers] = GetParam();
  const Plan plan = pair_plan(p);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    const auto got = hand_out(plan, workers, seed);
    std::vector<int> times(plan.units.size(), 0);
    std::size_t foreign = 0;
    std::set<std::pair<std::uint32_t, std::uint32_t>> uploads;  // (worker, j) in a group
    std::size_t shared_uploads = 0, all_uploads = 0;
    for (std::size_t w = 0; w < workers; ++w) {
      EXPECT_FALSE(got[w].empty()) << "worker " << w << " took nothing";
      for (std::size_t u : got[w]) {
        ++times.at(u);
        foreign += plan.units[u].j % workers != w ? 1 : 0;
      }
    }
    for (std::size_t u = 0; u < plan.units.size(); ++u) EXPECT_EQ(times[u], 1) << "unit " << u;
    // (the R_j each worker needs in each group of three row parts, and those two workers need)
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::set<std::size_t>> users;
    for (std::size_t w = 0; w < workers; ++w)
      for (std::size_t u : got[w])
        users[{(p - 1 - plan.units[u].i) / 3, plan.units[u].j}].insert(w);
    for (const auto& [key, who] : users) {
      all_uploads += who.size();
      shared_uploads += who.size() > 1 ? 1 : 0;
    }
    EXPECT_LE(foreign * 5, plan.units.size()) << foreign << " units of other workers' parts";
    EXPECT_LE(shared_uploads * 5, users.size()) << shared_uploads << " R_j needed twice";
    EXPECT_LE(all_uploads * 5, users.size() * 6);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, PairColumnOwners,
                         ::testing::Combine(::testing::Values(16u, 24u, 48u),
                                            ::testing::Values(std::size_t{2}, std::size_t{3})));

// Range units (no column owners): the workers take from the one head, so taking in turns they
// get consecutive units.
TEST(UnitQueueHandOut, RangeUnitsGoFromTheOneHead) {
  Plan plan;
  plan.partition.scheme = Scheme::Range;
  plan.partition.p = 4;
  for (std::uint32_t u = 0; u < 10; ++u) {
    WorkUnit w;
    w.i = w.j = w.k = u;  // (no two share a block)
    w.a.row_part = w.b.row_part = w.c.row_part = u;
    w.a.col_part = u;
    w.b.col_part = u + 100;
    w.c.col_part = u + 200;
    w.work = 1;
    plan.units.push_back(w);
  }
  stream::UnitQueue q(plan, {false, false}, {});
  for (std::int64_t u = 0; u < 10; ++u) EXPECT_EQ(q.try_next(static_cast<int>(u % 2)), u);
  EXPECT_EQ(q.try_next(0), -1);
}

}  // namespace
}  // namespace tristream::stream_test
