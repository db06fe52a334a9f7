// stream/parallel_copy.cpp — copies of several regions on a pool (stream/parallel_copy.hpp).
#include "stream/parallel_copy.hpp"

#include <algorithm>
#include <cstring>

#include "common/thread_pool.hpp"

namespace tristream::stream {

void par_copy(ThreadPool& pool, const std::vector<CopyJob>& jobs) {
  std::vector<std::size_t> start(jobs.size() + 1, 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) start[j + 1] = start[j] + jobs[j].bytes;
  const std::size_t total = start.back();
  if (total == 0) return;
  constexpr std::size_t kMinPiece = std::size_t{256} << 10;
  const std::size_t pieces = std::max<std::size_t>(
      1, std::min<std::size_t>((total + kMinPiece - 1) / kMinPiece, 4 * pool.threads()));
  pool.run(pieces, [&](std::size_t x) {
    const std::size_t lo = chunk_range(total, pieces, x).lo, hi = chunk_range(total, pieces, x).hi;
    std::size_t j = static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), lo) -
                                             start.begin() - 1);
    for (std::size_t at = lo; at < hi && j < jobs.size(); ++j) {
      const std::size_t end = std::min(hi, start[j + 1]);
      if (end > at)
        std::memcpy(jobs[j].dst + (at - start[j]), jobs[j].src + (at - start[j]), end - at);
      at = std::max(at, end);
    }
  });
}

}  // namespace tristream::stream
