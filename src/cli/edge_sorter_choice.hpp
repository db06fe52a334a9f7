// edge_sorter_choice.hpp — the CLI's --device for the commands that write a .tcsr file (convert,
// generate), and the device of the commands that convert an edge list on their way (count, plan,
// info): where the repeated edges are removed and the rows sorted (docs/convert.md, "On the
// GPU").
#pragma once

#include <memory>
#include <string>

#include "tristream/edge_sorter.hpp"

namespace tristream::cli {

// The edge sorter `--device WHERE` asks for: none for cpu, and none for auto without a usable
// CUDA device or when `worth_a_device` is false (an input too small to gain from a GPU's start);
// else one on the device named (a number) or on device 0 (auto). The command uses the device for
// nothing else, so the sorter may reset it. Throws Error(Usage) for any other WHERE, and for a
// number that is no device.
std::unique_ptr<EdgeSorter> edge_sorter_for(const std::string& device, bool worth_a_device);

// Whether `input` is worth a device under --device auto: standard input or any other stream (its
// size unknown), or a file of kDeviceMinInputBytes or more.
bool worth_a_device(const std::string& input);

// The edge sorter for a command that converts an edge list INPUT into a temporary .tcsr file
// before its own work on CUDA device `ordinal` (count, plan, info): one there, not owning the
// device, when `wanted` (the caller's CUDA backend, asked or chosen), `ordinal` is a device here,
// INPUT exists and is no .tcsr file (api::is_tcsr_input) and is worth a device. Else null: the
// host's sorts (a bad path or ordinal is left to the command to report).
std::unique_ptr<EdgeSorter> edge_list_sorter(const std::string& input, bool wanted, int ordinal);

// Inputs below this many bytes (convert: the file; generate: 16 bytes per generated edge) are not
// worth a device under --device auto: its start (the context, the buffers) takes longer than
// their sorts.
inline constexpr std::uint64_t kDeviceMinInputBytes = std::uint64_t{256} << 20;

}  // namespace tristream::cli
