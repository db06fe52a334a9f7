// cuda_counter_test.cpp — the CUDA Counter and every CUDA kernel against the CPU counter and
// closed forms (label gpu; skipped with a message where no CUDA device is usable).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/testing/tools.hpp"
#include "test_util.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/generate.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {
namespace {

using test::EdgeList;

const std::vector<std::string> kKernels = {"auto",          "lstc",     "trust",  "trust:lite",
                                           "trust:t32",     "trust:in", "wedge",  "wedge:nocorner",
                                           "trust:lite-sb", "gui",      "gui:bs", "bitmap"};

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: gpu test skipped"; \
  } while (0)

OrientedGraph orient(const EdgeList& e) {
  return orient_edge_list(test::vertex_count(e), e);
}

count_t cpu_count(const CsrView& g) {
  return make_cpu_counter()->count(g);
}

count_t gpu_count(const std::string& kernel, const CsrView& A, const CsrView& B, const CsrView& C,
                  const PerVertexOut& pv = {}) {
  CounterOptions o;
  o.kernel = kernel;
  return make_cuda_counter(o)->count(A, B, C, pv);
}

void expect_all_kernels(const CsrView& g, count_t expected, const std::string& what) {
  for (const auto& k : kKernels)
    EXPECT_EQ(gpu_count(k, g, g, g), expected) << what << ", kernel " << k;
}

// The project's Kronecker generator (Graph500 parameters), 2^scale vertices, ef * 2^scale edges.
EdgeList rmat(unsigned scale, unsigned ef, std::uint64_t seed) {
  GenerateOptions o;
  o.kind = "kronecker";
  o.scale = scale;
  o.edge_factor = ef;
  o.seed = seed;
  const auto raw = generate_edges(o);
  EdgeList e(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i)
    e[i] = {static_cast<vid_t>(raw[i].first), static_cast<vid_t>(raw[i].second)};
  return e;
}

// ---- the backend probes -------------------------------------------------------------------------

TEST(CudaBackend, ProbesNeverThrow) {
  EXPECT_GE(cuda_device_count(), 0);
  if (!built_with_cuda()) {  // the stub: no devices, and asking for one is a usage error
    EXPECT_EQ(cuda_device_count(), 0);
    try {
      make_cuda_counter({});
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
    }
  }
}

TEST(CudaBackend, BadKernelAndDeviceAreUsageErrors) {
  SKIP_WITHOUT_GPU();
  CounterOptions o;
  o.kernel = "nonsense";
  try {
    make_cuda_counter(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("nonsense"), std::string::npos);
  }
  o.kernel = "auto";
  o.device = 1000;
  try {
    make_cuda_counter(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

TEST(CudaBackend, DeviceInfoAndFreeMemory) {
  SKIP_WITHOUT_GPU();
  const auto info = cuda::device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.sm_count, 0);
  const auto mem = cuda::memory_info(0);
  EXPECT_GT(mem.total, 0u);
  EXPECT_LE(mem.free, mem.total);
  auto c = make_cuda_counter({});
  EXPECT_EQ(c->backend(), "cuda");
  EXPECT_NE(c->describe().find(info.name), std::string::npos);
}

// ---- the CUDA error checker (cuda/check.hpp) ----------------------------------------------------
// Device out-of-memory is told by its error code, whatever the message: DeviceOutOfMemory, on
// which the pipeline re-plans; every other failure is Error(Device) naming the call and the place.

TEST(CudaCheck, OutOfMemoryIsToldByItsCode) {
  if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  const int memory_allocation = 2, invalid_value = 1;  // cudaErrorMemoryAllocation, ...InvalidValue
  try {
    cuda::throw_cuda_status(memory_allocation, "cudaMalloc(&p, n)");
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device);
    EXPECT_NE(std::string(e.what()).find("cudaMalloc(&p, n)"), std::string::npos) << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << "not DeviceOutOfMemory: " << e.what();
  }
  try {
    cuda::throw_cuda_status(invalid_value, "cudaMemcpy(a, b, n, k)");
  } catch (const DeviceOutOfMemory& e) {
    ADD_FAILURE() << "not an out-of-memory: " << e.what();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Device);
    EXPECT_NE(what.find("cudaMemcpy(a, b, n, k): "), std::string::npos) << what;
    EXPECT_NE(what.find("tools.cu:"), std::string::npos) << what;
  }
}

// Both ways device memory is allocated, cudaMalloc (slots) and cudaMallocAsync (kernel scratch),
// report a size the device cannot give as DeviceOutOfMemory, and the device works on afterwards.
TEST(CudaCheck, DeviceOutOfMemoryOnBothAllocationPaths) {
  SKIP_WITHOUT_GPU();
  for (const bool stream_ordered : {false, true}) {
    SCOPED_TRACE(stream_ordered ? "cudaMallocAsync" : "cudaMalloc");
    EXPECT_THROW(cuda::allocate_on_device(std::uint64_t{1} << 50, 0, stream_ordered),
                 DeviceOutOfMemory);
    EXPECT_NO_THROW(cuda::allocate_on_device(std::uint64_t{1} << 20, 0, stream_ordered));
  }
  const auto k5 = orient(test::complete_graph(5));
  EXPECT_EQ(gpu_count("auto", k5.csr.view(), k5.csr.view(), k5.csr.view()), 10u);
}

// ---- closed forms ------------------------------------------------------------------------------

TEST(CudaKernels, ClosedForms) {
  SKIP_WITHOUT_GPU();
  for (vid_t n : {3u, 4u, 5u, 17u, 64u, 200u}) {
    const auto g = orient(test::complete_graph(n));
    expect_all_kernels(g.csr.view(), count_t{n} * (n - 1) * (n - 2) / 6, "K" + std::to_string(n));
  }
  expect_all_kernels(orient(test::complete_bipartite(30, 40)).csr.view(), 0, "K30,40");
  expect_all_kernels(orient(test::wheel(1000)).csr.view(), 1000, "wheel 1000");
  expect_all_kernels(orient(test::friendship(500)).csr.view(), 500, "friendship 500");
  expect_all_kernels(orient(test::disjoint_cliques(50, 12)).csr.view(), 50 * 220, "50 K12");
}

TEST(CudaKernels, EmptyAndTriangleFree) {
  SKIP_WITHOUT_GPU();
  Csr empty;
  empty.offsets.assign(11, 0);
  empty.col_space = 10;
  expect_all_kernels(empty.view(), 0, "no edges");
  EdgeList path;
  for (vid_t i = 0; i + 1 < 1000; ++i) path.emplace_back(i, i + 1);
  expect_all_kernels(orient(path).csr.view(), 0, "path");
}

// A clique larger than every shared-memory tile and table: the spill paths (lstc tiles, trust's
// global search, gui's global lists).
TEST(CudaKernels, LargeCliqueSpills) {
  SKIP_WITHOUT_GPU();
  const vid_t n = 4200;
  const auto g = orient(test::complete_graph(n));
  expect_all_kernels(g.csr.view(), count_t{n} * (n - 1) * (n - 2) / 6, "K4200");
}

// ---- seeded random and skewed graphs against the CPU counter ----------------------------------

TEST(CudaKernels, SeededRandom) {
  SKIP_WITHOUT_GPU();
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto g = orient(test::random_graph(3000, 40000, seed));
    expect_all_kernels(g.csr.view(), cpu_count(g.csr.view()),
                       "random seed " + std::to_string(seed));
  }
  // Sparse over many ids: rows whose neighbour ranges exceed the shared bitmap.
  const auto g = orient(test::random_graph(600000, 2000000, 7));
  expect_all_kernels(g.csr.view(), cpu_count(g.csr.view()), "random 600k");
}

