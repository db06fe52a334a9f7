// stub.cpp — the CUDA backend of a build without nvcc: no devices, and asking for one is a
// usage error that says so.
#include "tristream/counter.hpp"
#include "tristream/error.hpp"

namespace tristream {

bool built_with_cuda() {
  return false;
}
int cuda_device_count() {
  return 0;
}

std::unique_ptr<Counter> make_cuda_counter(const CounterOptions&) {
  throw Error(ErrorKind::Usage,
              "the CUDA backend is not available: tristream was built without CUDA (no nvcc at "
              "configure time); use --backend cpu");
}

}  // namespace tristream
