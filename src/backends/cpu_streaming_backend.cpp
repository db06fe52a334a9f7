// backends/cpu_streaming_backend.cpp — the CPU streaming backend: a worker thread around a
// Counter whose "device" memory is the host slots themselves (tristream/pipeline.hpp).
//
// count_async queues a slot for the worker; wait() returns its result or rethrows its failure.
// Packed blocks are expanded in the slot before the count, then cut blocks (SlotBlock::cut) cut
// from B there; a sliced unit counts C's window.
// Streamed staging copies each piece into the slot at once.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "common/thread_priority.hpp"
#include "stream/clock.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

namespace {

class CpuBackend final : public StreamingBackend {
 public:
  CpuBackend(std::unique_ptr<Counter> counter, int nice, bool idle_class)
      : counter_(std::move(counter)) {
    TS_CHECK(counter_ != nullptr, "the CPU streaming backend needs a counter");
    worker_ = std::thread([this, nice, idle_class] {
      ThreadStart::below_caller(nice, idle_class).apply();
      loop();
    });
  }
  ~CpuBackend() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  std::string name() const override { return "cpu"; }
  std::string describe() const override { return counter_->describe(); }
  bool device_is_host() const override { return true; }
  std::uint64_t free_device_bytes() override { return 0; }  // host memory: no device limit
  void set_clock_origin(double t) override { origin_ = t; }
  void allocate(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows) override {
    for (int s = 0; s < 2; ++s) {
      slot_[s].mem.clear();
      slot_[s].pv.clear();
    }
    for (int s = 0; s < slots; ++s) {
      slot_[s].mem.assign(slot_bytes / 8 + stream::kSlotAlign / 8 + 1);
      slot_[s].pv.assign(pv_rows, 0);
      slot_[s].pieces.clear();
    }
    slot_bytes_ = slot_bytes;
    staging_.clear();
    piece_bytes_ = 0;
  }
  unsigned char* host_slot(int s) override { return aligned(slot_[s].mem.words.get()); }
  // Streamed staging on the CPU: the slots stay in host memory (they are the "device"), so this
  // saves nothing; the pieces are copied into them synchronously, which runs the driver's
  // streamed path exactly as on CUDA.
  void allocate_streamed(int slots, std::uint64_t slot_bytes, std::uint64_t pv_rows, int buffers,
                         std::uint64_t piece_bytes) override {
    TS_CHECK(buffers >= 1 && piece_bytes > 0, "streamed staging needs buffers");
    allocate(slots, slot_bytes, pv_rows);
    staging_.assign(static_cast<std::size_t>(buffers), {});
    for (auto& b : staging_) b.assign(piece_bytes / 8 + stream::kSlotAlign / 8 + 1, 0);
    piece_bytes_ = piece_bytes;
  }
  unsigned char* staging_buffer(int b) override {
    return aligned(staging_.at(static_cast<std::size_t>(b)).data());
  }
  void wait_staging(int) override {}  // the copies are synchronous
  void upload_piece_async(int s, std::uint64_t at, int b, std::uint64_t bytes) override {
    TS_CHECK(bytes <= piece_bytes_ && at + bytes <= slot_bytes_,
             "a staging piece lies outside its slot");
    UploadPiece piece;
    piece.start = stream::now_s() - origin_;
    std::memcpy(host_slot(s) + at, staging_buffer(b), bytes);
    piece.end = stream::now_s() - origin_;
    piece.bytes = bytes;
    std::lock_guard<std::mutex> lk(mu_);
    slot_[s].pieces.push_back(piece);
  }
  void upload_async(int, const UnitLayout&) override {}  // the slot is the device memory
  void count_async(int s, const UnitLayout& L) override {
    std::lock_guard<std::mutex> lk(mu_);
    slot_[s].layout = L;
    slot_[s].pending = true;
    slot_[s].done = false;
    slot_[s].error = nullptr;
    queue_.push_back(s);
    cv_.notify_all();
  }
  SlotResult wait(int s) override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return !slot_[s].pending || slot_[s].done; });
    slot_[s].pending = false;
    if (slot_[s].error) std::rethrow_exception(slot_[s].error);
    SlotResult r = slot_[s].result;
    r.upload_pieces.swap(slot_[s].pieces);
    slot_[s].pieces.clear();
    return r;
  }
  void release() override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
    for (auto& sl : slot_) {
      sl.mem.clear();
      std::vector<count_t>().swap(sl.pv);
      sl.pieces.clear();
      sl.pending = false;
    }
    std::vector<std::vector<std::uint64_t>>().swap(staging_);
    slot_bytes_ = piece_bytes_ = 0;
  }

 private:
  // Slot memory, not zeroed: its pages are faulted in only where units write, so a worker that
  // counts a few small units (the CPU beside GPUs) does not touch whole slots.
  struct Memory {
    std::unique_ptr<std::uint64_t[]> words;
    void assign(std::size_t n) { words.reset(new std::uint64_t[n]); }
    void clear() { words.reset(); }
  };
  struct Slot {
    Memory mem;
    std::vector<count_t> pv;
    UnitLayout layout;
    bool pending = false, done = false;
    SlotResult result;
    std::exception_ptr error;
    std::vector<UploadPiece> pieces;  // streamed staging: this unit's copies so far
  };
  // The first stream::kSlotAlign-aligned byte of a buffer allocated with stream::kSlotAlign bytes
  // to spare.
  static unsigned char* aligned(std::uint64_t* buf) {
    auto* p = reinterpret_cast<unsigned char*>(buf);
    return reinterpret_cast<unsigned char*>(stream::align_up(reinterpret_cast<std::uintptr_t>(p)));
  }
  void loop() {
    for (;;) {
      int s;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (stop_ && queue_.empty()) return;
        s = queue_.front();
        queue_.pop_front();
        busy_ = true;
      }
      SlotResult r;
      std::exception_ptr err;
      try {
        run(s, r);
      } catch (...) {
        err = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        slot_[s].result = r;
        slot_[s].error = err;
        slot_[s].done = true;
        busy_ = false;
      }
      done_cv_.notify_all();
    }
  }
  void run(int s, SlotResult& r) {
    const UnitLayout& L = slot_[s].layout;
    unsigned char* base = host_slot(s);
    // Packed blocks: their images lie in the slot where the dense offsets go (or elsewhere in
    // host memory); copied aside, then expanded in place.
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      const SlotBlock& b = L.blocks[bi];
      if (!b.packed || !L.uploads(bi)) continue;
      const PackedRows& hp = L.host_packed[bi];
      TS_CHECK(hp.valid() && hp.count == b.packed_rows && hp.edges() == b.edges,
               "a packed block without its host image");
      std::vector<vid_t> ids(hp.ids, hp.ids + hp.count);
      std::vector<eid_t> offs(hp.offsets, hp.offsets + hp.count + 1);
      expand_packed(PackedRows{hp.count, ids.data(), offs.data()}, b.rows,
                    reinterpret_cast<eid_t*>(base + b.offsets_at));
    }
    auto view = [&](int bi) {
      const SlotBlock& b = L.blocks[bi];
      return CsrView{b.rows, reinterpret_cast<const eid_t*>(base + b.offsets_at),
                     reinterpret_cast<const vid_t*>(base + b.cols_at), b.col_space};
    };
    // A cut block from B's copy in the slot (dense by now).
    for (int bi = 0; bi < L.num_blocks; ++bi) {
      if (!L.cuts(bi)) continue;
      const SlotBlock& b = L.blocks[bi];
      const CsrView B = view(L.b);
      const eid_t got = cut_rows(HostRows{B.rows, B.offsets, {}, B.cols}, b.cut_lo, b.cut_hi,
                                 reinterpret_cast<eid_t*>(base + b.offsets_at),
                                 reinterpret_cast<vid_t*>(base + b.cols_at), b.edges);
      TS_CHECK(got == b.edges, "a cut block differs from the census");
    }
    PerVertexOut pv;
    count_t* spaces[3] = {nullptr, nullptr, nullptr};
    if (L.per_vertex) {
      std::uint64_t at = 0;
      for (int x = 0; x < L.num_spaces; ++x) {
        spaces[x] = slot_[s].pv.data() + at;
        std::fill(spaces[x], spaces[x] + L.space_rows[x], 0);
        at += L.space_rows[x];
      }
      TS_CHECK(at <= slot_[s].pv.size(), "per-vertex arrays larger than planned");
      pv = PerVertexOut{spaces[L.u_space], spaces[L.v_space], spaces[L.w_space]};
    }
    std::vector<eid_t> window;
    const CsrView C = counted_c(L, view(L.c), window);
    r.kernel_start = stream::now_s() - origin_;
    r.triangles = counter_->count(view(L.a), view(L.b), C, pv);
    r.kernel_end = stream::now_s() - origin_;
    for (int x = 0; x < 3; ++x) r.per_vertex[x] = spaces[x];
  }

  std::unique_ptr<Counter> counter_;
  Slot slot_[2];
  std::vector<std::vector<std::uint64_t>> staging_;  // streamed staging buffers
  std::uint64_t slot_bytes_ = 0, piece_bytes_ = 0;
  double origin_ = 0;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<int> queue_;
  bool stop_ = false, busy_ = false;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<StreamingBackend> make_cpu_streaming_backend(std::unique_ptr<Counter> counter,
                                                             const CpuBackendOptions& options) {
  if (!counter) counter = make_cpu_counter(options.counter);
  return std::make_unique<CpuBackend>(std::move(counter), options.counter.nice,
                                      options.counter.idle_class);
}

}  // namespace tristream
