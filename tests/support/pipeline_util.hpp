// pipeline_util.hpp — shared helpers of the pipeline suites (tests/stream/pipeline_*_test.cpp):
// the test graphs, CPU backends and options, the brute-force oracle per graph, and count_tuned,
// which runs a plan with the tests' cache and staging changes (the knobs left PipelineOptions).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "plan_helpers.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream::stream_test {

using test::EdgeList;

// Reads a whitespace-separated edge list from tests/data (comments start with # or %), compacting
// the ids to 0..n-1 in order of first appearance.
inline EdgeList load_data(const std::string& name) {
  std::ifstream f(test::data_file(name));
  std::string line;
  std::map<std::uint64_t, vid_t> ids;
  EdgeList e;
  auto id = [&](std::uint64_t x) {
    auto it = ids.find(x);
    if (it != ids.end()) return it->second;
    const vid_t v = static_cast<vid_t>(ids.size());
    ids.emplace(x, v);
    return v;
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '%') continue;
    std::istringstream in(line);
    std::uint64_t a, b;
    if (in >> a >> b) {
      const vid_t x = id(a);
      const vid_t y = id(b);
      e.emplace_back(x, y);
    }
  }
  return e;
}

struct Case {
  std::string name;
  EdgeList edges;
};

inline std::vector<Case> cases() {
  return {
      {"karate", load_data("karate.el")},
      {"k5_messy", load_data("k5_messy.el")},
      {"petersen", load_data("petersen.el")},
      {"clique30", test::complete_graph(30)},
      {"cliques", test::disjoint_cliques(6, 7)},
      {"friendship", test::friendship(12)},
      {"wheel", test::wheel(25)},
      {"random", test::random_graph(400, 4000, 7)},
      {"skewed", test::skewed_graph(600, 5000, 3)},
  };
}

inline std::unique_ptr<StreamingBackend> cpu_backend() {
  CpuBackendOptions o;
  o.counter.threads = 2;
  return make_cpu_streaming_backend(make_cpu_counter(o.counter), o);
}

inline PipelineOptions popts(Scheme s, std::uint32_t p, bool per_vertex) {
  PipelineOptions o;
  o.backend = "cpu";
  o.scheme = s;
  o.parts = p;
  o.per_vertex = per_vertex;
  o.threads = 2;
  o.handle_sigint = false;
  return o;
}

// The tests' changes to a plan (the driver runs a plan as given): the host caches' sizes (bytes;
// -1 = as planned) and streamed staging (-1 = as planned; 0 = full host slots; > 0 = pieces of
// this many bytes, any size, through staging_buffers buffers; the in-core unit only: a plan with
// p > 1 keeps full slots); and the upload rate the planner assumes (bytes/s; 0 = the default
// PlanRates), which on these small graphs makes uploads weigh like kernels.
struct Knobs {
  std::int64_t chunk_cache_bytes = -1, block_cache_bytes = -1, piece_bytes = -1;
  int staging_buffers = 2;
  double upload_bytes_per_s = 0;
};
// Plans as count_with_backend does, applies the knobs and runs the plan. With knobs the preload
// borrows no spare host room (the caches' sizes are the test's) and nothing re-plans.
inline CountReport count_tuned(const GraphSource& g, const PipelineOptions& o, StreamingBackend& be,
                               const Knobs& k) {
  if (k.chunk_cache_bytes < 0 && k.block_cache_bytes < 0 && k.piece_bytes < 0 &&
      k.upload_bytes_per_s <= 0)
    return count_with_backend(g, o, be);
  PlanOptions po = resolve_plan_options(o, &be);
  if (k.upload_bytes_per_s > 0) po.rates.upload_bytes_per_s = k.upload_bytes_per_s;
  Plan plan = plan_graph(g, po);
  if (k.chunk_cache_bytes >= 0)
    plan.chunk_cache_bytes = static_cast<std::uint64_t>(k.chunk_cache_bytes);
  if (k.block_cache_bytes >= 0)
    plan.block_cache_bytes = static_cast<std::uint64_t>(k.block_cache_bytes);
  if (k.piece_bytes >= 0) {
    const bool streamed = k.piece_bytes > 0 && plan.partition.p <= 1;
    plan.piece_bytes = streamed ? static_cast<std::uint64_t>(k.piece_bytes) : 0;
    plan.staging_buffers = streamed ? static_cast<std::uint32_t>(k.staging_buffers) : 0;
  }
  plan.host_budget = 0;  // (no spare room: run_plan lends the preload what the budget leaves)
  return run_plan(g, plan, be, o);
}

