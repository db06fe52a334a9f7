// fuzz_support.hpp — what the fuzz targets share: an in-memory file with a path (memfd) and a
// scratch directory, both created once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tristream::fuzz {

// Replaces the contents of a per-process memfd with data[0, size) and returns a path that opens
// it ("/proc/self/fd/N", a regular file). One file per `slot`.
std::string memory_file(int slot, const std::uint8_t* data, std::size_t size);

// Truncates the memfd of `slot` (after memory_file) to `size` bytes.
void truncate_memory_file(int slot, std::size_t size);

// True when FUZZ_VERBOSE is set: the targets then print each input's outcome on stderr (for
// replaying seeds and findings).
bool verbose();

inline unsigned long long ull(std::uint64_t v) {
  return v;
}

// A directory (under $TMPDIR or /tmp) created once per process, for outputs; removed when the
// process exits normally.
const std::string& scratch_dir();

}  // namespace tristream::fuzz
