// stream/in_core_image.cpp — InCoreImage (stream/in_core_image.hpp).
#include "stream/in_core_image.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "stream/clock.hpp"
#include "stream/in_degrees.hpp"
#include "tristream/error.hpp"
#include "tristream/host_memory.hpp"

namespace tristream::stream {

namespace {
// Columns per task of add_in_degrees.
constexpr std::uint64_t kColumnsPerTask = std::uint64_t{1} << 22;
}  // namespace

InCoreImage::Room InCoreImage::room_for(std::uint64_t bytes, std::uint64_t room) {
  if (room == 0 || bytes > room / 2) return Room::TooLarge;
  return bytes > room / 4 ? Room::InCoreOnly : Room::Fits;
}

std::uint64_t InCoreImage::slot_bytes(std::uint64_t n, eid_t m) {
  return align_up((n + 1) * sizeof(eid_t)) + align_up(m * sizeof(vid_t));
}

InCoreImage::InCoreImage(const GraphSource& g, unsigned threads, unsigned most)
    : g_(g), threads_(resolve_threads(threads)), n_(g.n()), m_(g.m()) {
  most_ = std::max(most, threads_);
  active_.store(threads_);
  TS_CHECK(g.offsets()[0] == 0, "an in-core image needs offsets that start at 0");
  TS_CHECK(n_ < (std::uint64_t{1} << 32), "vertex ids are 32-bit");
  cols_at_ = align_up((n_ + 1) * sizeof(eid_t));
  bytes_ = slot_bytes(n_, m_);
  done_ = std::make_unique<std::atomic<bool>[]>(std::max<std::size_t>(g.chunks().size(), 1));
  for (std::size_t k = 0; k < g.chunks().size(); ++k) done_[k].store(false);
  mem_ = alloc_pinnable(bytes_, &reserved_);
  if (!mem_)
    throw Error(ErrorKind::Internal, "cannot allocate " + std::to_string(bytes_) +
                                         " bytes of host memory for the in-core image");
  worker_ = std::thread([this] {
    try {
      decode();
    } catch (...) {
      failure_ = std::current_exception();  // read after the join
    }
    {
      std::lock_guard<std::mutex> lock(progress_mu_);
      ended_ = true;
    }
    progress_.notify_all();
  });
}

InCoreImage::~InCoreImage() {
  stop_ = true;
  {
    std::lock_guard<std::mutex> lock(lanes_mu_);  // (the lanes waiting for widen() end)
  }
  lanes_cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!joined_ && worker_.joinable()) worker_.join();
    joined_ = true;
  }
  if (registrar_)
    for (const auto& [lo, hi] : pieces_) registrar_->unregister_host(mem_ + lo);
  std::free(mem_);
}

// 1. The rebased offsets (the file's start at 0) and the zero padding; 2. the chunks, each
// decompressed straight to its edges' place, on a pool of its own (most_ lanes, threads_ of them
// decoding until widen()).
void InCoreImage::decode() {
  const eid_t* off = g_.offsets();
  ThreadPool pool(most_);
  auto* o = reinterpret_cast<eid_t*>(mem_);
  pool.run(threads_, [&](std::size_t x) {  // (on the first threads_ lanes' share of the cores)
    const ChunkRange r = chunk_range(n_ + 1, threads_, x);
    std::memcpy(o + r.lo, off + r.lo, (r.hi - r.lo) * sizeof(eid_t));
  });
  const std::uint64_t off_end = (n_ + 1) * sizeof(eid_t);
  std::memset(mem_ + off_end, 0, cols_at_ - off_end);
  const std::uint64_t col_end = cols_at_ + m_ * sizeof(vid_t);
  std::memset(mem_ + col_end, 0, reserved_ - col_end);
  offsets_done_.store(true, std::memory_order_release);
  notify();
  pool.run(most_, [&](std::size_t lane) { decode_lane(lane); });
  throw_if_interrupted();
  if (!stop_) whole_.store(true, std::memory_order_release);
}

