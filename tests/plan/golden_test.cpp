// golden_test.cpp — the planner's plans on fixed inputs, compared byte for byte with the plan
// JSON committed under tests/plan/golden/: seeded graphs of three shapes (uniform, a few hubs,
// Kronecker) and fixed options (budgets that give the in-core, range, hash and vertex schemes,
// several forced p, per-vertex on and off, streamed staging, the units in flight, the column
// order and the tail cover). A change in the planner's code that changes a plan fails here.
//
// The graphs come from a generator written here (splitmix64 draws, no std:: distributions, so
// every standard library gives the same edges) and from generate_edges (counter-based).
//
// Regenerate after an intended change of the plans (and say why in the commit):
//   TRISTREAM_UPDATE_GOLDEN=1 BUILD/tests/plan_golden_test
// writes every golden file from the current code instead of comparing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/generate.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

const std::string kGoldenDir = std::string(TRISTREAM_TEST_DATA_DIR) + "/../plan/golden";

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// m uniform edges on n vertices; with hubs > 0, every other edge starts at one of the first
// `hubs` vertices (a skewed degree distribution).
OrientedGraph seeded_graph(vid_t n, std::uint64_t m, vid_t hubs, std::uint64_t seed) {
  std::uint64_t s = seed;
  std::vector<std::pair<vid_t, vid_t>> e;
  e.reserve(m);
  for (std::uint64_t i = 0; i < m; ++i) {
    const vid_t u = static_cast<vid_t>(splitmix64(s) % (hubs && i % 2 == 0 ? hubs : n));
    const vid_t v = static_cast<vid_t>(splitmix64(s) % n);
    e.emplace_back(u, v);
  }
  return orient_edge_list(n, std::move(e));
}

OrientedGraph kronecker_graph(unsigned scale, unsigned edge_factor, std::uint64_t seed) {
  GenerateOptions go;
  go.scale = scale;
  go.edge_factor = edge_factor;
  go.seed = seed;
  go.threads = 2;
  std::vector<std::pair<vid_t, vid_t>> e;
  for (const auto& [u, v] : generate_edges(go))
    e.emplace_back(static_cast<vid_t>(u), static_cast<vid_t>(v));
  return orient_edge_list(std::uint64_t{1} << scale, std::move(e));
}

const OrientedGraph& graph(const std::string& shape) {
  static const OrientedGraph uniform = seeded_graph(1500, 12000, 0, 11);
  static const OrientedGraph hubs = seeded_graph(2000, 15000, 10, 12);
  static const OrientedGraph kron = kronecker_graph(10, 8, 13);
  static const OrientedGraph large = seeded_graph(20000, 100000, 0, 14);
  return shape == "uniform" ? uniform : shape == "hubs" ? hubs : shape == "kron" ? kron : large;
}

// Rates under which the small test graphs' uploads and kernels are of a size (the defaults make
// every unit's fixed kernel cost hide megabytes), so the units in flight, the order and the tail
// cover matter: balanced, and upload-bound.
PlanRates balanced_rates() {
  PlanRates r;
  r.upload_bytes_per_s = 1e6;
  r.kernel_work_per_s = 2e6;
  r.kernel_s_per_unit = 1e-4;
  return r;
}
PlanRates upload_bound_rates() {
  PlanRates r;
  r.upload_bytes_per_s = 1e6;
  r.kernel_work_per_s = 1e7;
  r.kernel_s_per_unit = 1e-5;
  return r;
}

struct Case {
  std::string name;
  std::string shape;
  std::uint64_t chunk_edges;
  // The options, given the graph's in-core device bytes.
  std::function<PlanOptions(std::uint64_t in_core)> options;
};

