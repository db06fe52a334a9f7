// cuda/edge_sorter.cu — the converter's EdgeSorter on a CUDA device (edge_sorter.hpp).
//
// Device memory: the appended keys (8 bytes each, one buffer sized at the start to half of the
// free memory less a reserve), a second buffer of as many keys for the sorts, the per-id array
// (degrees, then ranks, then row lengths: 4 bytes per id), the ranking's keys (16 bytes per id)
// and permutation (4), the row offsets (8 bytes per vertex) and the sorts' temporary storage. Steps
// (the contract's numbers):
//   3. radix sort of the keys (bits up to the largest id only), repeats removed by
//      DeviceSelect::Unique into the second buffer, degrees counted by atomic increments;
//   4. the ids sorted by (degree, id) for the ranks and the permutation, each unique key oriented
//      in place by the ranks, radix sorted again (bits up to the largest rank), the row offsets
//      from the places where the row changes, the row lengths from them, and the columns (the keys'
//      low halves) packed into the free buffer;
//   5. columns copied from there; the row tally (row_tally.cu) over the sorted keys and the row
//      lengths beside the copies, when the converter asks for it.
// The keys come and go through lanes: a stream and two pinned halves of 8 MiB each, one lane per
// host thread at a time (appends come from the converter's parse workers at once; a copy of
// columns runs on several threads), so that the copies run at the bus's speed while the host
// copies into and out of the other half.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "device.hpp"
#include "edge_sorter.hpp"
#include "grid.hpp"
#include "memory.hpp"
#include "row_tally.hpp"
#include "tristream/pipeline.hpp"  // (DeviceOutOfMemory)

namespace tristream::cuda {
namespace {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

// Free device memory left beside the keys' two buffers: the sorts' temporary storage, the
// per-id arrays up to what fits_ids allows, the CUDA libraries.
constexpr u64 kReserve = u64{1} << 30;

constexpr int kBlock = 256;

// A lane's half, and the least bytes a thread of a columns copy takes.
constexpr std::size_t kHalfBytes = std::size_t{8} << 20;
constexpr std::size_t kCopyPartBytes = std::size_t{64} << 20;
constexpr unsigned kCopyThreads = 16;

// A host thread's way to and from the device (one thread at a time): a stream and two pinned
// halves, each refilled only once its last copy has ended.
struct Lane {
  Stream stream;
  PinnedBuffer<unsigned char> half[2] = {PinnedBuffer<unsigned char>(kHalfBytes),
                                         PinnedBuffer<unsigned char>(kHalfBytes)};
  Event done[2] = {Event(false), Event(false)};
  bool used[2] = {false, false};
  int next = 0;

  // Host to device; returns with the copies in flight (src may be freed).
  void up(const void* src, void* dst, std::size_t bytes) {
    const auto* from = static_cast<const unsigned char*>(src);
    auto* to = static_cast<unsigned char*>(dst);
    for (std::size_t at = 0; at < bytes; at += kHalfBytes) {
      const std::size_t len = std::min(kHalfBytes, bytes - at);
      const int h = next;
      next ^= 1;
      if (used[h]) done[h].synchronize();
      std::memcpy(half[h].get(), from + at, len);
      TS_CUDA_CHECK(
          cudaMemcpyAsync(to + at, half[h].get(), len, cudaMemcpyHostToDevice, stream.get()));
      done[h].record(stream.get());
      used[h] = true;
    }
  }

