// units.hpp — human-readable quantities shared by the CLI and the planner's explanations.
#pragma once

#include <cstdint>
#include <string>

namespace tristream {

// A byte count with a binary suffix, e.g. "12.5 MiB" ("512 B" below 1 KiB).
std::string format_bytes(std::uint64_t bytes);

}  // namespace tristream
