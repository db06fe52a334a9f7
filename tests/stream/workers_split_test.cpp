// workers_split_test.cpp — an in-core count over several workers (stream/workers.hpp,
// stream/worker_plan.hpp): the one unit cut into a slice per worker, workers on one device
// sharing a slice, several GPUs (in one process, or one per MPI rank) splitting a long in-core
// count into the units of a plan at 1/k of the device bytes, and a split plan made ahead taken
// where it serves the split.
#include "workers_util.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/thread_priority.hpp"
#include "fake_backend.hpp"
#include "pipeline_util.hpp"
#include "plan/plan_wire.hpp"
#include "stream/clock.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_queue.hpp"
#include "stream/worker_plan.hpp"
#include "stream/workers.hpp"

namespace tristream::stream_test {
namespace {

// In core (p = 1) the one unit is cut into a slice per worker: every worker counts one slice
// (it uploads the whole graph and counts the triangles of its middle vertices), and together
// they count exactly. (Workers that take 100 ms per unit: each takes its first slice before
// any has finished one.)
TEST(Workers, InCoreTheWorkersShareTheUnitBySlices) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 5));
  auto src = memory_source(g, 64);
  for (int workers : {2, 3, 4}) {
    SCOPED_TRACE(workers);
    std::vector<Worker> ws;
    for (int i = 0; i < workers; ++i)
      ws.push_back({std::make_unique<SlowBackend>(cpu_backend(), 100), false});
    const CountReport r = count_with_workers(*src, popts(Scheme::Range, 1, true), ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    ASSERT_EQ(r.plan.units.size(), static_cast<std::size_t>(workers));
    EXPECT_EQ(r.plan.slots, 1);  // one slot per worker, as in core
    for (std::size_t u = 0; u < r.plan.units.size(); ++u) {
      EXPECT_EQ(r.plan.units[u].slice, u);
      EXPECT_EQ(r.plan.units[u].slices, static_cast<std::uint32_t>(workers));
    }
    ASSERT_EQ(r.stats.workers.size(), static_cast<std::size_t>(workers));
    for (const WorkerStats& w : r.stats.workers) EXPECT_EQ(w.units, 1u);
  }
}

// Workers on one device (`--devices 0,0`) share a slice: a second slice would upload the whole
// graph to the same chip again. The GPUs of one process share one too, unless
// in_core_gpu_slices asks for a slice per device: two workers on device 0 and one on device 1
// then take two slices. Either way counted exactly, each slice taken by one worker.
TEST(Workers, InCoreWorkersOnOneDeviceShareASlice) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 7));
  auto src = memory_source(g, 64);
  for (bool per_device : {false, true})
    for (const std::vector<int>& devices :
         {std::vector<int>{0, 0}, std::vector<int>{0, 0, 1}, std::vector<int>{0, 1, 2},
          std::vector<int>{0, -1, -1}}) {
      std::vector<Worker> ws;
      for (int d : devices) {
        Worker w{std::make_unique<SlowBackend>(cpu_backend(), 100), false};
        w.device = d;
        ws.push_back(std::move(w));
      }
      std::size_t slices = 0, gpu_slices = 0;
      std::vector<int> seen;
      for (int d : devices)
        if (d < 0) {
          ++slices;
        } else if (std::find(seen.begin(), seen.end(), d) == seen.end()) {
          ++gpu_slices;
          seen.push_back(d);
        }
      slices += per_device ? gpu_slices : std::min<std::size_t>(gpu_slices, 1);
      SCOPED_TRACE(testing::Message() << devices.size() << " workers, " << slices << " slices"
                                      << (per_device ? ", a slice per device" : ""));
      PipelineOptions o = popts(Scheme::Range, 1, true);
      o.in_core_gpu_slices = per_device;
      const CountReport r = count_with_workers(*src, o, ws);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      ASSERT_EQ(r.plan.units.size(), slices);
      std::uint64_t units = 0;
      for (const WorkerStats& w : r.stats.workers) {
        EXPECT_LE(w.units, 1u);
        units += w.units;
      }
      EXPECT_EQ(units, slices);
    }
}