void InCoreImage::decode_lane(std::size_t lane) {
  auto end_lanes = [&](bool failed) {
    {
      std::lock_guard<std::mutex> lock(lanes_mu_);
      if (failed) lanes_failed_.store(true, std::memory_order_release);
      lanes_done_.store(true, std::memory_order_release);
    }
    lanes_cv_.notify_all();
  };
  // 1. Wait for widen() beyond the first threads_ lanes (or for the end: no chunk left, a
  //    lane's failure, the destructor).
  if (lane >= active_.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> lock(lanes_mu_);
    lanes_cv_.wait(lock, [&] {
      return lane < active_.load(std::memory_order_acquire) ||
             lanes_done_.load(std::memory_order_acquire) || stop_;
    });
  }
  // 2. Decode the chunks handed out, the last first (chunk_ready), until none is left (each
  //    chunk handed out is decoded by the lane that took it, unless the decoding stops or
  //    fails: the image is then never whole).
  auto* cols = reinterpret_cast<vid_t*>(mem_ + cols_at_);
  const auto& chunks = g_.chunks();
  try {
    for (;;) {
      const std::size_t x = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (x >= chunks.size()) break;
      if (stop_ || interrupt_requested() || lanes_failed_.load(std::memory_order_acquire)) continue;
      const std::size_t k = chunks.size() - 1 - x;
      const auto& c = chunks[k];
      TS_CHECK(c.first_edge + c.edges <= m_, "a chunk beyond the graph's edges");
      g_.read_chunk(k, cols + c.first_edge);
      done_[k].store(true, std::memory_order_release);
      notify();
    }
  } catch (...) {
    end_lanes(true);
    throw;
  }
  end_lanes(false);
}

void InCoreImage::widen() {
  {
    std::lock_guard<std::mutex> lock(lanes_mu_);
    active_.store(most_, std::memory_order_release);
  }
  lanes_cv_.notify_all();
}

void InCoreImage::wait() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!joined_) {
    worker_.join();
    joined_ = true;
  }
  if (failure_) std::rethrow_exception(failure_);
  if (stop_) throw Error(ErrorKind::Internal, "the in-core image was stopped");
}

void InCoreImage::notify() {
  { std::lock_guard<std::mutex> lock(progress_mu_); }  // (a waiter between its test and its wait)
  progress_.notify_all();
}

template <class Ready>
bool InCoreImage::wait_for(Ready ready) {
  std::unique_lock<std::mutex> lock(progress_mu_);
  progress_.wait(lock, [&] { return ended_ || ready(); });
  return ready();
}

bool InCoreImage::wait_offsets() {
  return wait_for([&] { return offsets_done_.load(std::memory_order_acquire); });
}

bool InCoreImage::wait_edges(eid_t e0, eid_t e1) {
  const auto& chunks = g_.chunks();
  e1 = std::min<eid_t>(e1, m_);
  if (e0 >= e1) return true;
  // the chunks holding edges [e0, e1): from the last one starting at or below e0
  auto k0 = std::upper_bound(chunks.begin(), chunks.end(), e0,
                             [](eid_t e, const tcsr::ChunkInfo& c) { return e < c.first_edge; });
  const std::size_t first = static_cast<std::size_t>(k0 - chunks.begin()) - (k0 != chunks.begin());
  return wait_for([&] {
    if (whole_.load(std::memory_order_acquire)) return true;
    for (std::size_t k = first; k < chunks.size() && chunks[k].first_edge < e1; ++k)
      if (!done_[k].load(std::memory_order_acquire)) return false;
    return true;
  });
}

bool InCoreImage::register_with(HostRegistrar& registrar) {
  wait();
  std::lock_guard<std::mutex> lock(register_mu_);
  if (register_tried_) return registered();
  register_tried_ = true;
  if (!register_bytes_locked(registrar, 0, reserved_)) return false;
  registered_.store(true, std::memory_order_release);
  return true;
}

bool InCoreImage::register_columns(HostRegistrar& registrar, eid_t e0, eid_t e1) {
  if (e1 <= e0) return true;
  if (!wait_edges(e0, e1)) return false;
  std::lock_guard<std::mutex> lock(register_mu_);
  if (registered()) return true;
  return register_bytes_locked(registrar, cols_at_ + e0 * sizeof(vid_t),
                               cols_at_ + e1 * sizeof(vid_t));
}