  // Device to host, each half's copy out beside the next half's copy in; returns when done.
  void down(const void* src, void* dst, std::size_t bytes) {
    stream.synchronize();  // (the halves free)
    const auto* from = static_cast<const unsigned char*>(src);
    auto* to = static_cast<unsigned char*>(dst);
    int prev = -1;
    std::size_t prev_at = 0, prev_len = 0;
    for (std::size_t at = 0; at < bytes; at += kHalfBytes) {
      const std::size_t len = std::min(kHalfBytes, bytes - at);
      const int h = next;
      next ^= 1;
      TS_CUDA_CHECK(
          cudaMemcpyAsync(half[h].get(), from + at, len, cudaMemcpyDeviceToHost, stream.get()));
      done[h].record(stream.get());
      used[h] = true;
      if (prev >= 0) {
        done[prev].synchronize();
        std::memcpy(to + prev_at, half[prev].get(), prev_len);
      }
      prev = h;
      prev_at = at;
      prev_len = len;
    }
    if (prev >= 0) {
      done[prev].synchronize();
      std::memcpy(to + prev_at, half[prev].get(), prev_len);
    }
  }
};

int grid_for(u64 items) {
  return stride_grid(items, kBlock);
}

int bit_width(u64 x) {
  int b = 0;
  while (x) {
    ++b;
    x >>= 1;
  }
  return b;
}

__global__ void count_degrees(const u64* keys, u64 m, u32* degree) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < m;
       i += u64{gridDim.x} * blockDim.x) {
    const u64 k = keys[i];
    atomicAdd(&degree[k >> 32], 1u);
    atomicAdd(&degree[k & 0xffffffffu], 1u);
  }
}

__global__ void rank_keys(const u32* degree, u64 space, u64* keys) {
  for (u64 v = blockIdx.x * u64{blockDim.x} + threadIdx.x; v < space;
       v += u64{gridDim.x} * blockDim.x)
    keys[v] = u64{degree[v]} << 32 | v;
}

// The ids sorted by (degree, id), the `zeros` of degree 0 first: rank and perm of the others.
__global__ void place_ranks(const u64* sorted, u64 space, u64 zeros, u32* rank, u32* perm) {
  for (u64 p = zeros + blockIdx.x * u64{blockDim.x} + threadIdx.x; p < space;
       p += u64{gridDim.x} * blockDim.x) {
    const u32 v = static_cast<u32>(sorted[p]);
    rank[v] = static_cast<u32>(p - zeros);
    perm[p - zeros] = v;
  }
}

__global__ void orient_keys(u64* keys, u64 m, const u32* rank) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < m;
       i += u64{gridDim.x} * blockDim.x) {
    const u64 k = keys[i];
    const u64 a = rank[k >> 32], b = rank[k & 0xffffffffu];
    keys[i] = a < b ? (a << 32 | b) : (b << 32 | a);
  }
}

// offsets[r] (r <= n) = the first i whose row is r or more: written for the rows between the
// rows of keys i - 1 and i (i = 0: from row 0; i = m: up to row n).
__global__ void row_offsets(const u64* keys, u64 m, u64 n, u64* offsets) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i <= m;
       i += u64{gridDim.x} * blockDim.x) {
    const u64 from = i == 0 ? 0 : (keys[i - 1] >> 32) + 1;
    const u64 to = i == m ? n : keys[i] >> 32;
    for (u64 r = from; r <= to; ++r) offsets[r] = i;
  }
}

__global__ void row_lengths(const u64* offsets, u64 n, u32* length) {
  for (u64 r = blockIdx.x * u64{blockDim.x} + threadIdx.x; r < n; r += u64{gridDim.x} * blockDim.x)
    length[r] = static_cast<u32>(offsets[r + 1] - offsets[r]);
}

__global__ void low_halves(const u64* keys, u64 m, u32* cols) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < m; i += u64{gridDim.x} * blockDim.x)
    cols[i] = static_cast<u32>(keys[i]);
}

class CudaEdgeSorter final : public EdgeSorter {
 public:
  CudaEdgeSorter(int ordinal, bool owns_device) : ordinal_(ordinal), owns_device_(owns_device) {
    name_ = "CUDA device " + std::to_string(ordinal);
    starter_ = std::async(std::launch::async, [this] {
      try {
        start();
      } catch (...) {
        started_.store(true, std::memory_order_release);
        throw;
      }
      started_.store(true, std::memory_order_release);
    });
  }
  ~CudaEdgeSorter() override {
    if (starter_.valid()) starter_.wait();
    if (!reset_ && cuda_ok(cudaSetDevice(ordinal_))) TS_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
  }

  std::string name() const override { return name_; }

  bool ready() const override { return started_.load(std::memory_order_acquire); }

