// in_core_image_test.cpp — the in-core image decoded while the device starts
// (stream/in_core_image.hpp): its bytes are the in-core slot's, its degrees and wedges equal the
// streamed pass's (hubs among the ids counted per thread and below them), the pipeline uploads
// it whole without a host slot and counts exactly, out of core it serves the chunks and is
// otherwise left alone (and on the CPU backend), out of core it serves each chunk once decoded
// without waiting for the rest and pair's heavy units start before it is whole (light ones wait
// for its registration), a failing chunk fails wait(), an image dropped while decoding stops
// cleanly, and widen() lets the lanes held back decode the chunks left.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "fake_backend.hpp"
#include "stream/in_core_image.hpp"
#include "stream/unit_in_core.hpp"
#include "stream_util.hpp"
#include "tristream/analysis.hpp"

namespace tristream::stream_test {
namespace {

using stream::InCoreImage;

// A random graph plus two hubs: the last vertex (among the ids counted per thread) and vertex 5
// (below them when n exceeds the per-thread range).
test::EdgeList hubbed_graph(vid_t n, std::uint64_t m, std::uint64_t seed) {
  test::EdgeList e = test::random_graph(n, m, seed);
  for (vid_t v = 0; v + 1 < n; v += 2) e.emplace_back(v, n - 1);
  for (vid_t v = 6; v < n; v += 3) e.emplace_back(5, v);
  return e;
}

TEST(InCoreImage, HoldsTheInCoreSlotsBytes) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(2000, 20000, 5));
  for (std::uint64_t chunk : {7u, 1000u, 1u << 20}) {
    auto src = memory_source(g, chunk);
    InCoreImage image(*src, 3);
    image.wait();
    ASSERT_EQ(image.bytes(), InCoreImage::slot_bytes(g.n(), g.m()));
    EXPECT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), image.offsets()));
    EXPECT_TRUE(std::equal(g.csr.cols.begin(), g.csr.cols.end(), image.columns()));
    // the padding after the offsets and after the columns is zero
    const unsigned char* d = image.data();
    const std::uint64_t off_end = (g.n() + 1) * sizeof(eid_t);
    const std::uint64_t cols_at =
        static_cast<std::uint64_t>(reinterpret_cast<const unsigned char*>(image.columns()) - d);
    EXPECT_TRUE(std::all_of(d + off_end, d + cols_at, [](unsigned char b) { return b == 0; }));
    EXPECT_TRUE(std::all_of(d + cols_at + g.m() * sizeof(vid_t), d + image.bytes(),
                            [](unsigned char b) { return b == 0; }));
  }
}

TEST(InCoreImage, DegreesAndWedgesEqualTheStreamedPass) {
  // small (every id counted per thread) and above the per-thread range (hub 5 counted
  // atomically, the last vertex per thread)
  for (vid_t n : {vid_t{500}, vid_t{300000}}) {
    SCOPED_TRACE(n);
    const test::EdgeList e = hubbed_graph(n, 4ull * n, 11);
    const OrientedGraph g = orient_edge_list(n, e);
    auto src = memory_source(g, 4099);
    for (unsigned threads : {1u, 4u}) {
      InCoreImage image(*src, threads);
      EXPECT_EQ(image.degrees(threads), test::reference_degrees(g));
      EXPECT_EQ(image.wedges(threads), streamed_wedges(*src, 2));
    }
  }
}

TEST(InCoreImage, ThePipelineUploadsItWholeWithoutAHostSlot) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 29));
  auto src = memory_source(g, 97);
  for (bool per_vertex : {false, true}) {
    SCOPED_TRACE(per_vertex ? "per vertex" : "count");
    FakeBackend dd;
    PipelineOptions o = popts(Scheme::Auto, 0, per_vertex);
    o.in_core_image = std::make_shared<InCoreImage>(*src, 2);
    ASSERT_TRUE(o.in_core_image->register_with(dd));
    const CountReport r = count_with_backend(*src, o, dd);
    ASSERT_EQ(r.plan.partition.p, 1u);
    EXPECT_EQ(r.triangles, oracle);
    if (per_vertex) {
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    }
    ASSERT_FALSE(dd.calls.empty());
    EXPECT_EQ(dd.calls.front(), "allocate without host slots");
    EXPECT_EQ(dd.host_slot_bytes, 0u);
    EXPECT_EQ(dd.direct_copies, 1u);
    EXPECT_EQ(dd.unregistered_sources, 0u);
    EXPECT_EQ(dd.image_mismatches, 0u);
  }
}

