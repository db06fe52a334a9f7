// spill.cpp — blocks of parsed edges into sorted runs on disk, and their ids into the id set
// (spill.hpp). Both merges run in parallel over key ranges.
#include "spill.hpp"

#include <cstring>

#include "merge.hpp"

namespace tristream::conv {

void SpillStore::spill(std::vector<std::unique_ptr<Block>>& blocks) {
  for (auto& b : blocks)
    if (!b->sorted) {
      sort_block(*b);
      b->sorted = true;
    }
  if (blocks.empty()) return;
  auto run = std::make_unique<Run>();
  run->file = std::make_unique<TempFile>(tmp_dir_);
  merge_edges(blocks, *run);
  merge_ids(blocks);
  blocks.clear();
  runs_.push_back(std::move(run));
}

// Edges: each key range writes its own segment of the run file, placed by the input counts (its
// output can only be shorter).
void SpillStore::merge_edges(std::vector<std::unique_ptr<Block>>& blocks, Run& run) {
  std::vector<SpanReader<Edge64>> spans;
  for (auto& b : blocks) spans.push_back({b->edges.begin(), b->edges.end()});
  MergePlan<Edge64> plan = plan_merge(spans, threads_);
  const std::size_t P = plan.parts.size();
  run.segments.resize(P);
  parallel_for(threads_, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t p = lo; p < hi; ++p) {
      std::vector<SpanReader<Edge64>*> ptrs;
      for (auto& s : plan.parts[p]) ptrs.push_back(&s);
      RunWriter<Edge64> w(*run.file, io_records(limit_, P, sizeof(Edge64)), plan.first[p]);
      merge_unique<Edge64>(ptrs, [&](const Edge64& e) { w.push(e); });
      w.flush();
      run.segments[p] = w.segment();
    }
  });
  for (const Segment& g : run.segments) run.edges += g.count;
}

// Ids: each key range merges into its place in a buffer of the input size, then the ranges are
// packed together.
void SpillStore::merge_ids(std::vector<std::unique_ptr<Block>>& blocks) {
  std::vector<SpanReader<std::uint64_t>> spans;
  spans.push_back({ids_.begin(), ids_.end()});
  for (auto& b : blocks) spans.push_back({b->ids.begin(), b->ids.end()});
  MergePlan<std::uint64_t> plan = plan_merge(spans, threads_);
  const std::size_t P = plan.parts.size();
  BigBuffer<std::uint64_t> merged(plan.first[P] + 1);
  std::vector<std::uint64_t> count(P, 0);
  parallel_for(threads_, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t p = lo; p < hi; ++p) {
      std::vector<SpanReader<std::uint64_t>*> ptrs;
      for (auto& s : plan.parts[p]) ptrs.push_back(&s);
      std::uint64_t* out = merged.data() + plan.first[p];
      merge_unique<std::uint64_t>(ptrs, [&](std::uint64_t x) { *out++ = x; });
      count[p] = static_cast<std::uint64_t>(out - (merged.data() + plan.first[p]));
    }
  });
  std::uint64_t n = 0;
  for (std::size_t p = 0; p < P; ++p) {
    std::memmove(merged.data() + n, merged.data() + plan.first[p], count[p] * 8);
    n += count[p];
  }
  merged.resize(n);
  merged.trim();
  ids_ = std::move(merged);
}

}  // namespace tristream::conv