  bool append(const u64* keys, std::size_t count) override {
    if (!use()) return false;
    // 1. A place among the keys, then a lane; the copy outside the lock.
    u64 at = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || size_ + count > capacity_) return false;
      at = size_;
      size_ += count;
      ++in_flight_;
    }
    Lane* lane = nullptr;
    std::exception_ptr error;
    try {
      lane = acquire();
      lane->up(keys, keys_.get() + at, count * 8);
    } catch (...) {
      error = std::current_exception();
    }
    // 2. The lane back; close() waits for the last append.
    std::lock_guard<std::mutex> lock(mu_);
    if (lane) free_.push_back(lane);
    --in_flight_;
    ended_.notify_all();
    if (error) std::rethrow_exception(error);
    return true;
  }

  void close() override {
    std::unique_lock<std::mutex> lock(mu_);
    closed_ = true;
    ended_.wait(lock, [this] { return in_flight_ == 0; });
    lock.unlock();
    if (use()) TS_CUDA_CHECK(cudaDeviceSynchronize());  // (the lanes' copies)
  }

  u64 size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return size_;
  }

  void take_back(u64 first, std::size_t count, u64* out) override {
    TS_CHECK(closed_ && first + count <= size_, "keys taken back before close or past them");
    if (!count || !use()) return;
    Lane* lane = acquire();
    lane->down(keys_.get() + first, out, count * 8);
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(lane);
  }

  bool fits_ids(u64 space) const override {
    if (!ready_ok_) return false;
    std::size_t free = 0, total = 0;
    if (!cuda_ok(cudaSetDevice(ordinal_)) || !cuda_ok(cudaMemGetInfo(&free, &total))) return false;
    // the second buffer, the per-id array, the ranking's two buffers, the permutation and the
    // offsets, with the reserve for the rest
    return size_ * 8 + space * 36 + 8 + kReserve / 2 <= free;
  }

  u64 unique_and_degrees(u64 space, u32* degree) override {
    TS_CHECK(closed_ && use(), "unique_and_degrees before close, or the device not ready");
    // 1. Sorted (the bits of ids below `space`), repeats removed into the second buffer.
    other_.allocate(std::max<u64>(size_, 1));
    cub::DoubleBuffer<u64> db(keys_.get(), other_.get());
    const int end_bit = std::max(1, 32 + bit_width(space ? space - 1 : 0));
    sort(db, size_, end_bit);
    DeviceBuffer<std::int64_t> d_m(1);
    std::size_t bytes = 0;
    TS_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, bytes, db.Current(), db.Alternate(), d_m.get(),
                                            static_cast<std::int64_t>(size_)));
    reserve_temp(bytes);
    TS_CUDA_CHECK(cub::DeviceSelect::Unique(temp_.get(), bytes, db.Current(), db.Alternate(),
                                            d_m.get(), static_cast<std::int64_t>(size_)));
    std::int64_t m = 0;
    TS_CUDA_CHECK(cudaMemcpy(&m, d_m.get(), sizeof m, cudaMemcpyDeviceToHost));
    m_ = static_cast<u64>(m);
    unique_ = db.Alternate();
    spare_ = db.Current();
    // 2. The degrees.
    ids_.allocate(std::max<u64>(space, 1));
    TS_CUDA_CHECK(cudaMemset(ids_.get(), 0, space * 4));
    if (m_) {
      count_degrees<<<grid_for(m_), kBlock>>>(unique_, m_, ids_.get());
      TS_CUDA_CHECK_LAUNCH();
    }
    TS_CUDA_CHECK(cudaMemcpy(degree, ids_.get(), space * 4, cudaMemcpyDeviceToHost));
    return m_;
  }

  void rank_and_sort_rows(u64 space, u64 n, u32* perm, u32* row_length) override {
    TS_CHECK(unique_ && space <= ids_.size() && n <= space,
             "rank_and_sort_rows before unique_and_degrees");
    // 1. The ids sorted by (degree, id) (degree below `space`), those of degree 0 first; the
    //    others' ranks over their degrees (which are read no more), their ids to perm.
    {
      DeviceBuffer<u64> a(std::max<u64>(space, 1)), b(std::max<u64>(space, 1));
      DeviceBuffer<u32> d_perm(std::max<u64>(n, 1));
      rank_keys<<<grid_for(space), kBlock>>>(ids_.get(), space, a.get());
      TS_CUDA_CHECK_LAUNCH();
      cub::DoubleBuffer<u64> ranked(a.get(), b.get());
      sort(ranked, space, 32 + bit_width(space));
      if (n) {
        place_ranks<<<grid_for(n), kBlock>>>(ranked.Current(), space, space - n, ids_.get(),
                                             d_perm.get());
        TS_CUDA_CHECK_LAUNCH();
        TS_CUDA_CHECK(cudaMemcpy(perm, d_perm.get(), n * 4, cudaMemcpyDeviceToHost));
      }
    }
    // 2. Oriented in place by the ranks, then sorted (the bits of ranks below n).
    if (m_) {
      orient_keys<<<grid_for(m_), kBlock>>>(unique_, m_, ids_.get());
      TS_CUDA_CHECK_LAUNCH();
    }
    n_ = n;
    cub::DoubleBuffer<u64> db(unique_, spare_);
    sort(db, m_, std::max(1, 32 + bit_width(n ? n - 1 : 0)));
    unique_ = db.Current();
    spare_ = db.Alternate();
    // 3. The row offsets and lengths; the columns packed into the spare buffer.
    DeviceBuffer<u64> offsets(n + 1);
    row_offsets<<<grid_for(m_ + 1), kBlock>>>(unique_, m_, n, offsets.get());
    TS_CUDA_CHECK_LAUNCH();
    if (n) {
      row_lengths<<<grid_for(n), kBlock>>>(offsets.get(), n, ids_.get());
      TS_CUDA_CHECK_LAUNCH();
      TS_CUDA_CHECK(cudaMemcpy(row_length, ids_.get(), n * 4, cudaMemcpyDeviceToHost));
    }
    if (m_) {
      low_halves<<<grid_for(m_), kBlock>>>(unique_, m_, reinterpret_cast<u32*>(spare_));
      TS_CUDA_CHECK_LAUNCH();
    }
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    cols_ = reinterpret_cast<const u32*>(spare_);
  }

  bool start_tally(const RowTallySpec& spec) override {
    TS_CHECK(cols_ && !tally_, "start_tally before rank_and_sort_rows, or twice");
    TS_CUDA_CHECK(cudaSetDevice(ordinal_));
    try {
      tally_ = std::make_unique<DeviceRowTally>(spec, n_, unique_, m_, ids_.get());
    } catch (const DeviceOutOfMemory&) {
      tally_.reset();  // (the tally's memory did not fit: the host takes it)
      return false;
    }
    return true;
  }

  RowTallySums finish_tally() override {
    TS_CHECK(tally_ != nullptr, "finish_tally without start_tally");
    TS_CUDA_CHECK(cudaSetDevice(ordinal_));
    RowTallySums sums = tally_->finish();
    tally_.reset();
    return sums;
  }

  void release() noexcept override {
    if (!ready_ok_ || !cuda_ok(cudaSetDevice(ordinal_))) return;
    TS_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    tally_.reset();
    std::lock_guard<std::mutex> lock(mu_);
    free_.clear();
    lanes_.clear();
    temp_.release();
    ids_.release();
    other_.release();
    keys_.release();
    unique_ = spare_ = nullptr;
    cols_ = nullptr;
    closed_ = true;
    // (a device this process uses for nothing else: its context's teardown here, beside the
    // converter's writer, instead of at the process's exit)
    if (owns_device_) {
      TS_CUDA_CHECK_NOTHROW(cudaDeviceReset());
      reset_ = true;
    }
  }

  void columns(u64 first, u64 count, u32* out) override {
    TS_CHECK(cols_ && first + count <= m_, "columns past the sorted rows");
    if (!count) return;
    // In parts of at least kCopyPartBytes on up to kCopyThreads threads (this one the first),
    // each through a lane of its own.
    const u64 bytes = count * 4;
    const unsigned parts =
        static_cast<unsigned>(std::clamp<u64>(bytes / kCopyPartBytes, 1, kCopyThreads));
    const u64 per = (count + parts - 1) / parts;
    auto part = [&](unsigned p) {
      const u64 lo = std::min(count, p * per), hi = std::min(count, lo + per);
      if (lo == hi) return;
      TS_CUDA_CHECK(cudaSetDevice(ordinal_));
      Lane* lane = acquire();
      lane->down(cols_ + first + lo, out + lo, (hi - lo) * 4);
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(lane);
    };
    std::vector<std::future<void>> rest;
    for (unsigned p = 1; p < parts; ++p) rest.push_back(std::async(std::launch::async, part, p));
    std::exception_ptr error;
    try {
      TS_CUDA_CHECK(cudaSetDevice(ordinal_));
      part(0);
    } catch (...) {
      error = std::current_exception();
    }
    for (auto& f : rest) {
      try {
        f.get();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // The context and the keys' buffer (on the starter's thread).
  void start() {
    TS_CUDA_CHECK(cudaSetDevice(ordinal_));
    cudaDeviceProp p{};
    TS_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal_));
    name_ += ", " + std::string(p.name);
    std::size_t free = 0, total = 0;
    TS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    capacity_ = free > kReserve ? (free - kReserve) / 16 : 0;
    keys_.allocate(std::max<u64>(capacity_, 1));
  }

  // A free lane, or a new one (the device current on this thread).
  Lane* acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        Lane* l = free_.back();
        free_.pop_back();
        return l;
      }
    }
    auto l = std::make_unique<Lane>();
    std::lock_guard<std::mutex> lock(mu_);
    lanes_.push_back(std::move(l));
    return lanes_.back().get();
  }

  // Waits for the start; makes the device current on this thread. False when the start failed.
  bool use() {
    {
      std::lock_guard<std::mutex> lock(start_mu_);
      if (starter_.valid()) {
        try {
          starter_.get();
          ready_ok_ = true;
        } catch (const std::exception&) {
          ready_ok_ = false;
          capacity_ = 0;
          keys_.release();
        }
      }
    }
    if (!ready_ok_) return false;
    TS_CUDA_CHECK(cudaSetDevice(ordinal_));
    return true;
  }

  void reserve_temp(std::size_t bytes) {
    if (bytes > temp_.size()) temp_.allocate(bytes);
  }

  void sort(cub::DoubleBuffer<u64>& db, u64 count, int end_bit) {
    if (count < 2) return;
    std::size_t bytes = 0;
    TS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, db,
                                                 static_cast<std::int64_t>(count), 0, end_bit));
    reserve_temp(bytes);
    TS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.get(), bytes, db,
                                                 static_cast<std::int64_t>(count), 0, end_bit));
  }

  const int ordinal_;
  const bool owns_device_;
  bool reset_ = false;  // release() reset the device: no CUDA call after it
  std::string name_;
  std::future<void> starter_;
  std::mutex start_mu_;
  std::atomic<bool> ready_ok_{false};
  std::atomic<bool> started_{false};
  mutable std::mutex mu_;  // the appends' places, the lanes, close
  std::condition_variable ended_;
  bool closed_ = false;
  unsigned in_flight_ = 0;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<Lane*> free_;
  u64 capacity_ = 0, size_ = 0, m_ = 0, n_ = 0;
  DeviceBuffer<u64> keys_, other_;
  DeviceBuffer<u32> ids_;
  DeviceBuffer<unsigned char> temp_;
  u64* unique_ = nullptr;  // the unique keys (then the sorted rows): in keys_ or other_
  u64* spare_ = nullptr;   // the other one
  const u32* cols_ = nullptr;
  std::unique_ptr<DeviceRowTally> tally_;  // between start_tally and finish_tally
};

}  // namespace

std::unique_ptr<EdgeSorter> make_edge_sorter(int ordinal, bool owns_device) {
  check_device_ordinal(ordinal);
  return std::make_unique<CudaEdgeSorter>(ordinal, owns_device);
}

}  // namespace tristream::cuda