bool InCoreImage::register_bytes_locked(HostRegistrar& registrar, std::uint64_t lo,
                                        std::uint64_t hi) {
  // 1. Whole pages (the image starts on a page and its reservation ends on one).
  constexpr std::uint64_t kPage = 4096;
  lo = lo / kPage * kPage;
  hi = std::min<std::uint64_t>(reserved_, (hi + kPage - 1) / kPage * kPage);
  if (registrar_ && registrar_ != &registrar) return false;  // (one registrar per image)
  // 2. Each gap between the registrations in [lo, hi), registered on its own.
  std::uint64_t at = lo;
  auto it = pieces_.upper_bound(lo);
  if (it != pieces_.begin() && std::prev(it)->second > lo) at = std::prev(it)->second;
  while (at < hi) {
    const std::uint64_t end = it == pieces_.end() ? hi : std::min(hi, it->first);
    if (end > at) {
      if (!registrar.register_host(mem_ + at, end - at)) return false;
      registrar_ = &registrar;
      pieces_.emplace(at, end);
    }
    if (it == pieces_.end()) break;
    at = it->second;
    ++it;
  }
  return true;
}

void InCoreImage::add_in_degrees(std::uint32_t* d, unsigned threads) const {
  const vid_t* cols = columns();
  const std::uint64_t tasks =
      std::max<std::uint64_t>(1, (m_ + kColumnsPerTask - 1) / kColumnsPerTask);
  ThreadPool pool(resolve_threads(threads));
  const unsigned lanes = static_cast<unsigned>(std::min<std::uint64_t>(pool.threads(), tasks));
  InDegreeCounter<std::uint32_t> counter(d, n_, lanes);
  pool.for_each_item(tasks, [&](std::size_t t, unsigned lane) {
    if (interrupt_requested()) return;
    const eid_t e0 = t * kColumnsPerTask, e1 = std::min<eid_t>(m_, e0 + kColumnsPerTask);
    counter.add(lane, cols + e0, e1 - e0);
  });
  throw_if_interrupted();
  counter.merge();
}

namespace {

class ImageSource final : public GraphSource {
 public:
  ImageSource(const GraphSource& g, InCoreImage& image) : g_(g), image_(image) {}
  std::string name() const override { return g_.name(); }
  std::uint64_t n() const override { return g_.n(); }
  eid_t m() const override { return g_.m(); }
  const eid_t* offsets() const override { return g_.offsets(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return g_.chunks(); }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    const auto& c = g_.chunks().at(k);
    if (!image_.chunk_ready(k)) return g_.read_chunk(k, out);  // (not decoded yet)
    std::memcpy(out, image_.columns() + c.first_edge, c.edges * sizeof(vid_t));
  }
  const vid_t* resident_chunk(std::uint64_t k) const override {
    return image_.chunk_ready(k) ? image_.columns() + g_.chunks().at(k).first_edge : nullptr;
  }
  std::uint64_t compressed_bytes() const override { return g_.compressed_bytes(); }
  bool stored_census(std::vector<unsigned char>* out, std::size_t limit) const override {
    return g_.stored_census(out, limit);
  }

 private:
  const GraphSource& g_;
  InCoreImage& image_;
};

}  // namespace

std::unique_ptr<GraphSource> image_source(const GraphSource& g, InCoreImage& image) {
  TS_CHECK(g.n() == image.n() && g.m() == image.m(), "the image is not the source's graph");
  return std::make_unique<ImageSource>(g, image);
}

std::vector<eid_t> InCoreImage::degrees(unsigned threads) {
  wait();
  std::vector<std::uint32_t> in(n_, 0);
  add_in_degrees(in.data(), threads);
  std::vector<eid_t> d(n_);
  const eid_t* off = offsets();
  for (std::uint64_t u = 0; u < n_; ++u) d[u] = off[u + 1] - off[u] + in[u];
  return d;
}

WedgeSum InCoreImage::wedges(unsigned threads) {
  wait();
  std::vector<std::uint32_t> in(n_, 0);
  add_in_degrees(in.data(), threads);
  const eid_t* off = offsets();
  WedgeSum w;
  for (std::uint64_t u = 0; u < n_; ++u) w.add_degree(off[u + 1] - off[u] + in[u]);
  return w;
}

}  // namespace tristream::stream
