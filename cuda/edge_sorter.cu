// cuda/edge_sorter.cu — the converter's EdgeSorter on a CUDA device (edge_sorter.hpp).
//
// Device memory: the appended keys (8 bytes each, one buffer sized at the start to half of the
// free memory less a reserve), a second buffer of as many keys for the sorts, the per-id array
// (degrees, then ranks, then row lengths: 4 bytes per id), the row offsets (8 bytes per vertex)
// and the sorts' temporary storage. Steps (the contract's numbers):
//   3. radix sort of the keys (bits up to the largest id only), repeats removed by
//      DeviceSelect::Unique into the second buffer, degrees counted by atomic increments;
//   4. each unique key oriented in place by the ranks, radix sorted again (bits up to the largest
//      rank), the row offsets from the places where the row changes, the row lengths from them,
//      and the columns (the keys' low halves) packed into the free buffer;
//   5. columns copied from there.
// The keys come and go in pageable host memory (cudaMemcpy stages them).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <future>
#include <mutex>
#include <string>

#include "check.hpp"
#include "device.hpp"
#include "edge_sorter.hpp"
#include "memory.hpp"
#include "tristream/counter.hpp"

namespace tristream::cuda {
namespace {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

// Free device memory left beside the keys' two buffers: the sorts' temporary storage, the
// per-id arrays up to what fits_ids allows, the CUDA libraries.
constexpr u64 kReserve = u64{1} << 30;

constexpr int kBlock = 256;

int grid_for(u64 items) {
  return static_cast<int>(std::clamp<u64>((items + kBlock - 1) / kBlock, 1, 132 * 32));
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
  explicit CudaEdgeSorter(int ordinal) : ordinal_(ordinal) {
    name_ = "CUDA device " + std::to_string(ordinal);
    starter_ = std::async(std::launch::async, [this] { start(); });
  }
  ~CudaEdgeSorter() override {
    if (starter_.valid()) starter_.wait();
    (void)cuda_ok(cudaSetDevice(ordinal_));
  }

  std::string name() const override { return name_; }

  bool append(const u64* keys, std::size_t count) override {
    if (!use() || size_ + count > capacity_) return false;
    TS_CUDA_CHECK(cudaMemcpy(keys_.get() + size_, keys, count * 8, cudaMemcpyHostToDevice));
    size_ += count;
    return true;
  }

  u64 size() const override { return size_; }

  void take_back(u64 first, std::size_t count, u64* out) override {
    TS_CHECK(first + count <= size_, "keys taken back past those appended");
    if (!count || !use()) return;
    TS_CUDA_CHECK(cudaMemcpy(out, keys_.get() + first, count * 8, cudaMemcpyDeviceToHost));
  }

  bool fits_ids(u64 space) const override {
    if (!ready_ok_) return false;
    std::size_t free = 0, total = 0;
    if (!cuda_ok(cudaSetDevice(ordinal_)) || !cuda_ok(cudaMemGetInfo(&free, &total))) return false;
    // the second buffer, the per-id array and the offsets, with the reserve for the rest
    return size_ * 8 + space * 12 + 8 + kReserve / 2 <= free;
  }

  u64 unique_and_degrees(u64 space, u32* degree) override {
    TS_CHECK(use(), "the device sorter is not ready");
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

  void sort_rows(const u32* rank, u64 space, u64 n, u32* row_length) override {
    TS_CHECK(unique_ && space <= ids_.size(), "sort_rows before unique_and_degrees");
    // 1. Oriented in place by the ranks, then sorted (the bits of ranks below n).
    TS_CUDA_CHECK(cudaMemcpy(ids_.get(), rank, space * 4, cudaMemcpyHostToDevice));
    if (m_) {
      orient_keys<<<grid_for(m_), kBlock>>>(unique_, m_, ids_.get());
      TS_CUDA_CHECK_LAUNCH();
    }
    cub::DoubleBuffer<u64> db(unique_, spare_);
    sort(db, m_, std::max(1, 32 + bit_width(n ? n - 1 : 0)));
    unique_ = db.Current();
    spare_ = db.Alternate();
    // 2. The row offsets and lengths; the columns packed into the spare buffer.
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

  void columns(u64 first, u64 count, u32* out) override {
    TS_CHECK(cols_ && first + count <= m_, "columns past the sorted rows");
    if (!count) return;
    TS_CUDA_CHECK(cudaSetDevice(ordinal_));
    TS_CUDA_CHECK(cudaMemcpy(out, cols_ + first, count * 4, cudaMemcpyDeviceToHost));
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

  // Waits for the start; makes the device current on this thread. False when the start failed.
  bool use() {
    {
      std::lock_guard<std::mutex> lock(mu_);
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
  std::string name_;
  std::future<void> starter_;
  std::mutex mu_;
  bool ready_ok_ = false;
  u64 capacity_ = 0, size_ = 0, m_ = 0;
  DeviceBuffer<u64> keys_, other_;
  DeviceBuffer<u32> ids_;
  DeviceBuffer<unsigned char> temp_;
  u64* unique_ = nullptr;  // the unique keys (then the sorted rows): in keys_ or other_
  u64* spare_ = nullptr;   // the other one
  const u32* cols_ = nullptr;
};

}  // namespace

std::unique_ptr<EdgeSorter> make_edge_sorter(int ordinal) {
  const int n = cuda_device_count();
  if (ordinal < 0 || ordinal >= n)
    throw Error(ErrorKind::Usage, "--device " + std::to_string(ordinal) + ": " +
                                      (n == 0 ? std::string("no CUDA device is usable")
                                              : "there are " + std::to_string(n) +
                                                    " CUDA device(s), numbered from 0"));
  return std::make_unique<CudaEdgeSorter>(ordinal);
}

}  // namespace tristream::cuda
