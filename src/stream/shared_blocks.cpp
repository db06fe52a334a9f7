// stream/shared_blocks.cpp — one host block store for the workers of a process
// (stream/shared_blocks.hpp).
#include "stream/shared_blocks.hpp"

#include "common/thread_priority.hpp"
#include "stream/clock.hpp"

namespace tristream::stream {

SharedBlocks::SharedBlocks(const GraphSource& g, const Plan& plan, unsigned threads,
                           HostRegistrar* registrar, double origin, bool chunk_spans)
    : rec_(origin, stats_, chunk_spans),
      pool_(threads, thread_nice() + kBuilderDrop),
      reader_(g, pool_, plan.window_chunks, plan.chunk_cache_bytes, rec_),
      builder_(plan.partition, reader_),
      store_(plan, builder_, rec_, registrar, preload_spare(plan)) {}

SharedBlocks::~SharedBlocks() {
  store_.stop_preload();
}

void SharedBlocks::start(std::function<void()> preloaded, const std::vector<std::size_t>* units) {
  // (the preload's registrar keeps the priority of the thread that starts it: a driver's)
  PriorityBoost boost(kDriverBoost);
  store_.on_preloaded(std::move(preloaded));
  store_.start_preload(boost.base(), units);
}

void SharedBlocks::finish(bool interrupted) {
  if (interrupted)
    store_.stop_preload();
  else
    store_.finish_preload();
  stats_.chunk_cache_peak_bytes = reader_.peak_bytes();
}

}  // namespace tristream::stream
