// stream/shared_blocks.hpp — one host block store for the workers of a process that would each
// preload the same blocks (several GPUs, several workers on one GPU, several CPU workers).
//
// With one store per worker every worker decompresses every chunk and builds every row part's
// blocks itself: W workers do the host work W times. SharedBlocks owns a chunk reader, a block
// builder and a thread pool of its own and one HostBlockStore over them; its preload runs once,
// and every worker's driver (UnitPreparer, through UnitFeed::shared_store) takes its blocks from
// it. It is made only where the store preloads (HostBlockStore::would_preload: range, hash or
// pair, p > 1, every row part's blocks within the plan's block cache): nothing is then evicted
// while a worker uses it.
//
// Preconditions: the workers that share it run the plan it was made for and are of one kind
// (all with device memory of their own, pinning through `registrar`; or all on the host,
// registrar null). The CUDA backend pins portable memory (cudaHostRegisterPortable), so one
// registration serves every device. Its statistics (the preload's decompression and builds) are
// its own: the count adds them once, in spans of worker -1.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/thread_pool.hpp"
#include "stream/block_builder.hpp"
#include "stream/chunk_reader.hpp"
#include "stream/host_block_store.hpp"
#include "stream/recorder.hpp"
#include "tristream/stats.hpp"

namespace tristream::stream {

class SharedBlocks {
 public:
  // The store for `plan` on `threads` threads (at the builders' priority below the calling
  // thread); origin: the run's clock; chunk_spans: keep the chunks' spans (a trace). All
  // arguments outlive it.
  SharedBlocks(const GraphSource& g, const Plan& plan, unsigned threads, HostRegistrar* registrar,
               double origin, bool chunk_spans);
  ~SharedBlocks();  // stops the preload
  SharedBlocks(const SharedBlocks&) = delete;
  SharedBlocks& operator=(const SharedBlocks&) = delete;

  HostBlockStore& store() { return store_; }
  // Starts the preload, its driver-side thread raised like a worker's driver; `preloaded` is
  // called once when it has ended (HostBlockStore::on_preloaded); units: the plan indices of the
  // units the workers will take, when known (HostBlockStore::start_preload; null: every unit).
  void start(std::function<void()> preloaded = {}, const std::vector<std::size_t>* units = nullptr);
  // Ends the preload: waits for it and rethrows its failure, or (interrupted) stops it.
  void finish(bool interrupted);
  // The store's statistics: decompression, builds, registrations (spans of unit -1).
  PipelineStats& stats() { return stats_; }

 private:
  PipelineStats stats_;
  Recorder rec_;
  ThreadPool pool_;
  ChunkReader reader_;
  BlockBuilder builder_;
  HostBlockStore store_;
};

}  // namespace tristream::stream