PlanOptions base(Scheme s, std::uint32_t p) {
  PlanOptions o;
  o.scheme = s;
  o.parts = p;
  o.threads = 2;
  return o;
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  auto add = [&](const std::string& shape, const std::string& what,
                 std::function<PlanOptions(std::uint64_t)> f) {
    cs.push_back({shape + "_" + what, shape, 997, std::move(f)});
  };
  for (const std::string shape : {"uniform", "hubs", "kron"}) {
    add(shape, "in_core", [](std::uint64_t) { return base(Scheme::Auto, 0); });
    add(shape, "auto_half", [](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Auto, 0);
      o.device_budget = ic / 2;
      return o;
    });
    add(shape, "auto_in_core_bytes_per_vertex", [](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Auto, 0);
      o.device_budget = ic;
      o.per_vertex = true;
      return o;
    });
    add(shape, "range_p3", [](std::uint64_t) { return base(Scheme::Range, 3); });
    add(shape, "range_p7_per_vertex", [](std::uint64_t) {
      PlanOptions o = base(Scheme::Range, 7);
      o.per_vertex = true;
      return o;
    });
    add(shape, "range_half", [](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Range, 0);
      o.device_budget = ic / 2;
      return o;
    });
    add(shape, "hash_p4", [](std::uint64_t) { return base(Scheme::Hash, 4); });
    add(shape, "vertex_p4", [](std::uint64_t) { return base(Scheme::Vertex, 4); });
    add(shape, "vertex_p2_per_vertex", [](std::uint64_t) {
      PlanOptions o = base(Scheme::Vertex, 2);
      o.per_vertex = true;
      return o;
    });
    for (const bool upload_bound : {false, true}) {
      const std::string rates = upload_bound ? "_upload_bound" : "_balanced";
      const PlanRates r = upload_bound ? upload_bound_rates() : balanced_rates();
      add(shape, "range_p6" + rates, [r](std::uint64_t) {
        PlanOptions o = base(Scheme::Range, 6);
        o.rates = r;
        return o;
      });
      add(shape, "auto_half" + rates, [r](std::uint64_t ic) {
        PlanOptions o = base(Scheme::Auto, 0);
        o.device_budget = ic / 2;
        o.rates = r;
        return o;
      });
    }
    // A host budget below the in-core host need on the CPU backend (out-of-core), and both
    // budgets at once.
    add(shape, "host_cpu", [](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Auto, 0);
      o.host_budget = ic + ic / 4;
      o.device_is_host = true;
      return o;
    });
    add(shape, "host_and_device", [](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Auto, 0);
      o.device_budget = ic / 2;
      o.host_budget = ic * 2;
      return o;
    });
  }
  add("hubs", "hash_half", [](std::uint64_t ic) {
    PlanOptions o = base(Scheme::Hash, 0);
    o.device_budget = ic / 2;
    return o;
  });
  // Streamed staging (a larger graph: its slot holds several of the smallest pieces): a host
  // budget of the offsets, two chunks and half the slot; and a little more than the full slot.
  for (const std::uint64_t extra_eighths : {4u, 12u}) {
    add("large", "host_" + std::to_string(extra_eighths) + "_eighths", [=](std::uint64_t ic) {
      PlanOptions o = base(Scheme::Auto, 0);
      o.host_budget = 20001 * sizeof(eid_t) + 2 * 997 * sizeof(vid_t) + ic * extra_eighths / 8;
      return o;
    });
  }
  return cs;
}

std::string plan_json(const Case& c) {
  const OrientedGraph& g = graph(c.shape);
  auto src = memory_source(g, c.chunk_edges);
  const PlanOptions o = c.options(in_core_bytes(g.n(), g.m(), false));
  try {
    return plan_graph(*src, o).to_json() + "\n";
  } catch (const Error& e) {
    return std::string("error: ") + e.what() + "\n";
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return in ? s.str() : std::string();
}

// Where two texts first differ, with some context of each.
std::string first_difference(const std::string& want, const std::string& got) {
  std::size_t x = 0;
  while (x < want.size() && x < got.size() && want[x] == got[x]) ++x;
  const std::size_t from = x > 80 ? x - 80 : 0;
  return "first difference at byte " + std::to_string(x) + "\n  golden: ..." +
         want.substr(from, 200) + "\n  now:    ..." + got.substr(from, 200);
}

class GoldenPlan : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenPlan, SameJsonAsTheGoldenFile) {
  const Case& c = GetParam();
  const std::string path = kGoldenDir + "/" + c.name + ".json";
  const std::string got = plan_json(c);
  if (std::getenv("TRISTREAM_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << got;
    GTEST_SKIP() << "wrote " << path;
  }
  const std::string want = read_file(path);
  ASSERT_FALSE(want.empty()) << "missing golden file " << path
                             << " (TRISTREAM_UPDATE_GOLDEN=1 writes it)";
  EXPECT_TRUE(want == got) << c.name << ": " << first_difference(want, got);
}

INSTANTIATE_TEST_SUITE_P(Plans, GoldenPlan, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// The golden cases exercise what they claim to: every scheme, several p, per-vertex plans,
// streamed staging, the device cache with fewer units in flight, the column order, the tail
// cover, and a host budget that forces an out-of-core plan.
TEST(GoldenPlanCases, CoverEveryPlanFeature) {
  std::map<std::string, int> seen;
  for (const Case& c : cases()) {
    const std::string j = plan_json(c);
    for (const char* key :
         {"\"scheme\":\"range\",\"parts\":1,", "\"scheme\":\"range\",\"parts\":3,",
          "\"scheme\":\"hash\"", "\"scheme\":\"vertex\"", "\"staging\":\"streamed\"",
          "\"unit_order\":\"column\"", "\"in_flight\":2,", "\"in_flight\":4,", "\"in_flight\":16,"})
      if (j.find(key) != std::string::npos) ++seen[key];
    if (j.find("\"tail_cover_units\":0,") == std::string::npos &&
        j.find("\"tail_cover_units\"") != std::string::npos)
      ++seen["tail cover"];
    if (j.rfind("error:", 0) == 0) ++seen["error"];
  }
  for (const char* key :
       {"\"scheme\":\"range\",\"parts\":1,", "\"scheme\":\"range\",\"parts\":3,",
        "\"scheme\":\"hash\"", "\"scheme\":\"vertex\"", "\"staging\":\"streamed\"",
        "\"unit_order\":\"column\"", "\"in_flight\":2,", "\"in_flight\":4,", "tail cover"})
    EXPECT_GT(seen[key], 0) << key;
  EXPECT_EQ(seen["error"], 0);
}

}  // namespace
}  // namespace tristream
