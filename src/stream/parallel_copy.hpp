// stream/parallel_copy.hpp — copies of several regions by every core at once: the bytes of all
// jobs together are cut into pieces (at least 256 KiB, a few per thread) on a pool.
#pragma once

#include <cstddef>
#include <vector>

namespace tristream {
class ThreadPool;
}

namespace tristream::stream {

struct CopyJob {
  unsigned char* dst;
  const unsigned char* src;
  std::size_t bytes;
};
// Copies every job (regions must not overlap) on `pool`.
void par_copy(ThreadPool& pool, const std::vector<CopyJob>& jobs);

}  // namespace tristream::stream
