// edge_sorter_choice.cpp — the CLI's --device (edge_sorter_choice.hpp).
#include "edge_sorter_choice.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "cuda/edge_sorter.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"  // has_tcsr_magic

namespace tristream::cli {

std::unique_ptr<EdgeSorter> edge_sorter_for(const std::string& device, bool worth_a_device,
                                            bool owns_device) {
  if (device == "cpu") return nullptr;
  if (device == "auto") {
    if (!worth_a_device || cuda_device_count() == 0) return nullptr;
    return cuda::make_edge_sorter(0, owns_device);
  }
  char* end = nullptr;
  const unsigned long ordinal = std::strtoul(device.c_str(), &end, 10);
  if (device.empty() || *end != '\0' || ordinal > 1023)
    throw Error(ErrorKind::Usage,
                "--device " + device + ": expected auto, cpu or a CUDA device number");
  return cuda::make_edge_sorter(static_cast<int>(ordinal), owns_device);
}

std::unique_ptr<EdgeSorter> edge_list_sorter(const std::string& input, bool wanted,
                                             const std::string& ordinal) {
  if (!wanted) return nullptr;
  if (input != "-") {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(input, ec) ||
        std::filesystem::file_size(input, ec) < kDeviceMinInputBytes || ec)
      return nullptr;
    if (input.size() > 5 && input.compare(input.size() - 5, 5, ".tcsr") == 0) return nullptr;
    if (tcsr::has_tcsr_magic(input)) return nullptr;
  }
  const int here = cuda_device_count();
  if (here <= 0 || ordinal.empty() || ordinal.size() > 4 ||
      ordinal.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(ordinal) >= static_cast<unsigned long>(here))
    return nullptr;
  return edge_sorter_for(ordinal, /*worth_a_device=*/true, /*owns_device=*/false);
}

}  // namespace tristream::cli
