// census_store_test.cpp — the stored census (plan.hpp: encode_stored_census, census_from_store,
// obtain_census): plans from a stored census equal plans from a census taken by a pass over the
// graph, for every scheme, several device and host budgets and three graph shapes; forced parts
// fall back to the pass; damaged or foreign census bytes are input errors; the stored wedges are
// the undirected graph's, and a payload of version 1 (without them) still plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "plan_helpers.hpp"
#include "stream_util.hpp"
#include "test_util.hpp"
#include "tristream/analysis.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

using test::oriented;

// A graph source with a stored census, as a .tcsr file with the census extension is.
class StoredSource final : public test::ForwardingSource {
 public:
  StoredSource(const GraphSource& g, std::vector<unsigned char> bytes)
      : ForwardingSource(g), bytes_(std::move(bytes)) {}
  std::string name() const override { return "stored"; }
  bool stored_census(std::vector<unsigned char>* out, std::size_t limit) const override {
    out->assign(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min<std::size_t>(limit, bytes_.size())));
    return true;
  }

 private:
  std::vector<unsigned char> bytes_;
};

struct Shape {
  const char* name;
  OrientedGraph g;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  s.push_back({"uniform", oriented(test::random_graph(1500, 9000, 5))});
  s.push_back({"skewed", oriented(test::skewed_graph(1500, 9000, 6))});
  s.push_back({"hubs", oriented(test::skewed_graph(400, 12000, 7))});
  return s;
}

TEST(CensusStore, PlansFromTheStoredCensusEqualPlansFromThePass) {
  for (const Shape& sh : shapes()) {
    const auto src = memory_source(sh.g, 1000);
    const StoredSource stored(*src, encode_stored_census(*src, 2));
    const std::uint64_t full = in_core_bytes(src->n(), src->m(), false);
    int used = 0;
    for (Scheme scheme : {Scheme::Auto, Scheme::Range, Scheme::Hash, Scheme::Vertex, Scheme::Pair})
      for (std::uint64_t device : {full / 2, full / 6})
        for (std::uint64_t host : {std::uint64_t{0}, std::uint64_t{64} << 20})
          for (bool per_vertex : {false}) {
            PlanOptions o = test::opts(scheme, 0, device, host);
            o.per_vertex = per_vertex;
            const std::string what = std::string(sh.name) + " " + scheme_name(scheme) + " device " +
                                     std::to_string(device) + " host " + std::to_string(host);
            Census taken, read;
            std::string a, b;
            try {
              a = plan_graph(*src, o, &taken).to_json();
            } catch (const Error& e) {
              a = std::string("error: ") + e.what();
            }
            try {
              b = plan_graph(stored, o, &read).to_json();
            } catch (const Error& e) {
              b = std::string("error: ") + e.what();
            }
            EXPECT_EQ(a, b) << what;
            EXPECT_FALSE(taken.stored) << what;
            // (a small host budget caps the fine buckets: the stored census does not fit then)
            if (host == 0) {
              EXPECT_EQ(read.stored, !read.empty()) << what;
            }
            used += read.stored;
          }
    EXPECT_GT(used, 0) << sh.name << ": no plan needed the census";
  }
}

TEST(CensusStore, TheStoredCensusEqualsTheTakenOne) {
  const OrientedGraph g = oriented(test::skewed_graph(2000, 20000, 9));
  const auto src = memory_source(g, 700);
  const std::vector<unsigned char> bytes = encode_stored_census(*src, 2);
  for (std::uint64_t device : {std::uint64_t{0}, std::uint64_t{1} << 10}) {
    CensusOptions o = stored_census_options(g.n());
    o.device_budget = device;  // 1 KiB: no vertex candidate fits, the bounds stay
    for (bool vertex : {true, false}) {
      o.vertex = vertex;
      const Census t = take_census(*src, o);
      Census r;
      ASSERT_TRUE(census_from_store(bytes, *src, o, &r));
      EXPECT_EQ(t.fine_bounds, r.fine_bounds);
      EXPECT_EQ(t.fine_hist, r.fine_hist);
      EXPECT_EQ(t.hash_mod, r.hash_mod);
      EXPECT_EQ(t.hash_hist, r.hash_hist);
      EXPECT_EQ(t.vertex_bounds, r.vertex_bounds);
      EXPECT_EQ(t.vertex_exact, r.vertex_exact);
      ASSERT_EQ(t.vertex.size(), r.vertex.size());
      for (std::size_t i = 0; i < t.vertex.size(); ++i) {
        EXPECT_EQ(t.vertex[i].p, r.vertex[i].p);
        EXPECT_EQ(t.vertex[i].proxies, r.vertex[i].proxies);
        EXPECT_EQ(t.vertex[i].proxy_edges_bound, r.vertex[i].proxy_edges_bound);
      }
    }
  }
}