// The image's share of the host memory: a quarter always, half only when the count will be in
// core, never more than half, and nothing of no room; the boundaries belong to the smaller share.
TEST(InCoreImage, RoomForAQuarterOrHalfInCore) {
  using Room = InCoreImage::Room;
  const std::uint64_t room = std::uint64_t{125} << 30;
  EXPECT_EQ(InCoreImage::room_for(0, room), Room::Fits);
  EXPECT_EQ(InCoreImage::room_for(room / 4, room), Room::Fits);
  EXPECT_EQ(InCoreImage::room_for(room / 4 + 1, room), Room::InCoreOnly);
  // 8.49 billion edges on 2^28 vertices (about Kronecker 29's image, 33.4 GiB) in 125 GiB: more
  // than a quarter, less than half
  const std::uint64_t k29 = InCoreImage::slot_bytes(std::uint64_t{1} << 28, 8'493'567'493ull);
  EXPECT_GT(k29, std::uint64_t{33} << 30);
  EXPECT_EQ(InCoreImage::room_for(k29, room), Room::InCoreOnly);
  EXPECT_EQ(InCoreImage::room_for(room / 2, room), Room::InCoreOnly);
  EXPECT_EQ(InCoreImage::room_for(room / 2 + 1, room), Room::TooLarge);
  EXPECT_EQ(InCoreImage::room_for(1, 0), Room::TooLarge);
  EXPECT_EQ(InCoreImage::room_for(0, 0), Room::TooLarge);
  EXPECT_EQ(InCoreImage::room_for(1, 3), Room::InCoreOnly);  // (3 / 2 = 1, 3 / 4 = 0)
  EXPECT_EQ(InCoreImage::room_for(2, 3), Room::TooLarge);
  EXPECT_EQ(InCoreImage::room_for(1, 4), Room::Fits);
}

TEST(InCoreImage, LeftAloneOutOfCoreAndOnTheCpuBackend) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 31));
  auto src = memory_source(g, 97);
  auto image = std::make_shared<InCoreImage>(*src, 2);
  {
    // out of core the chunks come from the image (image_source), the same bytes as the file's
    FakeBackend dd;
    PipelineOptions o = popts(Scheme::Range, 3, false);
    o.in_core_image = image;
    const auto from_image = stream::image_source(*src, *image);
    for (std::uint64_t k = 0; k < src->chunks().size(); ++k) {
      std::vector<vid_t> a(src->chunks()[k].edges), b(a.size());
      src->read_chunk(k, a.data());
      from_image->read_chunk(k, b.data());
      ASSERT_EQ(a, b) << "chunk " << k;
    }
    EXPECT_EQ(count_with_backend(*from_image, o, dd).triangles, oracle);
    EXPECT_EQ(dd.calls.front(), "allocate");
  }
  {
    auto cpu = cpu_backend();
    PipelineOptions o = popts(Scheme::Auto, 0, false);
    o.in_core_image = image;
    EXPECT_EQ(count_with_backend(*src, o, *cpu).triangles, oracle);
  }
}

// Out of core, pair's suffix blocks (each row part's whole rows) are views of the image's
// columns: once the image is registered they upload from it (no unregistered source, the
// device's bytes equal each unit's host image), dense and packed offsets alike, and the counts
// and per-vertex counts are exact; on the CPU backend the views are copied into the slots.
TEST(InCoreImage, PairSuffixBlocksAreViewsOfTheImage) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 37));
  auto src = memory_source(g, 97);
  for (std::uint32_t p : {2u, 5u, 9u}) {
    SCOPED_TRACE(p);
    FakeBackend dd;  // (before the image, which unregisters itself from it)
    auto image = std::make_shared<InCoreImage>(*src, 2);
    const auto from_image = stream::image_source(*src, *image);
    // (registered before the count: units that come before the preload registers it upload the
    // views from pageable memory, PairUnitsStartBeforeTheImageIsWhole)
    ASSERT_TRUE(image->register_with(dd));
    {
      PipelineOptions o = popts(Scheme::Pair, p, true);
      o.in_core_image = image;
      const CountReport r = count_with_backend(*from_image, o, dd);
      ASSERT_EQ(r.plan.partition.scheme, Scheme::Pair);
      ASSERT_EQ(r.plan.partition.p, p);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      EXPECT_TRUE(image->registered());
      EXPECT_GT(dd.direct_copies, 0u);
      EXPECT_EQ(dd.unregistered_sources, 0u);
      EXPECT_EQ(dd.host_slot_bytes, 0u);
      EXPECT_FALSE(dd.host_slots_pinned) << "host slots pinned though no unit uses them";
      EXPECT_EQ(dd.image_mismatches, 0u);
    }
    {
      auto cpu = cpu_backend();
      PipelineOptions o = popts(Scheme::Pair, p, true);
      o.in_core_image = image;
      const CountReport r = count_with_backend(*from_image, o, *cpu);
      EXPECT_EQ(r.triangles, oracle);
      EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    }
  }
}