TEST(CudaKernels, Skewed) {
  SKIP_WITHOUT_GPU();
  {
    const auto g = orient(test::skewed_graph(20000, 300000, 5));
    expect_all_kernels(g.csr.view(), cpu_count(g.csr.view()), "skewed");
  }
  {  // a star: one hub, no triangles; then a star with a ring through the leaves
    EdgeList star;
    for (vid_t i = 1; i <= 100000; ++i) star.emplace_back(0, i);
    expect_all_kernels(orient(star).csr.view(), 0, "star");
    for (vid_t i = 1; i < 100000; ++i) star.emplace_back(i, i + 1);
    expect_all_kernels(orient(star).csr.view(), 99999, "star + path");
  }
  {  // clique plus tail: K300 and a long path hanging off it, plus random chords on the path
    EdgeList e = test::complete_graph(300);
    for (vid_t i = 299; i < 200000; ++i) e.emplace_back(i, i + 1);
    std::mt19937_64 rng(9);
    for (int i = 0; i < 50000; ++i) e.emplace_back(rng() % 300, 300 + rng() % 199000);
    const auto g = orient(e);
    expect_all_kernels(g.csr.view(), cpu_count(g.csr.view()), "clique + tail");
  }
}

TEST(CudaKernels, KroneckerUpToScale20) {
  SKIP_WITHOUT_GPU();
  for (unsigned scale : {10u, 14u, 17u, 20u}) {
    const auto g = orient(rmat(scale, 16, 100 + scale));
    expect_all_kernels(g.csr.view(), cpu_count(g.csr.view()),
                       "kronecker scale " + std::to_string(scale));
  }
}

