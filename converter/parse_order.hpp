// parse_order.hpp — converter internals: the parallel parse. A reader thread asks the Producer for
// jobs (at most about two per worker in flight), `threads` workers run them into Blocks, and the
// calling thread receives the Blocks strictly in input order, so everything downstream sees the
// same sequence whatever the thread count.
#pragma once

#include <atomic>
#include <exception>
#include <functional>

#include "pipeline.hpp"

namespace tristream::conv {

// Runs every job of `producer` and calls take(block) for each, in input order, on this thread.
// Workers call `parsed` (when not empty) on each block they parse without an error, on their own
// thread and in no order, before the block may be sorted. While `sort_blocks` is set, workers
// also sort their blocks (sort_block) and mark them sorted.
// A job's exception is stored in its block (Block::failure) for take to rethrow; an exception of
// take stops the workers and propagates. Returns the reader's exception, if the reader failed
// (every block before the failure has been taken by then), else null.
std::exception_ptr parse_in_order(Producer& producer, unsigned threads,
                                  const std::atomic<bool>& sort_blocks,
                                  const std::function<void(Block&)>& parsed,
                                  const std::function<void(Block&)>& take);

}  // namespace tristream::conv