TEST(InCoreImage, AFailingChunkFailsTheWait) {
  const OrientedGraph g = orient_edge_list(800, test::random_graph(800, 8000, 13));
  auto src = memory_source(g, 500);
  test::FailingSource bad(*src, 2);
  InCoreImage image(bad, 2);
  try {
    image.wait();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("chunk 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(image.wait(), Error) << "every wait reports it";
}

// A source whose first read of chunk 0 waits until opened (the image's decoder, which takes
// chunk 0 last, stops there); every other read passes.
class GatedSource final : public test::ForwardingSource {
 public:
  explicit GatedSource(const GraphSource& g) : ForwardingSource(g) {}
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    if (k == 0 && !first_.exchange(true)) {
      std::unique_lock<std::mutex> lk(mu_);
      holding_ = true;
      cv_.notify_all();
      cv_.wait(lk, [&] { return open_; });
    }
    g_.read_chunk(k, out);
  }
  // Waits until the first read of chunk 0 is held (the image's decoder, once every other chunk
  // is decoded), so that no other reader of chunk 0 comes first.
  void wait_held() const {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return holding_; });
  }
  void open() {
    std::lock_guard<std::mutex> lk(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  mutable std::atomic<bool> first_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool open_ = false;
  mutable bool holding_ = false;
};

// Out of core the image serves each chunk once it is decoded there, and the source's own read
// before (a count does not wait for the whole image): with the decoding held at chunk 0, the
// other chunks come from the image and chunk 0 from the source, all equal to the graph's.
TEST(InCoreImage, ServesDecodedChunksWithoutWaitingForTheRest) {
  const OrientedGraph g = orient_edge_list(3000, test::random_graph(3000, 30000, 23));
  auto src = memory_source(g, 700);
  const auto& chunks = src->chunks();
  ASSERT_GT(chunks.size(), 4u);
  GatedSource gated(*src);
  InCoreImage image(gated, 2);
  const auto image_src = stream::image_source(gated, image);
  // the decoder holds chunk 0 (waited for: should this thread read chunk 0 first, the gate would
  // hold it instead); the others become ready (the last first)
  gated.wait_held();
  for (std::size_t k = 1; k < chunks.size(); ++k)
    for (int t = 0; t < 10000 && !image.chunk_ready(k); ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (std::size_t k = 1; k < chunks.size(); ++k) EXPECT_TRUE(image.chunk_ready(k)) << k;
  EXPECT_FALSE(image.chunk_ready(0));
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    std::vector<vid_t> got(chunks[k].edges);
    image_src->read_chunk(k, got.data());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), g.csr.cols.begin() + chunks[k].first_edge))
        << "chunk " << k;
  }
  gated.open();
  image.wait();
  EXPECT_TRUE(image.chunk_ready(0));
}

