// count_image.hpp — whether a GPU count decodes the graph into the in-core image while its devices
// start (stream/in_core_image.hpp), and starting it: the rules on the host memory's share, on
// mpirun's ranks and on the count being in core, in one place for api/count.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "stream/in_core_image.hpp"
#include "stream/workers.hpp"
#include "tristream/plan.hpp"
#include "tristream/tristream.hpp"

namespace tristream::api {

// Whether the count will be in core: one part asked for and the in-core footprint within
// --gpu-memory, or within nine tenths of `device`'s memory divided among the machine's ranks that
// share a GPU (the planner then finds it in core unless the GPU's free memory is far below its
// total: an image then serves the chunks).
bool in_core_on_device(const GraphSource& g, const CountOptions& o, bool per_vertex,
                       const Communicator* comm, int device);

// Whether an image of `bytes` may take them of `room` (the available host memory, or a host
// budget): within a quarter, or within half when the count will be in core (`in_core`, asked only
// then; InCoreImage::room_for).
bool image_fits(std::uint64_t bytes, std::uint64_t room, const std::function<bool()>& in_core);

// The in-core image (stream/in_core_image.hpp), started while the devices start when the count
// runs on a GPU: CUDA built in and a GPU driver present, no host budget given, and the image
// within a quarter of the available host memory (shared by the machine's ranks under mpirun), or
// within half of it when the count will be in core (`in_core`, in_core_on_device: the plan then
// needs little of the host beside it, no partitions and no chunk cache; Kronecker 29's image of
// 33.4 GiB on a machine of 125 GiB is kept only so).
// Under mpirun with more than two ranks (kImageRanksOutOfCore), where out of core each rank reads
// only the chunks of its own units, only when the count will be in core: every rank then counts a
// slice of the whole graph (or, split, its share of the units), which it decodes anyway, into
// the image as one process does rather than through staging buffers with nothing to overlap
// (measured on four H200s: 2.7x one GPU's time with 2 ranks). beside_plan: a plan is made while
// it decodes (count.cpp's plan ahead); it then decodes on half the threads, leaving the plan and
// the pipeline's first units the rest, until InCoreImage::widen (GPUs that claim the in-core
// unit's rows: stream/workers.cpp).
std::shared_ptr<stream::InCoreImage> start_in_core_image(const GraphSource& g,
                                                         const CountOptions& o,
                                                         const Communicator* comm,
                                                         const std::function<bool()>& in_core,
                                                         bool beside_plan);

}  // namespace tristream::api
