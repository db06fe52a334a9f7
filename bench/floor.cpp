// floor.cpp — the floor of any GPU command: a fresh process that creates the CUDA context,
// allocates what a count allocates (device memory and pinned host memory, 1 GiB and 256 MiB
// unless given) and exits. scripts/bench_e2e.sh times it whole (/usr/bin/time) beside the count;
// every in-core target of docs/outputs.md's whole-command figures is the count minus this floor.
//
// usage: floor [--device-bytes N] [--pinned-bytes N] [--device D]
// Prints one JSON object with the seconds of each step (context, device, pinned, release).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "floor: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long long device_bytes = 1ull << 30, pinned_bytes = 256ull << 20;
  int device = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const unsigned long long v = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--device-bytes")
      device_bytes = v;
    else if (a == "--pinned-bytes")
      pinned_bytes = v;
    else if (a == "--device")
      device = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: floor [--device-bytes N] [--pinned-bytes N] [--device D]\n");
      return 1;
    }
  }
  // 1. The context.
  const double t0 = now_s();
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaFree(nullptr), "context");
  const double t1 = now_s();
  // 2. The device memory and the pinned host memory a count allocates.
  void* d = nullptr;
  if (device_bytes) check(cudaMalloc(&d, device_bytes), "cudaMalloc");
  const double t2 = now_s();
  void* h = nullptr;
  if (pinned_bytes) check(cudaMallocHost(&h, pinned_bytes), "cudaMallocHost");
  const double t3 = now_s();
  // 3. Released, as a count releases them before it exits.
  if (h) check(cudaFreeHost(h), "cudaFreeHost");
  if (d) check(cudaFree(d), "cudaFree");
  const double t4 = now_s();
  std::printf(
      "{\"device_bytes\":%llu,\"pinned_bytes\":%llu,\"context_s\":%.6f,\"device_alloc_s\":%.6f,"
      "\"pinned_alloc_s\":%.6f,\"release_s\":%.6f}\n",
      device_bytes, pinned_bytes, t1 - t0, t2 - t1, t3 - t2, t4 - t3);
  return 0;
}