// Pair's row parts are views of the image as soon as it holds their rows, each part's columns
// registered then: with the image's decoding held at chunk 0 (row part 0's rows), units of the
// other row parts are counted before the image is whole, every block uploaded from registered
// memory (the host slots, a fallback, are not pinned and carry nothing), and the count is exact
// once it is. (Should the pipeline wait for the whole image, a timer opens the gate after 10 s
// and the test fails.)
TEST(InCoreImage, PairUnitsStartBeforeTheImageIsWhole) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 53));
  auto src = memory_source(g, 97);
  GatedSource gated(*src);
  FakeBackend dd;  // (before the image, which unregisters itself from it)
  auto image = std::make_shared<InCoreImage>(gated, 2);
  const auto from_image = stream::image_source(gated, *image);
  std::atomic<int> early{0};
  std::atomic<bool> done{false};
  dd.on_count = [&] {
    if (!image->chunk_ready(0)) ++early;
    gated.open();
  };
  std::thread timer([&] {
    for (int t = 0; t < 1000 && !done; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gated.open();
  });
  gated.wait_held();  // (the decoder, not the census, holds chunk 0)
  PipelineOptions o = popts(Scheme::Pair, 5, true);
  o.in_core_image = image;
  const CountReport r = count_with_backend(*from_image, o, dd);
  done = true;
  timer.join();
  ASSERT_EQ(r.plan.partition.scheme, Scheme::Pair);
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
  EXPECT_GE(early.load(), 1) << "no unit was counted before the image was whole";
  EXPECT_EQ(dd.unregistered_sources, 0u) << "a unit uploaded a part not registered yet";
  EXPECT_GT(dd.direct_copies, 0u);
  EXPECT_EQ(dd.host_slot_bytes, 0u);
  EXPECT_FALSE(dd.host_slots_pinned);
  EXPECT_EQ(dd.image_mismatches, 0u);
}

// Units wait for their row parts' registration (view_copy_bytes_per_s = 0), or upload the parts
// not registered yet from pageable memory (infinity): with the decoding held at chunk 0 for
// 0.3 s, nothing goes through a host slot, the parts' registrations cover the blocks (waiting:
// every block uploaded from registered memory), and the count is exact.
TEST(InCoreImage, PairUnitsWaitForTheirRowPartsRegistration) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(3000, 30000, 59));
  auto src = memory_source(g, 97);
  for (const auto& [p, rate] : std::vector<std::pair<std::uint32_t, double>>{
           {3, 0.0}, {6, 0.0}, {6, std::numeric_limits<double>::infinity()}}) {
    SCOPED_TRACE(std::to_string(p) + " " + std::to_string(rate));
    GatedSource gated(*src);
    FakeBackend dd;  // (before the image, which unregisters itself from it)
    auto image = std::make_shared<InCoreImage>(gated, 2);
    const auto from_image = stream::image_source(gated, *image);
    gated.wait_held();  // (the decoder, not the census, holds chunk 0)
    std::thread timer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      gated.open();
    });
    PipelineOptions o = popts(Scheme::Pair, p, true);
    o.in_core_image = image;
    o.view_copy_bytes_per_s = rate;
    const CountReport r = count_with_backend(*from_image, o, dd);
    timer.join();
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    EXPECT_FALSE(image->registered()) << "registered whole, not by row parts";
    EXPECT_GE(dd.registered.load(), 3u);  // (the arena and the parts' columns)
    EXPECT_EQ(dd.host_slot_bytes, 0u);
    EXPECT_GT(dd.direct_copies + dd.unregistered_sources, 0u);
    if (rate == 0) {
      EXPECT_EQ(dd.unregistered_sources, 0u);
    }
    EXPECT_EQ(dd.image_mismatches, 0u);
  }
}

// An image that is not registered is streamed in row pieces where the backend counts them:
// every count reads bytes already on the device, the counts cover every row once, the totals and
// per-vertex counts are exact, nothing is registered, for several chunk sizes.
TEST(InCoreImage, StreamedInRowPiecesEachCountedOnceItsBytesArrived) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 41));
  for (std::uint64_t chunk : {7u, 97u, 5000u}) {
    auto src = memory_source(g, chunk);
    for (bool per_vertex : {false, true}) {
      SCOPED_TRACE(std::to_string(chunk) + (per_vertex ? " per vertex" : " count"));
      FakeBackend dd;
      dd.row_pieces = true;
      PipelineOptions o = popts(Scheme::Auto, 0, per_vertex);
      o.in_core_image = std::make_shared<InCoreImage>(*src, 2);
      o.row_pieces_from = 0;
      const CountReport r = count_with_backend(*src, o, dd);
      ASSERT_EQ(r.plan.partition.p, 1u);
      EXPECT_EQ(r.triangles, oracle);
      if (per_vertex) {
        EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
      }
      EXPECT_GE(dd.row_counts, 2u);
      EXPECT_LE(dd.row_counts, stream::kRowCounts + 1);  // (the fake is never busy)
      EXPECT_EQ(dd.counted_rows, g.n());
      EXPECT_EQ(dd.premature_rows, 0u);
      EXPECT_EQ(dd.registered, 0u);
      EXPECT_EQ(dd.streamed_allocations, 1u);
      EXPECT_EQ(r.stats.kernel.spans, dd.row_counts);  // a kernel span per count
    }
  }
}

