// cuda/testing/tools.cu — the GPU helpers of tools.hpp (time_kernels, orient_on_device,
// expand_packed_on_device, count_slice_on_device, allocate_on_device, wait_for_spinning_kernel,
// throw_cuda_status), for the tests and the kernel benchmark only.
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/remove.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/unique.h>

#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/launch.hpp"
#include "cuda/memory.hpp"
#include "cuda/testing/tools.hpp"
#include "cuda/wait.hpp"

namespace tristream::cuda {

std::vector<KernelRun> time_kernels(const CsrView& g, const std::vector<std::string>& kernels,
                                    int reps, int device, double max_ms, bool profile) {
  TS_CHECK(g.rows == 0 || g.offsets[0] == 0, "time_kernels: the graph's offsets must start at 0");
  select_device(device);
  Stream stream;
  DeviceBuffer<eid_t> off(g.rows + 1);
  DeviceBuffer<vid_t> cols(std::max<eid_t>(g.edges(), 1));
  TS_CUDA_CHECK(
      cudaMemcpy(off.get(), g.offsets, (g.rows + 1) * sizeof(eid_t), cudaMemcpyHostToDevice));
  TS_CUDA_CHECK(cudaMemcpy(cols.get(), g.cols + g.offsets[0], g.edges() * sizeof(vid_t),
                           cudaMemcpyHostToDevice));
  const CsrView d{g.rows, off.get(), cols.get(), g.col_space};
  DeviceBuffer<unsigned long long> total(1);
  Event start, stop;
  std::vector<KernelRun> runs;
  for (const auto& k : kernels) {
    KernelRun r;
    r.kernel = k;
    r.chosen = k == "auto" ? choose_kernel(g, g, g, g.offsets) : k;
    auto once = [&]() {
      TS_CUDA_CHECK(cudaMemsetAsync(total.get(), 0, sizeof(unsigned long long), stream.get()));
      start.record(stream.get());
      enqueue_count(d, d, d, k, total.get(), {}, stream.get(), g.offsets);
      stop.record(stream.get());
      stop.synchronize();
      unsigned long long t = 0;
      TS_CUDA_CHECK(cudaMemcpy(&t, total.get(), sizeof(t), cudaMemcpyDeviceToHost));
      r.triangles = t;
      return static_cast<double>(stop.since(start));
    };
    const double warm = once();
    if (profile) {
      TS_CUDA_CHECK(cudaProfilerStart());
      r.ms.push_back(once());
      TS_CUDA_CHECK(cudaProfilerStop());
    } else if (warm > max_ms) {
      r.ms.push_back(warm);
    } else {
      for (int i = 0; i < reps; ++i) r.ms.push_back(once());
    }
    std::vector<double> sorted = r.ms;
    std::sort(sorted.begin(), sorted.end());
    r.median_ms = sorted[sorted.size() / 2];
    runs.push_back(r);
  }
  return runs;
}

namespace {

__global__ void pack_edges_kernel(const vid_t* pairs, std::uint64_t m, std::uint64_t* keys) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t a = pairs[2 * i], b = pairs[2 * i + 1];
    keys[i] = a == b ? ~0ull : (std::min(a, b) << 32 | std::max(a, b));
  }
}

__global__ void degree_kernel(const std::uint64_t* keys, std::uint64_t m, unsigned* degree) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    atomicAdd(degree + (keys[i] >> 32), 1u);
    atomicAdd(degree + (keys[i] & 0xffffffffu), 1u);
  }
}

__global__ void rank_key_kernel(const unsigned* degree, std::uint64_t n, std::uint64_t* keys) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    keys[i] = static_cast<std::uint64_t>(degree[i]) << 32 | i;
}

__global__ void rank_of_kernel(const std::uint64_t* order_keys, std::uint64_t n, std::uint64_t z,
                               vid_t* rank) {
  for (std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    rank[order_keys[r] & 0xffffffffu] = static_cast<vid_t>(r - z);  // z isolated vertices first
}

__global__ void relabel_kernel(std::uint64_t* keys, std::uint64_t m, const vid_t* rank) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t a = rank[keys[i] >> 32], b = rank[keys[i] & 0xffffffffu];
    keys[i] = std::min(a, b) << 32 | std::max(a, b);
  }
}

__global__ void split_kernel(const std::uint64_t* keys, std::uint64_t m, vid_t* cols) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    cols[i] = static_cast<vid_t>(keys[i] & 0xffffffffu);
}

struct RowOf {
  __device__ std::uint64_t operator()(std::uint64_t k) const { return k >> 32; }
};

struct IsZeroDegree {
  __device__ bool operator()(std::uint64_t k) const { return (k >> 32) == 0; }
};

}  // namespace