// Several GPUs of one process and a long in-core count (PipelineOptions::split_in_core_s, 0
// here: any in-core count is long): planned again at 1/GPUs of its device bytes, so that the
// GPUs share its units. A negative threshold, a threshold above the estimate, forced parts or one
// device (`--devices 0,0`) keep the in-core plan. Exact either way.
TEST(Workers, SeveralGpusSplitALongInCoreCount) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  struct Case {
    std::vector<int> devices;
    double split_s;
    std::uint32_t parts;
    bool splits;
  };
  const Case cases[] = {{{0, 1}, 0.0, 0, true},   {{0, 1, 2}, 0.0, 0, true},
                        {{0, 1}, -1.0, 0, false}, {{0, 1}, 1e9, 0, false},
                        {{0, 1}, 0.0, 1, false},  {{0, 0}, 0.0, 0, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.devices.size() << " workers, split at " << c.split_s
                                    << " s, parts " << c.parts);
    std::vector<Worker> ws;
    for (int d : c.devices) {
      Worker w{cpu_backend(), false};
      w.device = d;
      ws.push_back(std::move(w));
    }
    PipelineOptions o = popts(Scheme::Auto, c.parts, true);
    o.split_in_core_s = c.split_s;
    const CountReport r = count_with_workers(*src, o, ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    const bool says = r.plan.reason.find("GPUs share its units") != std::string::npos;
    if (c.splits) {
      EXPECT_GT(r.plan.partition.p, 1u);
      EXPECT_GE(r.plan.units.size(), c.devices.size());
      EXPECT_TRUE(says) << r.plan.reason;
    } else {
      EXPECT_EQ(r.plan.partition.p, 1u);
      EXPECT_FALSE(says) << r.plan.reason;
    }
    EXPECT_EQ(r.stats.units, r.plan.units.size());
  }
}

// The split's plan made while the devices start (PipelineOptions::ready_split_plan, count_file's)
// is taken when it was made with the split's options, and ignored when made for another count
// (here: other threads) or when the plan does not split; exact either way.
TEST(Workers, ASplitPlanMadeAheadIsTakenWhenItServesTheSplit) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  auto two_gpus = [] {
    std::vector<Worker> ws;
    for (int d : {0, 1}) {
      Worker w{cpu_backend(), false};
      w.device = d;
      ws.push_back(std::move(w));
    }
    return ws;
  };
  for (const char* made_for : {"the split", "another count", "a count that does not split"}) {
    SCOPED_TRACE(made_for);
    const std::string which = made_for;
    PipelineOptions o = popts(Scheme::Auto, 0, true);
    o.split_in_core_s = 0.0;
    o.host_memory = std::uint64_t{4} << 30;  // (the default follows the machine's free memory)
    // (the split's options as count_with_workers finds them)
    auto ws = two_gpus();
    PipelineOptions with = o;
    with.budgets = stream::worker_budgets(o, ws, nullptr);
    const PlanOptions po = plan_options(with, *with.budgets, stream::plan_backend(ws));
    const Plan in_core = plan_graph(*src, po);
    PlanOptions shared;
    ASSERT_TRUE(stream::split_in_core_options(o, po, 2, in_core, &shared));
    PlanOptions ahead_with = shared;
    if (which == "another count") ahead_with.threads += 1;
    o.ready_split_plan = made_ahead(*src, ahead_with, 0.25);
    const Plan& ready = o.ready_split_plan.get().plan;
    if (which == "a count that does not split") o.split_in_core_s = -1.0;
    const CountReport r = count_with_workers(*src, o, ws);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    EXPECT_EQ(r.stats.planned_ahead_s, which == "the split" ? 0.25 : 0.0);
    if (which == "a count that does not split") {
      EXPECT_EQ(r.plan.partition.p, 1u);
    } else {
      EXPECT_EQ(r.plan.partition.p, ready.partition.p);
      EXPECT_EQ(r.plan.units.size(), ready.units.size());
    }
  }
}

// The split's plan is made at 1/4 of the in-core device bytes for two or three GPUs (at 1/2 a
// few large units left one of two GPUs most of the kernel time) and at 1/GPUs for more.
TEST(Workers, AnInCoreSplitIsPlannedInAtLeastFourShares) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  PipelineOptions o = popts(Scheme::Auto, 0, true);
  o.split_in_core_s = 0.0;
  o.host_memory = std::uint64_t{4} << 30;
  PlanOptions po;
  po.host_budget = o.host_memory;
  const Plan in_core = plan_graph(*src, po);
  ASSERT_EQ(in_core.partition.p, 1u);
  for (std::size_t gpus : {2u, 3u, 4u, 6u}) {
    SCOPED_TRACE(gpus);
    PlanOptions shared;
    ASSERT_TRUE(stream::split_in_core_options(o, po, gpus, in_core, &shared));
    EXPECT_EQ(shared.device_budget, in_core.device_bytes / std::max<std::size_t>(gpus, 4));
  }
  PlanOptions shared;
  EXPECT_FALSE(stream::split_in_core_options(o, po, 1, in_core, &shared));  // (one GPU)
}