// (--parts 16 asks for the boundaries of the automatic plan: the stored census serves it)
TEST(CensusStore, ForcedPartsTakeTheCensusByAPass) {
  const OrientedGraph g = oriented(test::random_graph(2000, 16000, 3));
  const auto src = memory_source(g, 500);
  const StoredSource stored(*src, encode_stored_census(*src, 2));
  for (std::uint32_t p : {3u, 5u, 16u}) {
    Census c;
    const Plan a = plan_graph(stored, test::opts(Scheme::Hash, p), &c);
    EXPECT_EQ(c.stored, p == 16) << p;
    EXPECT_EQ(a.to_json(), plan_graph(*src, test::opts(Scheme::Hash, p)).to_json()) << p;
  }
}

TEST(CensusStore, TruncatedBytesAreAnInputError) {
  const OrientedGraph g = oriented(test::random_graph(300, 2000, 4));
  const auto src = memory_source(g, 200);
  const std::vector<unsigned char> bytes = encode_stored_census(*src, 1);
  const CensusOptions o = stored_census_options(g.n());
  for (std::size_t len = 0; len < bytes.size(); len += 1 + len / 64) {
    const std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + len);
    Census c;
    test::expect_input_error([&] { census_from_store(cut, *src, o, &c); }, {"section census"});
  }
}

TEST(CensusStore, ACensusOfAnotherGraphIsAnInputError) {
  const OrientedGraph g = oriented(test::random_graph(300, 2000, 4));
  const OrientedGraph h = oriented(test::random_graph(300, 2000, 5));
  const auto gs = memory_source(g, 200), hs = memory_source(h, 200);
  const std::vector<unsigned char> bytes = encode_stored_census(*gs, 1);
  Census c;
  test::expect_input_error([&] { census_from_store(bytes, *hs, stored_census_options(h.n()), &c); },
                           {"section census"});
}

TEST(CensusStore, DamagedCountsAreAnInputError) {
  const OrientedGraph g = oriented(test::random_graph(300, 2000, 4));
  const auto src = memory_source(g, 200);
  const std::vector<unsigned char> bytes = encode_stored_census(*src, 1);
  const CensusOptions o = stored_census_options(g.n());
  // The header fields and the first fine bound and histogram entries: each change breaks a
  // check (magic, version, options, n and m, counts, boundaries, sums). The wedges (bytes 40-55)
  // have no check of their own: the file's checksum of the census covers them.
  for (std::size_t at = 0; at < 88 + 32; at += 4) {
    if (at >= 40 && at < 56) continue;
    std::vector<unsigned char> bad = bytes;
    bad[at] ^= 0x5a;
    Census c;
    SCOPED_TRACE(at);
    test::expect_input_error([&] { census_from_store(bad, *src, o, &c); }, {"section census"});
  }
}

TEST(CensusStore, TheStoredWedgesAreTheUndirectedGraphsWedges) {
  for (const Shape& sh : shapes()) {
    SCOPED_TRACE(sh.name);
    const auto src = memory_source(sh.g, 1000);
    const StoredSource stored(*src, encode_stored_census(*src, 3));
    WedgeSum w;
    ASSERT_TRUE(stored_wedges(stored, &w));
    EXPECT_EQ(w, wedge_sum(test::reference_degrees(sh.g)));
    EXPECT_FALSE(stored_wedges(*src, &w));  // no stored census
  }
}

TEST(CensusStore, AVersionOnePayloadWithoutWedgesStillPlans) {
  const OrientedGraph g = oriented(test::skewed_graph(1500, 9000, 6));
  const auto src = memory_source(g, 1000);
  // Version 1: the same payload without the wedges' flag and their 16 bytes after n and m.
  std::vector<unsigned char> v1 = encode_stored_census(*src, 2);
  v1[4] = 1;
  v1[20] &= static_cast<unsigned char>(~2u);
  v1.erase(v1.begin() + 40, v1.begin() + 56);
  const StoredSource stored(*src, v1);
  WedgeSum w;
  EXPECT_FALSE(stored_wedges(stored, &w));
  Census from_store, taken;
  const CensusOptions o = stored_census_options(g.n());
  ASSERT_TRUE(census_from_store(v1, *src, o, &from_store));
  taken = take_census(*src, o);
  EXPECT_EQ(from_store.fine_hist, taken.fine_hist);
  EXPECT_EQ(from_store.vertex_bounds, taken.vertex_bounds);
  EXPECT_FALSE(from_store.has_wedges);
  // A version-1 payload with the wedges' flag is damaged.
  v1[20] |= 2;
  test::expect_input_error([&] { census_from_store(v1, *src, o, &from_store); }, {"bad flags"});
}

}  // namespace
}  // namespace tristream