// Rows are counted only while the device is not busy with earlier counts: always busy, the
// rows are counted once, at the end; busy every other time, in fewer counts than never busy.
TEST(InCoreImage, RowPiecesWaitForTheDeviceToFinishEarlierCounts) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 61));
  auto src = memory_source(g, 7);
  std::uint64_t counts[3] = {0, 0, 0};
  for (int busy = 0; busy < 3; ++busy) {  // never, every other time, always
    SCOPED_TRACE(busy);
    FakeBackend dd;
    dd.row_pieces = true;
    std::uint64_t asked = 0;
    dd.rows_busy_answer = [&] { return busy == 2 || (busy == 1 && ++asked % 2 == 0); };
    PipelineOptions o = popts(Scheme::Auto, 0, true);
    o.in_core_image = std::make_shared<InCoreImage>(*src, 2);
    o.row_pieces_from = 0;
    const CountReport r = count_with_backend(*src, o, dd);
    EXPECT_EQ(r.triangles, oracle);
    EXPECT_EQ(per_vertex_mismatches(r.per_vertex, new_of_old, oracle_pv), 0u);
    EXPECT_EQ(dd.counted_rows, g.n());
    EXPECT_EQ(dd.premature_rows, 0u);
    counts[busy] = dd.row_counts;
  }
  EXPECT_EQ(counts[2], 1u);
  EXPECT_LT(counts[1], counts[0]);
  EXPECT_GT(counts[1], 1u);
}

// Below row_pieces_from, or where the backend counts no row pieces, the image is registered by
// the pipeline and uploaded whole.
TEST(InCoreImage, RegisteredWholeWithoutRowPieces) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 43));
  auto src = memory_source(g, 97);
  for (bool backend_counts_pieces : {false, true}) {
    SCOPED_TRACE(backend_counts_pieces ? "image below the size" : "backend without pieces");
    FakeBackend dd;
    dd.row_pieces = backend_counts_pieces;
    PipelineOptions o = popts(Scheme::Auto, 0, false);
    o.in_core_image = std::make_shared<InCoreImage>(*src, 2);
    o.row_pieces_from = backend_counts_pieces ? ~0ull : 0;
    EXPECT_EQ(count_with_backend(*src, o, dd).triangles, oracle);
    EXPECT_EQ(dd.row_counts, 0u);
    EXPECT_EQ(dd.registered, 1u);
    EXPECT_EQ(dd.direct_copies, 1u);
    EXPECT_EQ(dd.unregistered_sources, 0u);
  }
}

// The counts of the last rows run while the image still decodes its first chunk: with the
// decoder held at chunk 0 until a row count has run, the count completes and is exact.
TEST(InCoreImage, RowPiecesCountTheLastRowsBeforeTheFirstAreDecoded) {
  const test::EdgeList e = test::random_graph(3000, 30000, 47);
  const OrientedGraph g = orient_edge_list(3000, e);
  const count_t oracle = test::brute_force_triangles(3000, e);
  auto src = memory_source(g, 700);
  GatedSource gated(*src);
  FakeBackend dd;
  dd.row_pieces = true;
  std::uint64_t counts_before_open = 0;
  bool opened = false;
  dd.on_piece = [&] {
    if (!opened && dd.row_counts > 0) {
      counts_before_open = dd.row_counts;
      opened = true;
      gated.open();
    }
  };
  // (a watchdog: a pipeline that waited for the whole image first would hang)
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    for (int t = 0; t < 20000 && !done; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gated.open();
  });
  PipelineOptions o = popts(Scheme::Auto, 0, false);
  o.in_core_image = std::make_shared<InCoreImage>(gated, 2);
  o.row_pieces_from = 0;
  const CountReport r = count_with_backend(gated, o, dd);
  done = true;
  watchdog.join();
  EXPECT_EQ(r.triangles, oracle);
  EXPECT_TRUE(opened);
  EXPECT_GE(counts_before_open, 1u);
  EXPECT_EQ(dd.premature_rows, 0u);
}

