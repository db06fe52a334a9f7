// counter_factory.cpp — picks a backend by name.
#include "tristream/counter.hpp"
#include "tristream/error.hpp"

namespace tristream {

std::unique_ptr<Counter> make_counter(const std::string& backend, const CounterOptions& options) {
  if (backend == "cpu") return make_cpu_counter(options);
  if (backend == "cuda") {
    if (built_with_cuda() && cuda_device_count() == 0)
      throw Error(ErrorKind::Device, "--backend cuda: no usable CUDA device was found");
    return make_cuda_counter(options);
  }
  if (backend == "auto")
    return cuda_device_count() > 0 ? make_cuda_counter(options) : make_cpu_counter(options);
  throw Error(ErrorKind::Usage, "unknown backend '" + backend + "' (expected auto, cpu or cuda)");
}

}  // namespace tristream
