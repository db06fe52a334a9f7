// sorter_feed.hpp — converter internals: the parsed blocks' keys on their way to an EdgeSorter
// (tristream/edge_sorter.hpp) for the driver (pipeline.cpp).
//
// The parse workers hand the sorter their blocks' packed keys through parsed_hook (in no order:
// the sorter's result does not depend on it) and free them. Blocks parsed while the sorter starts
// are kept here and appended on a few threads of their own once it is ready, while the parse goes
// on. Where the input needs the host's sorts (a wide block, the sorter full, or the driver's
// choice at the end) take_back hands every key the sorter holds, and every block kept here, to
// the driver's `hold` as host blocks; the feed is then inactive for good.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "parse.hpp"
#include "tristream/edge_sorter.hpp"

namespace tristream::conv {

class SorterFeed {
 public:
  using Hold = std::function<void(std::unique_ptr<Block>)>;

  // sorter: null for none (the feed inactive from the start); threads: the conversion's;
  // early_bytes: the keys kept while the sorter starts, at most (past it they wait for it).
  SorterFeed(EdgeSorter* sorter, unsigned threads, std::uint64_t early_bytes, Hold hold);
  ~SorterFeed();  // joins a flush in flight

  // The sorter while it holds the keys, else null.
  EdgeSorter* sorter() const { return sorter_; }
  // The keys it holds, as the driver has taken their blocks.
  std::uint64_t records() const { return records_; }

  // The workers' hook (empty when inactive): appends a parsed block's packed keys and frees
  // them, or marks the block for later while the sorter starts.
  std::function<void(Block&)> parsed_hook() const;

  // A block in input order, after the driver's checks: true when the sorter has (or will have)
  // its keys; false when the driver keeps it (the sorter's keys taken back first if it was active
  // and the block has edges: a wide block, or the sorter full).
  bool take(Block& b);

  // At the parse's end: the kept blocks appended, their flush joined, the sorter closed. False
  // (its keys taken back) when it could not take them all.
  bool finish();

  // Every key the sorter holds and every block kept here to `hold`; inactive afterwards.
  void take_back();

 private:
  struct Flushed {
    std::uint64_t appended = 0;
    std::vector<std::unique_ptr<Block>> left;
  };
  void start_flush();
  std::vector<std::unique_ptr<Block>> join_flush();
  void take_back(std::vector<std::unique_ptr<Block>> extra);

  EdgeSorter* sorter_;
  const unsigned threads_;
  const std::uint64_t early_bytes_;
  const Hold hold_;
  std::uint64_t records_ = 0;
  std::vector<std::unique_ptr<Block>> early_;  // parsed while the sorter started
  std::uint64_t early_records_ = 0;
  std::future<Flushed> flush_;  // kept blocks on their way to the sorter
};

}  // namespace tristream::conv