// Ranks as one process's calls, one after another: rank 0 plans and keeps what it broadcasts,
// rank 1 receives it; rank 1's sums are recorded (rank 0's report then holds its own share only).
// Each rank on a machine of its own (local_size 1), so each has a GPU of its own.
class SequentialRanks final : public Communicator {
 public:
  struct Shared {
    std::vector<std::string> broadcasts;
    std::vector<std::vector<std::uint64_t>> sums;  // rank 1's
    bool dynamic = false;  // fetch_next hands out batches (rank 0, first, takes them all)
    std::uint64_t fetched = 0;
  };
  SequentialRanks(int rank, Shared* shared) : rank_(rank), shared_(shared) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void broadcast(std::string& bytes) override {
    if (rank_ == 0) {
      shared_->broadcasts.push_back(bytes);
    } else {
      bytes = shared_->broadcasts.at(next_++);
    }
  }
  void sum_to_root(std::uint64_t* data, std::size_t n) override {
    if (rank_ == 1) shared_->sums.emplace_back(data, data + n);
  }
  double max_all(double value) override { return value; }
  std::uint64_t fetch_next() override {
    if (!shared_->dynamic) throw std::logic_error("the static split fetches nothing");
    return shared_->fetched++;
  }
  [[noreturn]] void abort(const std::string& message, int) override {
    throw std::runtime_error(message);
  }

 private:
  int rank_;
  Shared* shared_;
  std::size_t next_ = 0;
};

// MPI ranks with a GPU each and a long in-core count (split_in_core_s 0): rank 0 plans it again
// at 1/2 of its device bytes before the broadcast, so that the ranks share its units (statically)
// instead of each counting a slice of the whole graph; the two ranks' counts add up to the graph's,
// totals and per vertex. Without the split (a negative threshold) the one unit is cut into a
// slice per rank, as before.
TEST(Workers, RanksWithAGpuEachSplitALongInCoreCount) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 9));
  auto src = memory_source(g, 64);
  for (const bool split : {true, false}) {
    SCOPED_TRACE(split ? "split" : "slices");
    SequentialRanks::Shared shared;
    std::vector<CountReport> reps;
    for (int r : {0, 1}) {
      SequentialRanks comm(r, &shared);
      std::vector<Worker> ws;
      Worker w{cpu_backend(), false};
      w.device = 0;
      ws.push_back(std::move(w));
      PipelineOptions o = popts(Scheme::Auto, 0, true);
      o.split_in_core_s = split ? 0.0 : -1.0;
      o.rank_split = "static";
      reps.push_back(count_with_workers(*src, o, ws, &comm));
    }
    ASSERT_EQ(shared.sums.size(), 2u);  // (rank 1's head, then its per-vertex counts)
    EXPECT_EQ(reps[0].triangles + shared.sums[0][0], oracle);
    ASSERT_EQ(shared.sums[1].size(), reps[0].per_vertex.size());
    std::vector<count_t> pv = reps[0].per_vertex;
    for (std::size_t v = 0; v < pv.size(); ++v) pv[v] += shared.sums[1][v];
    EXPECT_EQ(per_vertex_mismatches(pv, new_of_old, oracle_pv), 0u);
    for (const CountReport& rep : reps) {
      const bool says = rep.plan.reason.find("GPUs share its units") != std::string::npos;
      EXPECT_EQ(says, split) << rep.plan.reason;
      if (split) {
        EXPECT_GT(rep.plan.partition.p, 1u);
      } else {
        EXPECT_EQ(rep.plan.partition.p, 1u);
        EXPECT_EQ(rep.plan.units.size(), 2u);  // (a slice per rank)
      }
    }
    EXPECT_GT(reps[0].stats.units, 0u);
    EXPECT_GT(shared.sums[0][1], 0u);  // (each rank counted units of its own)
  }
}

