// spill.cpp — blocks of parsed edges into sorted runs on disk, and their ids into the id set
// (spill.hpp): packed keys through the in-memory sorter, else sorted blocks merged in parallel
// over key ranges.
#include "spill.hpp"

#include <algorithm>
#include <cstring>

#include "merge.hpp"
#include "sort.hpp"

namespace tristream::conv {
namespace {

// Sets bit x (several workers at once; a bit already set costs a load, not a locked write).
inline void mark(std::uint64_t* bits, std::uint64_t x) {
  std::uint64_t* w = bits + (x >> 6);
  const std::uint64_t m = std::uint64_t{1} << (x & 63);
  if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & m)) __atomic_fetch_or(w, m, __ATOMIC_RELAXED);
}

}  // namespace

void SpillStore::spill(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t max_id,
                       bool packed, bool keep) {
  if (blocks.empty()) return;
  if (packed) {
    bool narrow = max_id < (std::uint64_t{1} << 32) && ids_.empty();
    for (const auto& b : blocks) narrow = narrow && !b->wide;
    TS_CHECK(narrow, "packed spill of wide blocks or after a spill of records");
    spill_packed(blocks, max_id, keep);
    return;
  }
  ids_to_array();
  parallel_for(threads_, blocks.size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t i = lo; i < hi; ++i)
      if (!blocks[i]->sorted) {
        sort_block(*blocks[i]);
        blocks[i]->sorted = true;
      }
  });
  auto run = std::make_unique<Run>();
  run->files.push_back({0, std::make_unique<TempFile>(tmp_dir_)});
  ++files_;
  merge_edges(blocks, *run);
  merge_ids(blocks);
  blocks.clear();
  runs_.push_back(std::move(run));
}

// Packed keys: 1. the bitmap grown to max_id; 2. every block's keys sorted into one buffer,
// repeats removed (sort.hpp), each block freed once scattered and each bucket's ids marked while
// it is in cache; 3. the sorted buckets written at their places, in parallel (with `keep`, kept
// in memory as they lie instead).
void SpillStore::spill_packed(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t max_id,
                              bool keep) {
  const std::size_t words = static_cast<std::size_t>(max_id / 64 + 1);
  if (words > bits_.capacity()) {
    BigBuffer<std::uint64_t> grown(std::max(words, 2 * bits_.capacity()));
    if (bits_.size()) std::memcpy(grown.data(), bits_.data(), bits_.size() * 8);
    bits_ = std::move(grown);
  }
  bits_.resize(std::max(bits_.size(), words));
  std::uint64_t* const bits = bits_.data();
  SpanSortInput in;
  std::size_t n = 0;
  for (const auto& b : blocks) {
    in.spans.push_back({b->keys.data(), b->keys.size()});
    n += b->keys.size();
  }
  in.max_key = max_id >= 1 ? (max_id - 1) << 32 | max_id : 0;  // a < b <= max_id
  in.release = [&](std::size_t i) { blocks[i].reset(); };
  in.on_bucket = [bits](const std::uint64_t* k, std::size_t cnt, unsigned) {
    // The first ids come in order (one mark per run of them), the second ones in none: their
    // words are fetched ahead.
    constexpr std::size_t kAhead = 16;
    std::uint64_t last = ~std::uint64_t{0};
    for (std::size_t i = 0; i < cnt; ++i) {
      if (i + kAhead < cnt) __builtin_prefetch(bits + ((k[i + kAhead] & 0xffffffffu) >> 6));
      if ((k[i] >> 32) != last) {
        last = k[i] >> 32;
        mark(bits, last);
      }
      mark(bits, k[i] & 0xffffffffu);
    }
  };
  BigBuffer<std::uint64_t> out(n + 1);
  const SortedRuns sorted = sort_unique_spans(in, out, threads_);
  blocks.clear();
  auto run = std::make_unique<Run>();
  run->packed = true;
  const std::size_t B = sorted.start.size();
  if (keep) {  // (the buckets, in order, are the run's segments)
    for (std::size_t b = 0; b < B; ++b)
      if (sorted.count[b]) run->segments.push_back(Segment{sorted.start[b], sorted.count[b]});
    run->edges = sorted.total;
    run->keys = std::move(out);
    runs_.push_back(std::move(run));
    return;
  }
  std::vector<std::uint64_t> at(B + 1, 0);
  for (std::size_t b = 0; b < B; ++b) at[b + 1] = at[b] + sorted.count[b];
  // The buckets in groups of about equal bytes, each group written by one thread into a file of
  // its own (several writers of one file wait on its lock: on 16 cores that waiting took a
  // twentieth of the out-of-core conversion's CPU time).
  // (a file of at least file_bytes_; the runs' files together at most kMaxSpillFiles)
  std::size_t G = std::min<std::size_t>(
      {threads_, kSpillFiles,
       static_cast<std::size_t>(at[B] * 8 / std::max<std::uint64_t>(file_bytes_, 1))});
  if (files_ + G > kMaxSpillFiles) G = 1;
  G = std::max<std::size_t>(G, 1);
  std::vector<std::size_t> group{0};  // first bucket of each group, then B
  for (std::size_t g = 1; g < G; ++g) {
    const std::uint64_t want = at[B] / G * g;
    const auto b =
        static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), want) - at.begin());
    if (b > group.back() && b < B) group.push_back(b);
  }
  group.push_back(B);
  for (std::size_t g = 0; g + 1 < group.size(); ++g)
    run->files.push_back({at[group[g]], std::make_unique<TempFile>(tmp_dir_)});
  files_ += run->files.size();
  parallel_for(threads_, group.size() - 1, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t g = lo; g < hi; ++g)
      for (std::size_t b = group[g]; b < group[g + 1]; ++b)
        if (sorted.count[b])
          run->files[g].file->write_at((at[b] - at[group[g]]) * 8, out.data() + sorted.start[b],
                                       sorted.count[b] * 8);
  });
  run->edges = at[B];
  run->segments = {Segment{0, at[B]}};
  runs_.push_back(std::move(run));
}

// The bitmap's ids into the sorted array (once a spill cannot take packed keys).
void SpillStore::ids_to_array() {
  if (!bits_.capacity()) return;
  std::uint64_t n = 0;
  for (const std::uint64_t w : bits_) n += static_cast<std::uint64_t>(__builtin_popcountll(w));
  ids_.reserve(n + 1);
  for (std::size_t w = 0; w < bits_.size(); ++w)
    for (std::uint64_t word = bits_[w]; word; word &= word - 1)
      ids_.push_back((static_cast<std::uint64_t>(w) << 6) +
                     static_cast<std::uint64_t>(__builtin_ctzll(word)));
  bits_.release();
}

void SpillStore::make_idmap(IdMap& idmap) {
  if (bits_.capacity())
    idmap.from_bitmap(std::move(bits_));
  else
    idmap.from_sorted(std::move(ids_));
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
      RunWriter<Edge64> w(*run.files[0].file, io_records(limit_, P, sizeof(Edge64)), plan.first[p]);
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
