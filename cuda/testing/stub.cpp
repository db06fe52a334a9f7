// cuda/testing/stub.cpp — the test and benchmark helpers (tools.hpp) of a build without nvcc:
// each is a usage error that says so.
#include "cuda/testing/tools.hpp"
#include "tristream/error.hpp"

namespace tristream::cuda {
namespace {

[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::Usage,
              "the CUDA backend is not available: tristream was built without CUDA (no nvcc at "
              "configure time)");
}

}  // namespace

std::vector<KernelRun> time_kernels(const CsrView&, const std::vector<std::string>&, int, int,
                                    double, bool) {
  no_cuda();
}

OrientedGraph orient_on_device(std::uint64_t, const std::vector<std::pair<vid_t, vid_t>>&, int) {
  no_cuda();
}

std::vector<eid_t> expand_packed_on_device(const PackedRows&, std::uint64_t, int) {
  no_cuda();
}

std::pair<std::vector<eid_t>, std::vector<vid_t>> cut_rows_on_device(const CsrView&, std::uint64_t,
                                                                     std::uint64_t, std::uint64_t,
                                                                     int) {
  no_cuda();
}

count_t count_slice_on_device(const CsrView&, const CsrView&, const CsrView&, std::uint64_t,
                              std::uint64_t, const std::string&, int) {
  no_cuda();
}

void allocate_on_device(std::uint64_t, int, bool) {
  no_cuda();
}

DeviceWait wait_for_spinning_kernel(double, int) {
  no_cuda();
}

void throw_cuda_status(int, const char*) {
  no_cuda();
}

}  // namespace tristream::cuda
