// cuda/edge_sorter.hpp — the converter's EdgeSorter (tristream/edge_sorter.hpp) on a CUDA device,
// without CUDA types. In a build without CUDA (stub.cpp) make_edge_sorter throws Error(Usage).
#pragma once

#include <memory>

#include "tristream/edge_sorter.hpp"

namespace tristream::cuda {

// A sorter on device `ordinal`: the device's context is made and the keys' buffer (half of the
// device's free memory, less a reserve) allocated on a thread of its own while the caller goes
// on; the first call waits for them. If that fails (no room, a broken device) append returns
// false and the converter goes on without the device. Throws Error(Usage) for an ordinal that is
// no device. owns_device: the process uses the device for nothing else while the sorter lives and
// after it, so release() also resets the device (its context's teardown then runs beside the
// converter's writer instead of at the process's exit; `tristream convert` does this).
std::unique_ptr<EdgeSorter> make_edge_sorter(int ordinal, bool owns_device = false);

}  // namespace tristream::cuda