// A plan made ahead with `options` (PipelineOptions::ready_plan, ready_split_plan), as count_file
// makes one beside the devices' start, its planner seconds set to plan_s.
inline std::shared_future<ReadyPlan> made_ahead(const GraphSource& g, const PlanOptions& options,
                                                double plan_s) {
  ReadyPlan ready;
  ready.options = options;
  ready.plan = plan_graph(g, options, &ready.census);
  ready.ok = true;
  ready.plan_s = plan_s;
  std::promise<ReadyPlan> made;
  made.set_value(std::move(ready));
  return made.get_future().share();
}

// The distinct blocks of every unit of a plan, summed over the units (A, and B and C unless
// they are A or B).
inline std::uint64_t distinct_blocks(const Plan& plan) {
  std::uint64_t n = 0;
  for (const WorkUnit& w : plan.units) n += 1 + (w.b_is_a ? 0 : 1) + (w.c_is_a || w.c_is_b ? 0 : 1);
  return n;
}

// Vertices (original ids) whose per-vertex count differs from the brute-force oracle; `got` is
// indexed by oriented id.
inline std::uint64_t per_vertex_mismatches(const std::vector<count_t>& got,
                                           const std::vector<vid_t>& new_of_old,
                                           const std::vector<count_t>& oracle) {
  std::uint64_t bad = 0;
  for (std::size_t v = 0; v < oracle.size(); ++v) bad += got[new_of_old[v]] != oracle[v];
  return bad;
}

// A test graph, oriented, with its brute-force oracle: n, the old -> new id map, the oriented
// graph, the triangle count and each vertex's count under its original id.
struct Oracled {
  std::uint64_t n = 0;
  std::vector<vid_t> new_of_old;
  OrientedGraph g;
  count_t triangles = 0;
  std::vector<count_t> per_vertex;
};
inline Oracled oracled(const test::EdgeList& e) {
  Oracled o;
  o.n = test::vertex_count(e);
  o.g = orient_edge_list(o.n, e, &o.new_of_old);
  o.triangles = test::brute_force_triangles(o.n, e);
  o.per_vertex = test::brute_force_per_vertex(o.n, e);
  return o;
}

// Every case counted with `scheme` at p parts, per vertex, on the CPU backend, in chunks of 5 and
// 64 edges: the in-core count and the scheme's both equal the oracle, p is capped at n, the
// per-vertex counts are the oracle's and every unit ran; `more(report, p)` checks what a scheme
// adds (once the plan's p is the expected one).
inline void expect_scheme_exact(
    const std::vector<Case>& cs, Scheme scheme, std::uint32_t p,
    const std::function<void(const CountReport&, std::uint64_t)>& more = {}) {
  for (const auto& c : cs) {
    SCOPED_TRACE(c.name);
    const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(c.edges);
    for (std::uint64_t chunk : {5u, 64u}) {
      SCOPED_TRACE("chunk_edges " + std::to_string(chunk));
      auto src = memory_source(g, chunk);
      auto be = cpu_backend();
      CountReport in_core = count_with_backend(*src, popts(Scheme::Range, 1, false), *be);
      EXPECT_EQ(in_core.triangles, oracle);
      CountReport r = count_with_backend(*src, popts(scheme, p, true), *be);
      EXPECT_EQ(r.triangles, oracle);
      const std::uint64_t want_p = g.m() ? std::min<std::uint64_t>(p, g.n()) : 1u;  // capped at n
      EXPECT_EQ(r.plan.partition.p, want_p);
      ASSERT_EQ(r.per_vertex.size(), n);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      EXPECT_EQ(r.stats.units, r.plan.units.size());
      EXPECT_FALSE(r.interrupted);
      if (more && r.plan.partition.p == want_p) more(r, want_p);
    }
  }
}

}  // namespace tristream::stream_test