// ---- per-vertex counts
// ---------------------------------------------------------------------------

void expect_per_vertex(const EdgeList& e, const std::string& what) {
  const auto g = orient(e);
  const auto v = g.csr.view();
  std::vector<count_t> ref(g.n(), 0);
  const count_t total =
      make_cpu_counter()->count(v, PerVertexOut{ref.data(), ref.data(), ref.data()});
  for (const auto& k : kKernels) {
    std::vector<count_t> got(g.n(), 7);  // added into: start from a known value
    const count_t t = gpu_count(k, v, v, v, PerVertexOut{got.data(), got.data(), got.data()});
    EXPECT_EQ(t, total) << what << ", kernel " << k;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] != ref[i] + 7;
    EXPECT_EQ(bad, 0u) << what << ", kernel " << k << ": per-vertex counts differ";
  }
}

// Three hubs and 30,000 leaves adjacent to all three: the lowest hub has 30,000 in-edges and two
// out-neighbours (one block row of trust:in walking 30,000 short lists); 3 triangles per leaf
// plus the hubs' own (per vertex too, against the CPU counter: each hub in 60,001, each leaf in
// 3).
TEST(CudaKernels, HubRowsWithManyInEdges) {
  SKIP_WITHOUT_GPU();
  constexpr vid_t kLeaves = 30000;
  EdgeList e = {{0, 1}, {0, 2}, {1, 2}};
  for (vid_t i = 3; i < 3 + kLeaves; ++i)
    for (vid_t h = 0; h < 3; ++h) e.emplace_back(h, i);
  expect_all_kernels(orient(e).csr.view(), count_t{3} * kLeaves + 1, "three hubs");
  expect_per_vertex(e, "three hubs");
}

TEST(CudaKernels, PerVertex) {
  SKIP_WITHOUT_GPU();
  expect_per_vertex(test::complete_graph(40), "K40");
  expect_per_vertex(test::random_graph(5000, 60000, 11), "random");
  expect_per_vertex(test::skewed_graph(5000, 80000, 12), "skewed");
  expect_per_vertex(rmat(16, 16, 13), "kronecker 16");
}

// ---- block tasks: count(A, B, C) with three different views -------------------------------------

struct Blocks {
  std::vector<std::uint64_t> first;  // part boundaries, p + 1 entries
  std::vector<std::vector<Csr>> g;   // g[i][j] = G_ij in local ids
};

// Range parts [first[i], first[i+1]) of the oriented graph.
Blocks range_blocks(const Csr& whole, std::vector<std::uint64_t> first) {
  Blocks b;
  b.first = std::move(first);
  const std::size_t p = b.first.size() - 1;
  b.g.assign(p, std::vector<Csr>(p));
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < p; ++j) {
      Csr& c = b.g[i][j];
      c.col_space = b.first[j + 1] - b.first[j];
      c.offsets.assign(1, 0);
      for (std::uint64_t u = b.first[i]; u < b.first[i + 1]; ++u) {
        for (eid_t e = whole.offsets[u]; e < whole.offsets[u + 1]; ++e) {
          const vid_t w = whole.cols[e];
          if (w >= b.first[j] && w < b.first[j + 1])
            c.cols.push_back(static_cast<vid_t>(w - b.first[j]));
        }
        c.offsets.push_back(c.cols.size());
      }
    }
  return b;
}

