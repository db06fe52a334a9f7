// cut_rows_test.cpp — cut_rows (tristream/pipeline.hpp), the host form of a block cut from B
// (SlotBlock::cut, pair's A = G_ij out of the row part R_i): on seeded graphs of several sizes,
// from dense and from packed B, for every column part of a range partition, it equals a naive
// filter; edge cases named for the case; and slice_bounds of a unit whose A is cut equals that of
// the same unit with A given.
#include <gtest/gtest.h>

#include <vector>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

struct Naive {
  std::vector<eid_t> off;
  std::vector<vid_t> cols;
};

Naive naive_cut(const Csr& b, std::uint64_t lo, std::uint64_t hi) {
  Naive r;
  r.off.push_back(0);
  for (std::uint64_t u = 0; u < b.rows(); ++u) {
    for (eid_t e = b.offsets[u]; e < b.offsets[u + 1]; ++e)
      if (b.cols[e] >= lo && b.cols[e] < hi) r.cols.push_back(static_cast<vid_t>(b.cols[e] - lo));
    r.off.push_back(r.cols.size());
  }
  return r;
}

// B's packed form (the rows with columns only).
struct Packed {
  std::vector<vid_t> ids;
  std::vector<eid_t> off;
  PackedRows view() const { return PackedRows{ids.size(), ids.data(), off.data()}; }
};
Packed pack(const Csr& b) {
  Packed p;
  p.off.push_back(0);
  for (std::uint64_t u = 0; u < b.rows(); ++u)
    if (b.offsets[u + 1] > b.offsets[u]) {
      p.ids.push_back(static_cast<vid_t>(u));
      p.off.push_back(b.offsets[u + 1]);
    }
  return p;
}

class CutRows : public ::testing::TestWithParam<test::GraphCase> {};

TEST_P(CutRows, EqualsANaiveFilterFromDenseAndPackedRows) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    const OrientedGraph g = test::case_graph(GetParam(), seed);
    const Csr& b = g.csr;
    const Packed pk = pack(b);
    const std::uint64_t n = g.n();
    for (std::uint32_t p : {1u, 3u, 8u}) {
      for (std::uint32_t j = 0; j < p; ++j) {
        const std::uint64_t lo = n * j / p, hi = n * (j + 1) / p;
        SCOPED_TRACE(std::to_string(p) + " parts, part " + std::to_string(j));
        const Naive want = naive_cut(b, lo, hi);
        for (const bool packed : {false, true}) {
          const HostRows B = packed ? HostRows{n, nullptr, pk.view(), b.cols.data()}
                                    : HostRows{n, b.offsets.data(), {}, b.cols.data()};
          std::vector<eid_t> off(n + 1, 99);
          std::vector<vid_t> cols(want.cols.size());
          EXPECT_EQ(cut_rows(B, lo, hi, off.data(), cols.data(), cols.size()), want.cols.size());
          EXPECT_EQ(off, want.off);
          EXPECT_EQ(cols, want.cols);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CutRows,
                         ::testing::Values(test::GraphCase{40, 200, false},
                                           test::GraphCase{600, 5000, true},
                                           test::GraphCase{5000, 40000, false}),
                         [](const ::testing::TestParamInfo<test::GraphCase>& i) {
                           return test::case_name(i.param);
                         });

TEST(CutRowsEdgeCases, AnEmptyRangeGivesEmptyRows) {
  const std::vector<eid_t> off{0, 2, 2, 5};
  const std::vector<vid_t> cols{1, 2, 0, 1, 2};
  std::vector<eid_t> out(4, 7);
  EXPECT_EQ(cut_rows(HostRows{3, off.data(), {}, cols.data()}, 2, 2, out.data(), nullptr, 0), 0u);
  EXPECT_EQ(out, (std::vector<eid_t>{0, 0, 0, 0}));
}

TEST(CutRowsEdgeCases, TrailingRowsWithoutColumnsOfAPackedBlockGetOffsets) {
  // packed rows 1 and 2 of 5: rows 0, 3 and 4 are empty
  const std::vector<vid_t> ids{1, 2};
  const std::vector<eid_t> poff{0, 3, 4};
  const std::vector<vid_t> cols{3, 5, 9, 6};
  std::vector<eid_t> out(6, 7);
  std::vector<vid_t> got(3);
  const HostRows B{5, nullptr, PackedRows{2, ids.data(), poff.data()}, cols.data()};
  EXPECT_EQ(cut_rows(B, 4, 9, out.data(), got.data(), 3), 2u);
  EXPECT_EQ(out, (std::vector<eid_t>{0, 0, 1, 2, 2, 2}));
  EXPECT_EQ(got[0], 1u);  // 5 - 4
  EXPECT_EQ(got[1], 2u);  // 6 - 4
}

TEST(CutRowsEdgeCases, MoreColumnsThanTheCapacityIsAnError) {
  const std::vector<eid_t> off{0, 3};
  const std::vector<vid_t> cols{0, 1, 2};
  std::vector<eid_t> out(2);
  std::vector<vid_t> got(2);
  EXPECT_THROW(cut_rows(HostRows{1, off.data(), {}, cols.data()}, 0, 3, out.data(), got.data(), 2),
               Error);
}

// A unit of the in-core graph split at `mid` into the columns below and above: with A the
// columns from mid on (ids less mid) and C the rows from mid on, given as a cut of B or built,
// slice_bounds agrees.
TEST(CutRowsSlices, SliceBoundsOfACutAEqualThoseOfTheBuiltA) {
  const auto e = test::skewed_graph(3000, 30000, 4);
  const OrientedGraph g = orient_edge_list(test::vertex_count(e), e);
  const Csr& b = g.csr;
  const std::uint64_t n = g.n(), mid = n / 3;
  const Naive a = naive_cut(b, mid, n);
  std::vector<eid_t> c_off(b.offsets.begin() + static_cast<std::ptrdiff_t>(mid), b.offsets.end());
  UnitLayout L;
  L.num_blocks = 3;
  L.a = 0;
  L.b = 1;
  L.c = 2;
  L.blocks[0].rows = n;
  L.blocks[0].edges = a.cols.size();
  L.blocks[1].rows = n;
  L.blocks[1].edges = b.cols.size();
  L.blocks[2].rows = n - mid;
  L.blocks[2].edges = c_off.back() - c_off.front();
  L.host_offsets[1] = b.offsets.data();
  L.host_cols[1] = b.cols.data();
  L.host_offsets[2] = c_off.data();
  L.host_cols[2] = b.cols.data();
  UnitLayout built = L;
  built.host_offsets[0] = a.off.data();
  built.host_cols[0] = a.cols.data();
  UnitLayout cut = L;
  cut.blocks[0].cut = true;
  cut.blocks[0].cut_lo = mid;
  cut.blocks[0].cut_hi = n;
  for (std::uint32_t slices : {1u, 2u, 5u, 33u}) {
    SCOPED_TRACE(slices);
    EXPECT_EQ(slice_bounds(cut, slices), slice_bounds(built, slices));
  }
  EXPECT_FALSE(cut.uploads(0));
  EXPECT_EQ(cut.blocks[0].image_bytes(), 0u);
}

}  // namespace
}  // namespace tristream
