// edge_sorter_choice.cpp — the CLI's --device (edge_sorter_choice.hpp).
#include "edge_sorter_choice.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "api/input.hpp"
#include "cuda/edge_sorter.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"

namespace tristream::cli {

std::unique_ptr<EdgeSorter> edge_sorter_for(const std::string& device, bool worth_a_device) {
  if (device == "cpu") return nullptr;
  if (device == "auto") {
    if (!worth_a_device || cuda_device_count() == 0) return nullptr;
    return cuda::make_edge_sorter(0, /*owns_device=*/true);
  }
  char* end = nullptr;
  const unsigned long ordinal = std::strtoul(device.c_str(), &end, 10);
  if (device.empty() || *end != '\0' || ordinal > 1023)
    throw Error(ErrorKind::Usage,
                "--device " + device + ": expected auto, cpu or a CUDA device number");
  return cuda::make_edge_sorter(static_cast<int>(ordinal), /*owns_device=*/true);
}

bool worth_a_device(const std::string& input) {
  std::error_code ec;
  return input == "-" || !std::filesystem::is_regular_file(input, ec) ||
         std::filesystem::file_size(input, ec) >= kDeviceMinInputBytes;
}

std::unique_ptr<EdgeSorter> edge_list_sorter(const std::string& input, bool wanted, int ordinal) {
  std::error_code ec;
  if (!wanted || ordinal < 0 || ordinal >= cuda_device_count()) return nullptr;
  if (input != "-" && (!std::filesystem::exists(input, ec) || api::is_tcsr_input(input)))
    return nullptr;
  if (!worth_a_device(input)) return nullptr;
  return cuda::make_edge_sorter(ordinal, /*owns_device=*/false);
}

}  // namespace tristream::cli