// MPI ranks with a GPU each (fake GPUs, each rank its in-core image streamed in row pieces) and
// a long in-core count: the ranks agree to claim the unit's rows, rank 0 keeps the in-core plan,
// every rank cuts it into a slice per rank (statically: the shared counter hands out the rows'
// runs), and the ranks' counts add up to the graph's, totals and per vertex, every row counted
// once over both. (The ranks run one after the other here: rank 0 claims every run, rank 1
// counts none.) With the claims turned off the split of the test above applies.
TEST(Workers, RanksWithAGpuEachClaimTheInCoreRows) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 17));
  auto src = memory_source(g, 97);
  for (const int claims : {1, 0}) {
    SCOPED_TRACE(claims ? "claims" : "split");
    SequentialRanks::Shared shared;
    shared.dynamic = true;  // (fetch_next allowed: the claims' counter)
    std::vector<CountReport> reps;
    std::vector<std::uint64_t> rows;
    for (int r : {0, 1}) {
      SequentialRanks comm(r, &shared);
      std::vector<Worker> ws;  // (before the image, which unregisters itself from its backend)
      auto fake = std::make_unique<FakeBackend>();
      FakeBackend& dd = *fake;
      dd.row_pieces = true;
      dd.claimed_rows = true;
      Worker w{std::move(fake), false};
      w.device = 0;
      ws.push_back(std::move(w));
      PipelineOptions o = popts(Scheme::Auto, 0, true);
      o.in_core_image = std::make_shared<stream::InCoreImage>(*src, 2);
      o.row_pieces_from = 0;
      o.split_in_core_s = 0.0;
      o.in_core_row_claims = claims;
      reps.push_back(count_with_workers(*src, o, ws, &comm));
      rows.push_back(dd.counted_rows);
      EXPECT_EQ(dd.premature_rows, 0u);
    }
    ASSERT_EQ(shared.sums.size(), 2u);
    EXPECT_EQ(reps[0].triangles + shared.sums[0][0], oracle);
    std::vector<count_t> pv = reps[0].per_vertex;
    ASSERT_EQ(shared.sums[1].size(), pv.size());
    for (std::size_t v = 0; v < pv.size(); ++v) pv[v] += shared.sums[1][v];
    EXPECT_EQ(per_vertex_mismatches(pv, new_of_old, oracle_pv), 0u);
    for (const CountReport& rep : reps) {
      EXPECT_EQ(rep.stats.rank_split, "static");
      EXPECT_EQ(rep.plan.reason.find("count the rows they claim") != std::string::npos, claims == 1)
          << rep.plan.reason;
      if (claims) {
        EXPECT_EQ(rep.plan.partition.p, 1u);
        EXPECT_EQ(rep.plan.units.size(), 2u);
      } else {
        EXPECT_GT(rep.plan.partition.p, 1u);
      }
    }
    if (claims) {
      EXPECT_EQ(rows[0] + rows[1], g.n());
      EXPECT_EQ(rows[0], g.n());  // (rank 0, first, took every run)
      EXPECT_GT(shared.fetched, 2u);
    } else {
      EXPECT_EQ(shared.fetched, 0u);
    }
  }
}

// MPI ranks of two whose plan holds every row part in the block cache (pair's row parts viewed in
// each rank's in-core image, on fake GPUs): with `--rank-split dynamic` each rank preloads every
// row part (views, registered), so that no unit goes through a host slot nor uploads a part that
// is not registered (units wait for their parts' registration here; without the preload the
// units' views went through host slots); the ranks' counts add up to the graph's, totals and per
// vertex. Static, likewise.
TEST(Workers, DynamicRanksThatHoldEveryRowPartPreloadThem) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 13));
  auto src = memory_source(g, 97);
  for (const std::string mode : {"dynamic", "static"}) {
    SCOPED_TRACE(mode);
    SequentialRanks::Shared shared;
    shared.dynamic = mode == "dynamic";
    std::vector<CountReport> reps;
    std::vector<std::uint64_t> host_slot_bytes, unregistered, direct;
    for (int r : {0, 1}) {
      SequentialRanks comm(r, &shared);
      std::vector<Worker> ws;  // (before the image, which unregisters itself from its backend)
      auto fake = std::make_unique<FakeBackend>();
      FakeBackend& dd = *fake;
      Worker w{std::move(fake), false};
      w.device = 0;
      ws.push_back(std::move(w));
      auto image = std::make_shared<stream::InCoreImage>(*src, 2);
      const auto from_image = stream::image_source(*src, *image);
      image->wait();
      PipelineOptions o = popts(Scheme::Pair, 6, true);
      o.in_core_image = image;
      o.view_copy_bytes_per_s = 0;
      o.rank_split = mode;
      reps.push_back(count_with_workers(*from_image, o, ws, &comm));
      host_slot_bytes.push_back(dd.host_slot_bytes);
      unregistered.push_back(dd.unregistered_sources);
      direct.push_back(dd.direct_copies);
    }
    for (const CountReport& rep : reps) {
      EXPECT_EQ(rep.stats.rank_split, mode);
      EXPECT_EQ(rep.plan.partition.scheme, Scheme::Pair);
    }
    ASSERT_EQ(shared.sums.size(), 2u);  // (rank 1's head, then its per-vertex counts)
    EXPECT_EQ(reps[0].triangles + shared.sums[0][0], oracle);
    std::vector<count_t> pv = reps[0].per_vertex;
    ASSERT_EQ(shared.sums[1].size(), pv.size());
    for (std::size_t v = 0; v < pv.size(); ++v) pv[v] += shared.sums[1][v];
    EXPECT_EQ(per_vertex_mismatches(pv, new_of_old, oracle_pv), 0u);
    EXPECT_GT(direct[0], 0u);
    EXPECT_EQ(host_slot_bytes[0], 0u) << "a unit went through a host slot";
    EXPECT_EQ(unregistered[0], 0u) << "a unit uploaded a row part that was not registered";
  }
}

}  // namespace
}  // namespace tristream::stream_test