TEST(CudaKernels, RangeBlockTasksSumToTotal) {
  SKIP_WITHOUT_GPU();
  const auto g = orient(rmat(15, 16, 21));
  const count_t total = cpu_count(g.csr.view());
  const std::uint64_t n = g.n();
  for (std::size_t p : {2u, 3u}) {
    std::vector<std::uint64_t> first;
    for (std::size_t i = 0; i <= p; ++i) first.push_back(n * i / p);
    const Blocks b = range_blocks(g.csr, first);
    for (const auto& k : kKernels) {
      count_t sum = 0;
      std::vector<count_t> pv_global(n, 0);
      for (std::size_t i = 0; i < p; ++i)
        for (std::size_t j = i; j < p; ++j)
          for (std::size_t l = j; l < p; ++l) {
            const CsrView A = b.g[i][j].view(), B = b.g[i][l].view(), C = b.g[j][l].view();
            std::vector<count_t> pu(A.rows, 0), pv(C.rows, 0), pw(B.col_space, 0);
            const count_t c = gpu_count(k, A, B, C, PerVertexOut{pu.data(), pv.data(), pw.data()});
            EXPECT_EQ(c, make_cpu_counter()->count(A, B, C))
                << "kernel " << k << ", task " << i << j << l;
            sum += c;
            for (std::size_t x = 0; x < pu.size(); ++x) pv_global[first[i] + x] += pu[x];
            for (std::size_t x = 0; x < pv.size(); ++x) pv_global[first[j] + x] += pv[x];
            for (std::size_t x = 0; x < pw.size(); ++x) pv_global[first[l] + x] += pw[x];
          }
      EXPECT_EQ(sum, total) << "kernel " << k << ", p = " << p;
      std::vector<count_t> ref(n, 0);
      make_cpu_counter()->count(g.csr.view(), PerVertexOut{ref.data(), ref.data(), ref.data()});
      EXPECT_TRUE(pv_global == ref) << "kernel " << k << ", p = " << p << ": per-vertex differs";
    }
  }
}

// Hash parts x mod p: all p^3 tasks.
TEST(CudaKernels, HashBlockTasksSumToTotal) {
  SKIP_WITHOUT_GPU();
  const auto g = orient(test::skewed_graph(20000, 200000, 31));
  const count_t total = cpu_count(g.csr.view());
  const std::uint64_t n = g.n(), p = 3;
  std::vector<std::vector<Csr>> blk(p, std::vector<Csr>(p));
  for (std::uint64_t i = 0; i < p; ++i)
    for (std::uint64_t j = 0; j < p; ++j) {
      Csr& c = blk[i][j];
      c.col_space = (n + p - 1 - j) / p;
      for (std::uint64_t u = i; u < n; u += p) {
        for (eid_t e = g.csr.offsets[u]; e < g.csr.offsets[u + 1]; ++e)
          if (g.csr.cols[e] % p == j) c.cols.push_back(static_cast<vid_t>(g.csr.cols[e] / p));
        c.offsets.push_back(c.cols.size());
      }
    }
  for (const auto& k : kKernels) {
    count_t sum = 0;
    for (std::uint64_t i = 0; i < p; ++i)
      for (std::uint64_t j = 0; j < p; ++j)
        for (std::uint64_t l = 0; l < p; ++l)
          sum += gpu_count(k, blk[i][j].view(), blk[i][l].view(), blk[j][l].view());
    EXPECT_EQ(sum, total) << "kernel " << k;
  }
}

// ---- slices through the one count entry ---------------------------------------------------------
// enqueue_device_count with C's rows outside a slice emptied, as the streaming backend runs a
// sliced unit, for every kernel: each slice equals the CPU count of the same window of C, and the
// slices (one of a single row) sum to the total.
TEST(CudaKernels, SlicesThroughTheCountEntry) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::string, OrientedGraph>> graphs = {
      {"random", orient(test::random_graph(3000, 40000, 3))},
      {"skewed", orient(test::skewed_graph(5000, 60000, 4))}};
  for (const auto& [name, g] : graphs) {
    const CsrView v = g.csr.view();
    const std::uint64_t n = v.rows;
    const std::vector<std::uint64_t> cuts = {0, n / 5, n / 2, n - 1, n};
    const count_t total = cpu_count(v);
    for (const auto& k : kKernels) {
      count_t sum = 0;
      for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        std::vector<eid_t> window(n + 1);
        window_offsets(v.offsets, n, cuts[i], cuts[i + 1], window.data());
        CsrView c = v;
        c.offsets = window.data();
        const count_t got = cuda::count_slice_on_device(v, v, v, cuts[i], cuts[i + 1], k, 0);
        EXPECT_EQ(got, make_cpu_counter()->count(v, v, c))
            << name << ", kernel " << k << ", slice " << i;
        sum += got;
      }
      EXPECT_EQ(sum, total) << name << ", kernel " << k;
    }
  }
}

