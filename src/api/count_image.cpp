// count_image.cpp — the in-core image's rules for a count (api/count_image.hpp).
#include "api/count_image.hpp"

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

#include "common/host_memory_policy.hpp"
#include "common/thread_pool.hpp"
#include "tristream/counter.hpp"

namespace tristream::api {

namespace {
// Ranks (in all) up to which every rank decodes the in-core image out of core too.
constexpr int kImageRanksOutOfCore = 2;
}  // namespace

bool in_core_on_device(const GraphSource& g, const CountOptions& o, bool per_vertex,
                       const Communicator* comm, int device) {
  if (o.parts > 1) return false;
  std::uint64_t budget = o.gpu_memory.bytes();
  if (!budget) budget = cuda_device_total_memory(device) / 10 * 9 / ranks_per_gpu(comm);
  return budget > 0 && in_core_bytes(g.n(), g.m(), per_vertex) <= budget;
}

bool image_fits(std::uint64_t bytes, std::uint64_t room, const std::function<bool()>& in_core) {
  using Room = stream::InCoreImage::Room;
  const Room fit = stream::InCoreImage::room_for(bytes, room);
  return fit == Room::Fits || (fit == Room::InCoreOnly && in_core());
}

std::shared_ptr<stream::InCoreImage> start_in_core_image(const GraphSource& g,
                                                         const CountOptions& o,
                                                         const Communicator* comm,
                                                         const std::function<bool()>& in_core,
                                                         bool beside_plan) {
#ifdef TRISTREAM_HAVE_CUDA
  const bool gpu = o.backend != "cpu" && ::access("/dev/nvidiactl", F_OK) == 0;
#else
  const bool gpu = false;
#endif
  if (!gpu || o.host_memory.bytes() || g.m() == 0 || g.offsets()[0] != 0 ||
      std::getenv("TRISTREAM_NO_IN_CORE_IMAGE"))
    return nullptr;
  const bool ranks = comm && comm->size() > 1;
  const std::uint64_t ranks_here = ranks ? static_cast<std::uint64_t>(comm->local_size()) : 1;
  const std::uint64_t bytes = stream::InCoreImage::slot_bytes(g.n(), g.m());
  if (!image_fits(bytes, available_host_memory() / ranks_here, in_core)) return nullptr;
  // (two ranks: each one's units need most of the graph's row parts anyway, which its image
  // decodes while the device starts, and its store views instead of copying)
  if (ranks && comm->size() > kImageRanksOutOfCore && !in_core()) return nullptr;
  // (TRISTREAM_IMAGE_THREADS=N decodes on N threads, to measure the share)
  const unsigned all = resolve_threads(o.threads);
  unsigned threads = beside_plan ? std::max(1u, all / 2) : all;
  if (const char* e = std::getenv("TRISTREAM_IMAGE_THREADS"); e && std::atoi(e) > 0)
    threads = static_cast<unsigned>(std::atoi(e));
  return std::make_shared<stream::InCoreImage>(g, threads, all);
}

}  // namespace tristream::api