// A chunk that fails to decode fails the streamed count with the chunk's error.
TEST(InCoreImage, RowPiecesReportAFailingChunk) {
  const OrientedGraph g = orient_edge_list(800, test::random_graph(800, 8000, 53));
  auto src = memory_source(g, 500);
  test::FailingSource bad(*src, 2);
  FakeBackend dd;
  dd.row_pieces = true;
  PipelineOptions o = popts(Scheme::Auto, 0, false);
  o.in_core_image = std::make_shared<InCoreImage>(bad, 2);
  o.row_pieces_from = 0;
  try {
    count_with_backend(bad, o, dd);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("chunk 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dd.premature_rows, 0u);
}

// Out of core with pair's views, a chunk the image cannot decode fails the count with the
// source's Error(Input) naming it, whether the units copy early or wait for the registration.
TEST(InCoreImage, PairViewsReportAFailingChunk) {
  const OrientedGraph g = orient_edge_list(3000, test::random_graph(3000, 30000, 67));
  auto src = memory_source(g, 97);
  for (const double rate : {0.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(rate);
    test::FailingSource bad(*src, 3);
    FakeBackend dd;  // (before the image, which unregisters itself from it)
    auto image = std::make_shared<InCoreImage>(bad, 2);
    const auto from_image = stream::image_source(bad, *image);
    PipelineOptions o = popts(Scheme::Pair, 4, false);
    o.in_core_image = image;
    o.view_copy_bytes_per_s = rate;
    try {
      count_with_backend(*from_image, o, dd);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find("chunk 3"), std::string::npos) << e.what();
    }
  }
}

// Columns registered in pieces (out of core, pair's row parts as they come): each call registers
// the whole pages of its columns that no earlier call did, in one registration, so the
// registrations are page-aligned, disjoint and cover every range asked for; register_with then
// registers what is left, and the destructor unregisters every piece.
TEST(InCoreImage, RegistersColumnsInDisjointPieces) {
  const OrientedGraph g = orient_edge_list(20000, test::random_graph(20000, 300000, 23));
  auto src = memory_source(g, 4096);
  struct Recorder final : HostRegistrar {
    std::map<std::uintptr_t, std::uint64_t> live;
    bool register_host(void* p, std::uint64_t bytes) override {
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      EXPECT_EQ(a % 4096 + bytes % 4096, 0u);
      EXPECT_GT(bytes, 0u);
      auto it = live.upper_bound(a);
      EXPECT_TRUE(it == live.end() || a + bytes <= it->first) << "overlaps the next";
      EXPECT_TRUE(it == live.begin() || std::prev(it)->first + std::prev(it)->second <= a)
          << "overlaps the previous";
      live.emplace(a, bytes);
      return true;
    }
    void unregister_host(void* p) noexcept override {
      live.erase(reinterpret_cast<std::uintptr_t>(p));
    }
    bool covers(const void* p, std::uint64_t bytes) const {  // by adjacent registrations
      const auto lo = reinterpret_cast<std::uintptr_t>(p);
      auto it = live.upper_bound(lo);
      if (it == live.begin()) return false;
      --it;
      std::uintptr_t end = it->first + it->second;
      for (++it; end < lo + bytes && it != live.end() && it->first == end; ++it) end += it->second;
      return lo + bytes <= end;
    }
  } rec;
  {
    InCoreImage image(*src, 2);
    image.wait();
    const eid_t m = g.m();
    std::mt19937_64 rng(5);
    for (int x = 0; x < 40; ++x) {
      eid_t e0 = rng() % m, e1 = rng() % m;
      if (e0 > e1) std::swap(e0, e1);
      ASSERT_TRUE(image.register_columns(rec, e0, e1));
      if (e1 > e0) {
        EXPECT_TRUE(rec.covers(image.columns() + e0, (e1 - e0) * sizeof(vid_t))) << e0 << " " << e1;
      }
    }
    EXPECT_GT(rec.live.size(), 1u);
    EXPECT_FALSE(image.registered());
    ASSERT_TRUE(image.register_with(rec));
    EXPECT_TRUE(image.registered());
    EXPECT_TRUE(rec.covers(image.data(), image.bytes()));
    EXPECT_TRUE(image.register_columns(rec, 0, m));  // (nothing left)
  }
  EXPECT_TRUE(rec.live.empty()) << "pieces left registered";
}

TEST(InCoreImage, DroppedWhileDecodingStopsCleanly) {
  const OrientedGraph g = orient_edge_list(20000, test::random_graph(20000, 400000, 17));
  auto src = memory_source(g, 64);  // many chunks
  for (int x = 0; x < 5; ++x) {
    InCoreImage image(*src, 2);  // destroyed at once, usually mid-decoding
  }
  FakeBackend dd;  // outlives the image, which unregisters itself
  InCoreImage image(*src, 2);
  ASSERT_TRUE(image.register_with(dd));
  EXPECT_EQ(dd.registered, 1u);
}

// A source that counts the reads of chunks in flight at once (each read takes a few
// milliseconds, so that lanes allowed to decode overlap whatever the machine's cores).
class ConcurrencySource final : public test::ForwardingSource {
 public:
  explicit ConcurrencySource(const GraphSource& g) : ForwardingSource(g) {}
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    const unsigned now = ++flying_;
    unsigned seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    g_.read_chunk(k, out);
    --flying_;
    ++reads_;
  }
  unsigned most() const { return most_.load(); }
  unsigned reads() const { return reads_.load(); }
  void reset_most() { most_.store(0); }

 private:
  mutable std::atomic<unsigned> flying_{0}, most_{0}, reads_{0};
};

// Started on one lane of four, the image reads one chunk at a time; after widen() up to four,
// and its bytes are the graph's either way.
TEST(InCoreImage, WidenLetsEveryLaneDecodeTheChunksLeft) {
  const OrientedGraph g = orient_edge_list(4000, test::random_graph(4000, 40000, 29));
  auto src = memory_source(g, 200);  // 200 chunks of about 3 ms each
  ConcurrencySource slow(*src);
  InCoreImage image(slow, 1, 4);
  EXPECT_EQ(image.decoding_threads(), 1u);
  while (slow.reads() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(slow.most(), 1u) << "the lanes beyond the first decoded before widen()";
  slow.reset_most();
  image.widen();
  EXPECT_EQ(image.decoding_threads(), 4u);
  image.wait();
  EXPECT_GE(slow.most(), 2u) << "widen() added no lane";
  EXPECT_LE(slow.most(), 4u);
  EXPECT_TRUE(std::equal(g.csr.offsets.begin(), g.csr.offsets.end(), image.offsets()));
  EXPECT_TRUE(std::equal(g.csr.cols.begin(), g.csr.cols.end(), image.columns()));
  image.widen();  // (after the end: nothing to do)
}

// Every chunk handed out is decoded by the lane that took it, however the lanes end: many lanes
// over many small chunks, widened at once, midway or never, twenty images each, every byte the
// graph's.
TEST(InCoreImage, EveryChunkIsDecodedWhateverTheLanes) {
  const OrientedGraph g = orient_edge_list(2000, test::random_graph(2000, 16000, 37));
  auto src = memory_source(g, 16);  // about a thousand chunks
  for (int when : {0, 1, 2}) {
    SCOPED_TRACE("widen " + std::string(when == 0 ? "at once" : when == 1 ? "midway" : "never"));
    for (int x = 0; x < 20; ++x) {
      InCoreImage image(*src, 2, 8);
      if (when == 0) image.widen();
      if (when == 1) {
        image.wait_edges(g.m() / 2, g.m());
        image.widen();
      }
      image.wait();
      ASSERT_TRUE(std::equal(g.csr.cols.begin(), g.csr.cols.end(), image.columns())) << x;
    }
  }
}

// Never widened, the waiting lanes end with the chunks (wait() returns), with a failing chunk
// (wait() rethrows it), and when the image is dropped while decoding.
TEST(InCoreImage, LanesLeftWaitingForWidenEndWithTheImage) {
  const OrientedGraph g = orient_edge_list(3000, test::random_graph(3000, 30000, 31));
  auto src = memory_source(g, 100);
  {
    InCoreImage image(*src, 1, 8);
    image.wait();
    EXPECT_TRUE(std::equal(g.csr.cols.begin(), g.csr.cols.end(), image.columns()));
  }
  {
    test::FailingSource bad(*src, 3);
    InCoreImage image(bad, 2, 6);
    EXPECT_THROW(image.wait(), Error);
  }
  for (int x = 0; x < 5; ++x) {
    InCoreImage image(*src, 1, 4);  // destroyed at once, usually mid-decoding
  }
}

}  // namespace
}  // namespace tristream::stream_test
