// cuda/cuda_counter.cpp — the CUDA Counter (counter.hpp): uploads the three host views (once
// when they are the same view, the in-core case), enqueues count(A, B, C) through
// enqueue_device_count (the streaming backend's entry too) on its own stream, and copies back the
// count and the per-vertex counts, which are added into the caller's arrays. 64-bit offsets and
// counts throughout; a view whose offsets[0] is not 0 is uploaded from its first edge and its
// device column pointer is shifted back by offsets[0], so the kernels index with the view's own
// (possibly large) offsets.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "check.hpp"
#include "device.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "tristream/counter.hpp"
#include "wait.hpp"

namespace tristream {
namespace {

struct DeviceView {
  cuda::DeviceBuffer<eid_t> offsets;
  cuda::DeviceBuffer<vid_t> cols;
  CsrView view;  // device pointers
};

class CudaCounter final : public Counter {
 public:
  explicit CudaCounter(const CounterOptions& options)
      : kernel_(options.kernel), device_(options.device) {
    cuda::validate_kernel_name(kernel_);
    info_ = cuda::device_info(device_);
    stream_ = std::make_unique<cuda::Stream>();
    result_.allocate(1);
  }

  std::string backend() const override { return "cuda"; }
  std::string describe() const override {
    return "cuda (device " + std::to_string(device_) + ": " + info_.name + ", kernel " + kernel_ +
           ")";
  }

  count_t count(const CsrView& A, const CsrView& B, const CsrView& C,
                const PerVertexOut& pv) override {
    TS_CHECK(A.rows == B.rows, "count(A, B, C): A and B must have the same rows");
    TS_CHECK(!pv.wanted() || (pv.v_counts && pv.w_counts),
             "per-vertex output needs all three arrays");
    if (A.rows == 0 || A.edges() == 0 || B.edges() == 0 || C.edges() == 0) return 0;
    TS_CUDA_CHECK(cudaSetDevice(device_));
    cudaStream_t s = stream_->get();

    // 1. Upload, once per distinct view.
    std::vector<std::unique_ptr<Owned>> owned;
    auto upload = [&](const CsrView& h) -> const CsrView* {
      for (auto& d : owned)
        if (d->view.rows == h.rows && d->host_offsets == h.offsets && d->host_cols == h.cols)
          return &d->view;
      auto d = std::make_unique<Owned>();
      const eid_t first = h.offsets[0];
      const eid_t edges = h.edges();
      d->offsets.allocate(h.rows + 1);
      d->cols.allocate(std::max<eid_t>(edges, 1));
      TS_CUDA_CHECK(cudaMemcpyAsync(d->offsets.get(), h.offsets, (h.rows + 1) * sizeof(eid_t),
                                    cudaMemcpyHostToDevice, s));
      if (edges)
        TS_CUDA_CHECK(cudaMemcpyAsync(d->cols.get(), h.cols + first, edges * sizeof(vid_t),
                                      cudaMemcpyHostToDevice, s));
      d->host_offsets = h.offsets;
      d->host_cols = h.cols;
      // Shift the device column pointer back so that cols[offsets[r]] addresses row r's first
      // edge (pointer arithmetic done on integers: the shifted pointer is never dereferenced).
      const auto shifted = reinterpret_cast<std::uintptr_t>(d->cols.get()) - first * sizeof(vid_t);
      d->view =
          CsrView{h.rows, d->offsets.get(), reinterpret_cast<const vid_t*>(shifted), h.col_space};
      owned.push_back(std::move(d));
      return &owned.back()->view;
    };
    const CsrView* dA = upload(A);
    const CsrView* dB = upload(B);
    const CsrView* dC = upload(C);

    // 2. Per-vertex arrays: one device array per distinct host array, sized for every use.
    PerVertexOut dpv;
    struct PvArray {
      count_t* host;
      std::uint64_t size;
      cuda::DeviceBuffer<count_t> dev;
    };
    std::vector<std::unique_ptr<PvArray>> pv_arrays;
    if (pv.wanted()) {
      const std::uint64_t col_space = std::max(B.col_space, C.col_space);
      auto need = [&](count_t* host, std::uint64_t size) {
        for (auto& a : pv_arrays)
          if (a->host == host) {
            a->size = std::max(a->size, size);
            return;
          }
        pv_arrays.push_back(std::make_unique<PvArray>(PvArray{host, size, {}}));
      };
      need(pv.u_counts, A.rows);
      need(pv.v_counts, C.rows);
      need(pv.w_counts, col_space);
      for (auto& a : pv_arrays) {
        a->dev.allocate(std::max<std::uint64_t>(a->size, 1));
        TS_CUDA_CHECK(cudaMemsetAsync(a->dev.get(), 0, a->dev.bytes(), s));
      }
      auto dev_of = [&](count_t* host) {
        for (auto& a : pv_arrays)
          if (a->host == host) return a->dev.get();
        return static_cast<count_t*>(nullptr);
      };
      dpv.u_counts = dev_of(pv.u_counts);
      dpv.v_counts = dev_of(pv.v_counts);
      dpv.w_counts = dev_of(pv.w_counts);
    }

    // 3. Count through the one entry the streaming backend uses too, with the host views as the
    // host copies that plan the launch and `auto`. The total comes back into the pinned word
    // result_ (an asynchronous copy: into pageable memory it would block until the kernels end,
    // where SIGINT is not polled); the wait for it polls the interrupt flag (wait.hpp).
    cuda::DeviceBuffer<unsigned long long> total(1);
    cuda::DeviceCount job;
    job.A = *dA;
    job.B = *dB;
    job.C = *dC;
    job.host_offsets_A = A.offsets;
    job.host.a_cols = A.cols;
    job.host.b_offsets = B.offsets;
    job.host.c_offsets = C.offsets;
    job.host.b_cols = B.cols;
    job.host.c_cols = C.cols;
    job.per_vertex = dpv;
    cuda::enqueue_device_count(job, kernel_, total.get(), result_.get(), s);
    cuda::wait_stream(s);  // SIGINT/SIGTERM: Error(Interrupted); the frees below wait for it
    const count_t result = result_[0];

    // 4. Copy back the per-vertex counts (the kernels have finished).
    std::vector<std::vector<count_t>> pv_host(pv_arrays.size());
    for (std::size_t i = 0; i < pv_arrays.size(); ++i) {
      pv_host[i].resize(pv_arrays[i]->size);
      TS_CUDA_CHECK(cudaMemcpy(pv_host[i].data(), pv_arrays[i]->dev.get(),
                               pv_arrays[i]->size * sizeof(count_t), cudaMemcpyDeviceToHost));
    }
    for (std::size_t i = 0; i < pv_arrays.size(); ++i)
      for (std::uint64_t x = 0; x < pv_arrays[i]->size; ++x) pv_arrays[i]->host[x] += pv_host[i][x];
    return result;
  }

 private:
  struct Owned : DeviceView {
    const eid_t* host_offsets = nullptr;
    const vid_t* host_cols = nullptr;
  };

  std::string kernel_;
  int device_;
  cuda::DeviceInfo info_;
  std::unique_ptr<cuda::Stream> stream_;
  cuda::PinnedBuffer<unsigned long long> result_;  // the count's total, copied back per count
};

}  // namespace

std::unique_ptr<Counter> make_cuda_counter(const CounterOptions& options) {
  return std::make_unique<CudaCounter>(options);
}

}  // namespace tristream
