// stub.cpp — the CUDA backend of a build without nvcc: no devices, and asking for one is a
// usage error that says so.
#include "device.hpp"
#include "edge_sorter.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"

namespace tristream {
namespace {

[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::Usage,
              "the CUDA backend is not available: tristream was built without CUDA (no nvcc at "
              "configure time); use --backend cpu");
}

}  // namespace

bool built_with_cuda() {
  return false;
}
int cuda_device_count() {
  return 0;
}
std::uint64_t cuda_device_total_memory(int) {
  return 0;
}

std::unique_ptr<Counter> make_cuda_counter(const CounterOptions&) {
  no_cuda();
}

namespace cuda {

DeviceInfo device_info(int) {
  no_cuda();
}
MemoryInfo memory_info(int) {
  no_cuda();
}
void check_device_ordinal(int) {
  no_cuda();
}
void select_device(int) {
  no_cuda();
}
void validate_kernel_name(const std::string&) {
  no_cuda();
}
std::unique_ptr<EdgeSorter> make_edge_sorter(int, bool) {
  no_cuda();
}

}  // namespace cuda
}  // namespace tristream
