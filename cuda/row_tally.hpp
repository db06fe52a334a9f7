// cuda/row_tally.hpp — the row tally (tristream/row_tally.hpp) of rows sorted on the device, for
// the converter's EdgeSorter (edge_sorter.cu); cuda/ internal.
//
// Preconditions: `keys` holds the m edges of G+ as row << 32 | column, each row's edges together
// (any order inside); `lengths` the n rows' lengths (out-degrees); both stay on the device and
// unchanged until finish() returns or the tally is destroyed. The spec passes
// row_tally_spec_problem for n (else Error(Internal)).
#pragma once

#include <cstdint>
#include <memory>

#include "tristream/row_tally.hpp"

namespace tristream::cuda {

class DeviceRowTally {
 public:
  // Allocates the tally's device memory (4 bytes per vertex, 8 per bucket pair and hash pair;
  // throws DeviceOutOfMemory when there is none) and starts its kernels on a stream of its own,
  // on the current device; returns while they run.
  DeviceRowTally(const RowTallySpec& spec, std::uint64_t n, const std::uint64_t* keys,
                 std::uint64_t m, const std::uint32_t* lengths);
  ~DeviceRowTally();  // waits for the kernels; frees the memory
  DeviceRowTally(const DeviceRowTally&) = delete;
  DeviceRowTally& operator=(const DeviceRowTally&) = delete;

  // Waits for the kernels; the sums.
  RowTallySums finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tristream::cuda