OrientedGraph orient_on_device(std::uint64_t n, const std::vector<std::pair<vid_t, vid_t>>& edges,
                               int device) {
  select_device(device);
  TS_CHECK(n <= kMaxVertices, "orient_on_device: too many vertices");
  static_assert(sizeof(std::pair<vid_t, vid_t>) == 2 * sizeof(vid_t), "packed pairs");
  const std::uint64_t m0 = edges.size();
  const int grid = 1024, block = 256;
  OrientedGraph g;
  DeviceBuffer<std::uint64_t> keys(std::max<std::uint64_t>(m0, 1));
  {
    DeviceBuffer<vid_t> pairs(std::max<std::uint64_t>(2 * m0, 1));
    if (m0)
      TS_CUDA_CHECK(
          cudaMemcpy(pairs.get(), edges.data(), m0 * 2 * sizeof(vid_t), cudaMemcpyHostToDevice));
    pack_edges_kernel<<<grid, block>>>(pairs.get(), m0, keys.get());
    TS_CUDA_CHECK_LAUNCH();
  }
  auto kp = thrust::device_pointer_cast(keys.get());
  thrust::sort(thrust::device, kp, kp + m0);
  std::uint64_t m = thrust::unique(thrust::device, kp, kp + m0) - kp;
  if (m > 0 && (kp[m - 1] == ~0ull)) --m;  // self-loops sorted last
  DeviceBuffer<unsigned> degree(std::max<std::uint64_t>(n, 1));
  TS_CUDA_CHECK(cudaMemset(degree.get(), 0, n * sizeof(unsigned)));
  degree_kernel<<<grid, block>>>(keys.get(), m, degree.get());
  TS_CUDA_CHECK_LAUNCH();
  DeviceBuffer<std::uint64_t> order(std::max<std::uint64_t>(n, 1));
  rank_key_kernel<<<grid, block>>>(degree.get(), n, order.get());
  TS_CUDA_CHECK_LAUNCH();
  auto op = thrust::device_pointer_cast(order.get());
  thrust::sort(thrust::device, op, op + n);
  const std::uint64_t z = thrust::count_if(thrust::device, op, op + n, IsZeroDegree());
  DeviceBuffer<vid_t> rank(std::max<std::uint64_t>(n, 1));
  rank_of_kernel<<<grid, block>>>(order.get(), n, z, rank.get());
  TS_CUDA_CHECK_LAUNCH();
  relabel_kernel<<<grid, block>>>(keys.get(), m, rank.get());
  TS_CUDA_CHECK_LAUNCH();
  thrust::sort(thrust::device, kp, kp + m);
  const std::uint64_t nn = n - z;
  DeviceBuffer<eid_t> off(nn + 1);
  thrust::lower_bound(
      thrust::device, thrust::make_transform_iterator(kp, RowOf()),
      thrust::make_transform_iterator(kp + m, RowOf()), thrust::counting_iterator<std::uint64_t>(0),
      thrust::counting_iterator<std::uint64_t>(nn + 1), thrust::device_pointer_cast(off.get()));
  DeviceBuffer<vid_t> cols(std::max<std::uint64_t>(m, 1));
  split_kernel<<<grid, block>>>(keys.get(), m, cols.get());
  TS_CUDA_CHECK_LAUNCH();
  g.csr.offsets.resize(nn + 1);
  g.csr.cols.resize(m);
  g.csr.col_space = nn;
  TS_CUDA_CHECK(cudaMemcpy(g.csr.offsets.data(), off.get(), (nn + 1) * sizeof(eid_t),
                           cudaMemcpyDeviceToHost));
  if (m)
    TS_CUDA_CHECK(
        cudaMemcpy(g.csr.cols.data(), cols.get(), m * sizeof(vid_t), cudaMemcpyDeviceToHost));
  std::vector<std::uint64_t> order_host(n);
  if (n)
    TS_CUDA_CHECK(cudaMemcpy(order_host.data(), order.get(), n * sizeof(std::uint64_t),
                             cudaMemcpyDeviceToHost));
  g.perm.resize(nn);
  for (std::uint64_t r = 0; r < nn; ++r) g.perm[r] = order_host[r + z] & 0xffffffffu;
  return g;
}

std::vector<eid_t> expand_packed_on_device(const PackedRows& packed, std::uint64_t rows,
                                           int device) {
  select_device(device);
  Stream stream;
  DeviceBuffer<vid_t> ids(std::max<std::uint64_t>(packed.count, 1));
  DeviceBuffer<eid_t> offs(packed.count + 1);
  DeviceBuffer<eid_t> out(rows + 1);
  if (packed.count)
    TS_CUDA_CHECK(
        cudaMemcpy(ids.get(), packed.ids, packed.count * sizeof(vid_t), cudaMemcpyHostToDevice));
  TS_CUDA_CHECK(cudaMemcpy(offs.get(), packed.offsets, (packed.count + 1) * sizeof(eid_t),
                           cudaMemcpyHostToDevice));
  enqueue_expand_packed(rows, packed.count, ids.get(), offs.get(), out.get(), stream.get());
  TS_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::vector<eid_t> host(rows + 1);
  TS_CUDA_CHECK(
      cudaMemcpy(host.data(), out.get(), (rows + 1) * sizeof(eid_t), cudaMemcpyDeviceToHost));
  return host;
}