// ---- 64-bit offsets ----------------------------------------------------------------------------
// A view whose offsets start beyond 2^33: the counter uploads the columns from the first edge
// and the kernels index with the large offsets, so any 32-bit truncation reads wrong columns.
TEST(CudaKernels, LargeOffsets) {
  SKIP_WITHOUT_GPU();
  const auto g = orient(rmat(14, 16, 41));
  const count_t expected = cpu_count(g.csr.view());
  const eid_t shift = (eid_t{1} << 33) + 12345;
  std::vector<eid_t> offsets(g.csr.offsets);
  for (auto& o : offsets) o += shift;
  CsrView v = g.csr.view();
  v.offsets = offsets.data();
  // cols[offsets[r]] must address row r's first column: shift the pointer back (never
  // dereferenced below the real array).
  v.cols = reinterpret_cast<const vid_t*>(reinterpret_cast<std::uintptr_t>(g.csr.cols.data()) -
                                          shift * sizeof(vid_t));
  EXPECT_EQ(cpu_count(v), expected);
  for (const auto& k : kKernels) EXPECT_EQ(gpu_count(k, v, v, v), expected) << "kernel " << k;
}

// ---- packed blocks
// ------------------------------------------------------------------------------- The pipeline's
// expansion of packed blocks (cuda/expand_rows.cu) against the host reference (expand_packed), on
// seeded random blocks: sizes around the kernel's spans of 16 rows and its grid, densities from no
// rows with columns to all of them, long gaps at both ends.
TEST(CudaKernels, ExpandPackedEqualsTheHostReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(77);
  for (std::uint64_t rows : {0u, 1u, 15u, 16u, 17u, 1000u, 65536u, 3000001u})
    for (double fill : {0.0, 0.001, 0.2, 1.0}) {
      std::vector<vid_t> ids;
      std::vector<eid_t> offs{0};
      std::bernoulli_distribution has(fill);
      std::uniform_int_distribution<eid_t> deg(1, 9);
      // the middle half only, at low fill: empty runs at both ends
      const std::uint64_t lo = fill < 0.01 ? rows / 4 : 0,
                          hi = fill < 0.01 ? rows - rows / 4 : rows;
      for (std::uint64_t u = lo; u < hi; ++u)
        if (has(rng)) {
          ids.push_back(static_cast<vid_t>(u));
          offs.push_back(offs.back() + deg(rng));
        }
      const PackedRows pr{ids.size(), ids.data(), offs.data()};
      std::vector<eid_t> want(rows + 1);
      expand_packed(pr, rows, want.data());
      EXPECT_EQ(cuda::expand_packed_on_device(pr, rows, 0), want)
          << "rows " << rows << " fill " << fill;
    }
}

// The pipeline's cut of a block from B (cuda/cut_rows.cu, pair's A) against the host reference
// (cut_rows): seeded graphs of several sizes (up to a thousand blocks of 256 rows), every column
// part of 1, 3 and 16; a capacity below the edges writes no column past it.
TEST(CudaKernels, CutRowsEqualsTheHostReference) {
  SKIP_WITHOUT_GPU();
  for (const auto& [n, m] :
       {std::pair<vid_t, std::uint64_t>{1, 0}, {40, 300}, {5000, 60000}, {1u << 18, 1000000}})
    for (std::uint64_t seed : {1u, 2u}) {
      const OrientedGraph g = orient(test::random_graph(n, m, seed));
      const CsrView B = g.csr.view();
      for (std::uint32_t p : {1u, 3u, 16u})
        for (std::uint32_t j = 0; j < p; ++j) {
          const std::uint64_t lo = g.n() * j / p, hi = g.n() * (j + 1) / p;
          std::vector<eid_t> off(g.n() + 1);
          std::vector<vid_t> cols(g.m());
          cols.resize(cut_rows(HostRows{g.n(), B.offsets, {}, B.cols}, lo, hi, off.data(),
                               cols.data(), g.m()));
          const auto got = cuda::cut_rows_on_device(B, lo, hi, cols.size(), 0);
          EXPECT_EQ(got.first, off) << "n " << n << " part " << j << " of " << p;
          EXPECT_EQ(got.second, cols) << "n " << n << " part " << j << " of " << p;
        }
      if (g.m() > 1) {  // a capacity of one column less: the last is not written
        const auto got = cuda::cut_rows_on_device(B, 0, g.n(), g.m() - 1, 0);
        EXPECT_EQ(got.first.back(), g.m());
        EXPECT_EQ(got.second.size(), g.m() - 1);
      }
    }
}

}  // namespace
}  // namespace tristream