std::pair<std::vector<eid_t>, std::vector<vid_t>> cut_rows_on_device(
    const CsrView& B, std::uint64_t lo, std::uint64_t hi, std::uint64_t cap, int device) {
  select_device(device);
  Stream stream;
  const eid_t m = B.edges();
  DeviceBuffer<eid_t> off(B.rows + 1), out_off(B.rows + 1);
  DeviceBuffer<vid_t> cols(std::max<eid_t>(m, 1)), out_cols(std::max<std::uint64_t>(cap, 1));
  TS_CUDA_CHECK(
      cudaMemcpy(off.get(), B.offsets, (B.rows + 1) * sizeof(eid_t), cudaMemcpyHostToDevice));
  if (m) TS_CUDA_CHECK(cudaMemcpy(cols.get(), B.cols, m * sizeof(vid_t), cudaMemcpyHostToDevice));
  enqueue_cut_rows(B.rows, off.get(), cols.get(), lo, hi, out_off.get(), out_cols.get(), cap,
                   stream.get());
  TS_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::pair<std::vector<eid_t>, std::vector<vid_t>> r;
  r.first.resize(B.rows + 1);
  TS_CUDA_CHECK(cudaMemcpy(r.first.data(), out_off.get(), (B.rows + 1) * sizeof(eid_t),
                           cudaMemcpyDeviceToHost));
  r.second.resize(std::min<std::uint64_t>(cap, r.first.back()));
  if (!r.second.empty())
    TS_CUDA_CHECK(cudaMemcpy(r.second.data(), out_cols.get(), r.second.size() * sizeof(vid_t),
                             cudaMemcpyDeviceToHost));
  return r;
}

count_t count_slice_on_device(const CsrView& A, const CsrView& B, const CsrView& C,
                              std::uint64_t v_begin, std::uint64_t v_end, const std::string& kernel,
                              int device) {
  select_device(device);
  Stream stream;
  // 1. Upload each distinct view once.
  TS_CHECK(v_begin <= v_end && v_end <= C.rows, "count_slice_on_device: a slice of C's rows");
  struct Uploaded {
    const eid_t* host = nullptr;
    const vid_t* host_cols = nullptr;
    DeviceBuffer<eid_t> off;
    DeviceBuffer<vid_t> cols;
    CsrView view;
  };
  std::vector<std::unique_ptr<Uploaded>> up;
  auto upload = [&](const CsrView& h) -> CsrView {
    TS_CHECK(h.rows == 0 || h.offsets[0] == 0, "count_slice_on_device: offsets must start at 0");
    for (const auto& u : up)
      if (u->host == h.offsets && u->host_cols == h.cols) return u->view;
    auto u = std::make_unique<Uploaded>();
    u->host = h.offsets;
    u->host_cols = h.cols;
    u->off.allocate(h.rows + 1);
    u->cols.allocate(std::max<eid_t>(h.edges(), 1));
    TS_CUDA_CHECK(
        cudaMemcpy(u->off.get(), h.offsets, (h.rows + 1) * sizeof(eid_t), cudaMemcpyHostToDevice));
    if (h.edges())
      TS_CUDA_CHECK(
          cudaMemcpy(u->cols.get(), h.cols, h.edges() * sizeof(vid_t), cudaMemcpyHostToDevice));
    u->view = CsrView{h.rows, u->off.get(), u->cols.get(), h.col_space};
    up.push_back(std::move(u));
    return up.back()->view;
  };
  // 2. The sliced count, with host copies as the streaming backend passes them.
  DeviceCount job;
  job.A = upload(A);
  job.B = upload(B);
  job.C = upload(C);
  job.host_offsets_A = A.offsets;
  job.host.a_cols = A.cols;
  job.host.b_offsets = B.offsets;
  job.host.c_offsets = C.offsets;
  job.sliced = true;
  job.host.v_begin = v_begin;
  job.host.v_end = v_end;
  DeviceBuffer<unsigned long long> total(1);
  PinnedBuffer<unsigned long long> result(1);
  enqueue_device_count(job, kernel, total.get(), result.get(), stream.get());
  stream.synchronize();
  return result[0];
}

void allocate_on_device(std::uint64_t bytes, int device, bool stream_ordered) {
  select_device(device);
  if (!stream_ordered) {
    DeviceBuffer<unsigned char> memory(bytes);
    return;
  }
  Stream stream;
  { AsyncBuffer<unsigned char> memory(bytes, stream.get()); }
  stream.synchronize();
}

namespace {
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
}  // namespace

DeviceWait wait_for_spinning_kernel(double kernel_seconds, int device) {
  select_device(device);
  Stream stream;
  Event done(false);
  spin_kernel<<<1, 1, 0, stream.get()>>>(static_cast<unsigned long long>(kernel_seconds * 1e9));
  TS_CUDA_CHECK_LAUNCH();
  done.record(stream.get());
  DeviceWait w;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    wait_event(done.get());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Interrupted) throw;
    w.interrupted = true;
  }
  w.wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stream.synchronize();
  return w;
}

void throw_cuda_status(int status, const char* call) {
  throw_cuda(static_cast<cudaError_t>(status), call, __FILE__, __LINE__);
}

}  // namespace tristream::cuda
