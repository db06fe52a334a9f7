// merge_runs.cpp — the sorted runs of the out-of-core store into the unique edge stream in
// compact ids, with the vertex degrees (spill.hpp: merge_runs). SIGINT/SIGTERM is polled per group
// of runs and every 64 Ki edges of a part (common/interrupt.hpp): the merge stops with
// Error(Interrupted).
#include <algorithm>
#include <cstring>

#include "common/interrupt.hpp"
#include "merge.hpp"
#include "spill.hpp"

namespace tristream::conv {
namespace {

constexpr std::size_t kFanIn = 64;  // runs merged at a time

// Whether every run holds packed keys: the merges then compare and move 8-byte keys.
bool all_packed(const std::vector<std::unique_ptr<Run>>& runs) {
  for (const auto& r : runs)
    if (!r->packed) return false;
  return true;
}

// The runs merged into one, as records R (std::uint64_t when all of them are packed).
template <typename R>
std::unique_ptr<Run> merge_group(const std::vector<std::unique_ptr<Run>>& runs, std::uint64_t limit,
                                 const std::string& tmp_dir) {
  std::vector<std::unique_ptr<RunReader<R>>> readers;
  std::vector<RunReader<R>*> ptrs;
  for (const auto& r : runs) {
    readers.push_back(
        std::make_unique<RunReader<R>>(*r, r->segments, io_records(limit, runs.size(), sizeof(R))));
    ptrs.push_back(readers.back().get());
  }
  auto run = std::make_unique<Run>();
  run->files.push_back({0, std::make_unique<TempFile>(tmp_dir)});
  run->packed = sizeof(R) == 8;
  RunWriter<R> w(*run->files[0].file, io_records(limit, 1, sizeof(R)));
  merge_unique<R>(ptrs, [&](const R& e) { w.push(e); });
  w.flush();
  run->edges = w.count();
  run->segments = {w.segment()};
  return run;
}

// Step 1: merges groups of kFanIn runs (one after another) until one pass can take them all.
void reduce_runs(std::vector<std::unique_ptr<Run>>& runs, std::uint64_t limit,
                 const std::string& tmp_dir) {
  while (runs.size() > kFanIn) {
    std::vector<std::unique_ptr<Run>> next;
    for (std::size_t i = 0; i < runs.size(); i += kFanIn) {
      throw_if_interrupted();
      const std::size_t j = std::min(runs.size(), i + kFanIn);
      if (j - i == 1) {
        next.push_back(std::move(runs[i]));
        continue;
      }
      std::vector<std::unique_ptr<Run>> group;
      for (std::size_t k = i; k < j; ++k) group.push_back(std::move(runs[k]));
      next.push_back(all_packed(group) ? merge_group<std::uint64_t>(group, limit, tmp_dir)
                                       : merge_group<Edge64>(group, limit, tmp_dir));
    }
    runs = std::move(next);
  }
}

// The final merge cut into P key ranges: pos[r][p] is where part p starts in run r, first[p]
// the input records before part p (where its output may start).
struct KeyRanges {
  std::size_t parts = 1;
  std::vector<std::vector<std::uint64_t>> pos;
  std::vector<std::uint64_t> first;
};

// Step 2: splitters at quantiles of a sample of the runs (64 per part, spread by run length).
KeyRanges cut_key_ranges(const std::vector<std::unique_ptr<Run>>& runs, std::uint64_t bound,
                         unsigned threads) {
  KeyRanges k;
  const std::size_t P = bound >= 4096 * threads ? threads : 1;
  k.parts = P;
  std::vector<Edge64> split;
  if (P > 1) {
    std::vector<Edge64> sample;
    for (auto& r : runs) {
      const std::uint64_t c = std::max<std::uint64_t>(1, 64 * P * r->edges / bound);
      for (std::uint64_t i = 0; i < c && r->edges > 0; ++i)
        sample.push_back(r->at(r->edges * i / c));
    }
    std::sort(sample.begin(), sample.end());
    for (std::size_t p = 1; p < P; ++p) split.push_back(sample[sample.size() * p / P]);
  }
  k.pos.assign(runs.size(), std::vector<std::uint64_t>(P + 1, 0));
  k.first.assign(P + 1, 0);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (std::size_t p = 1; p < P; ++p) k.pos[r][p] = runs[r]->lower_bound(split[p - 1]);
    k.pos[r][P] = runs[r]->edges;
    for (std::size_t p = 0; p < P; ++p) k.first[p + 1] += k.pos[r][p + 1] - k.pos[r][p];
  }
  for (std::size_t p = 0; p < P; ++p) k.first[p + 1] += k.first[p];
  return k;
}

// Step 3's inner loop: the merged edges of one part, mapped to compact ids a batch at a time,
// with the degrees counted. A batch first prefetches its ids' table entries, then maps them and
// prefetches their degrees, then counts: the second ids come in no order, and their misses
// overlap instead of following one another. The first ids come in order (the merge's order; the
// map is monotone): equal ones are counted together, one atomic add per run of them.
class KeyMapper {
 public:
  // idmap null: the ids are kept as they are (MergedEdges::own_ids).
  KeyMapper(const IdMap* idmap, const std::uint32_t* table, std::uint32_t* degree)
      : idmap_(idmap), table_(table), degree_(degree) {}
  // Adds an edge; emit(key) is called for each key, in order, when its batch is full or on flush.
  template <typename Emit>
  void add(const Edge64& e, Emit&& emit) {
    batch_[size_++] = e;
    if (size_ == kBatch) map(emit);
  }
  template <typename Emit>
  void add(std::uint64_t key, Emit&& emit) {
    add(Edge64{key >> 32, key & 0xffffffffu}, emit);
  }
  template <typename Emit>
  void flush(Emit&& emit) {
    map(emit);
    if (run_) __atomic_fetch_add(&degree_[run_a_], run_, __ATOMIC_RELAXED);
    run_ = 0;
  }

 private:
  static constexpr std::size_t kBatch = 64;
  template <typename Emit>
  void map(Emit& emit) {
    const std::size_t n = size_;
    size_ = 0;
    if (idmap_ && table_)
      for (std::size_t i = 0; i < n; ++i) __builtin_prefetch(&table_[batch_[i].b]);
    for (std::size_t i = 0; i < n; ++i) {
      a_[i] = id(batch_[i].a);
      b_[i] = id(batch_[i].b);
      __builtin_prefetch(&degree_[b_[i]], 1);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (run_ && a_[i] != run_a_) {
        __atomic_fetch_add(&degree_[run_a_], run_, __ATOMIC_RELAXED);
        run_ = 0;
      }
      run_a_ = a_[i];
      ++run_;
      __atomic_fetch_add(&degree_[b_[i]], 1u, __ATOMIC_RELAXED);
      emit((a_[i] << 32) | b_[i]);
    }
  }

  std::uint64_t id(std::uint64_t x) const {
    return !idmap_ ? x : table_ ? table_[x] : (*idmap_)(x);
  }

  const IdMap* idmap_;
  const std::uint32_t* table_;
  std::uint32_t* degree_;
  Edge64 batch_[kBatch];
  std::uint64_t a_[kBatch], b_[kBatch];
  std::size_t size_ = 0;
  std::uint64_t run_a_ = 0;
  std::uint32_t run_ = 0;  // edges counted for run_a_ and not yet added
};

// Step 3 for one part: merges its slice of every run (records R), maps the ids, counts the
// degrees and writes its keys from position first[p] on (memory or file); returns the keys.
template <typename R>
std::uint64_t merge_part(std::vector<std::unique_ptr<Run>>& runs, const KeyRanges& k, std::size_t p,
                         const IdMap& idmap, const std::uint32_t* table, std::uint64_t limit,
                         MergedEdges& out) {
  const std::size_t P = k.parts;
  std::vector<std::unique_ptr<RunReader<R>>> readers;
  std::vector<RunReader<R>*> ptrs;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    readers.push_back(
        std::make_unique<RunReader<R>>(*runs[r], runs[r]->slice(k.pos[r][p], k.pos[r][p + 1]),
                                       io_records(limit, runs.size() * P, sizeof(R))));
    ptrs.push_back(readers.back().get());
  }
  std::unique_ptr<RunWriter<std::uint64_t>> uw;
  if (!out.in_memory)
    uw = std::make_unique<RunWriter<std::uint64_t>>(*out.file, io_records(limit, P, 8), k.first[p]);
  std::uint64_t* dst = out.in_memory ? out.keys.data() + k.first[p] : nullptr;
  std::uint64_t c = 0;
  auto emit = [&](std::uint64_t key) {
    if ((c & 0xffff) == 0) throw_if_interrupted();  // parallel_for carries it out
    if (uw)
      uw->push(key);
    else
      dst[c] = key;
    ++c;
  };
  KeyMapper mapper(out.own_ids ? nullptr : &idmap, table, out.degree.data());
  merge_unique<R>(ptrs, [&](const R& e) { mapper.add(e, emit); });
  mapper.flush(emit);
  if (uw) uw->flush();
  return c;
}

}  // namespace

void merge_runs(std::vector<std::unique_ptr<Run>>& runs, IdMap& idmap, unsigned threads,
                std::uint64_t limit, const std::string& tmp_dir, CloseBehind& close_behind,
                MergedEdges& out) {
  const std::uint64_t n = idmap.n();
  // 1. Few enough runs for one pass.
  reduce_runs(runs, limit, tmp_dir);
  std::uint64_t bound = 0, held = 0;
  for (auto& r : runs) {
    bound += r->edges;
    held += r->keys.capacity() * 8;  // (a run kept in memory)
  }
  out.in_memory = bound * 16 + held <= limit;  // the keys and their sort buffer
  // 2. Key ranges, one per worker.
  const KeyRanges k = cut_key_ranges(runs, bound, threads);
  const std::size_t P = k.parts;
  // 3. Each part merges its slice of every run (packed keys when every run holds them), maps the
  //    ids, counts the degrees and writes its keys from position first[p] on (memory or file).
  //    The ids map through the direct table when it is small beside the limit: one load per id
  //    instead of the bitmap's word, its rank and a popcount (the second ids come in no order:
  //    each lookup is a cache miss).
  //    Packed runs of such ids keep them instead (own_ids): compaction keeps their order, so
  //    the keys' order and the vertices' ranks are the same, and the degrees over the id space
  //    take the table's place.
  const bool packed = all_packed(runs);
  const std::uint64_t table_bytes = idmap.table_bytes();
  out.own_ids = packed && table_bytes > 0 && table_bytes <= limit / 8;
  if (!out.own_ids && table_bytes <= limit / 8) idmap.make_table(threads);
  const std::uint32_t* const table = idmap.table();
  if (out.in_memory)
    out.keys.reserve(bound + 1);
  else
    out.file = std::make_unique<TempFile>(tmp_dir);
  const std::uint64_t space = out.own_ids ? table_bytes / 4 : n;
  out.degree.reserve(space + 1);
  out.degree.resize(space);
  std::vector<std::uint64_t> count(P, 0);
  parallel_for(threads, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t p = lo; p < hi; ++p)
      count[p] = packed ? merge_part<std::uint64_t>(runs, k, p, idmap, table, limit, out)
                        : merge_part<Edge64>(runs, k, p, idmap, table, limit, out);
  });
  // 4. Pack the parts together (memory) or list them as segments (file).
  std::uint64_t m = 0;
  for (std::size_t p = 0; p < P; ++p) {
    if (out.in_memory)
      std::memmove(out.keys.data() + m, out.keys.data() + k.first[p], count[p] * 8);
    else if (count[p])
      out.source.segments.push_back(Segment{k.first[p], count[p]});
    m += count[p];
  }
  if (out.in_memory) {
    out.keys.resize(m);
    out.keys.trim();
    out.source.mem = &out.keys;
  } else {
    out.source.file = out.file.get();
  }
  out.source.count = m;
  idmap.drop_table();
  for (auto& r : runs)
    for (RunFile& f : r->files) close_behind.add(std::move(f.file));
  runs.clear();  // (a run in memory is unmapped here)
}

}  // namespace tristream::conv
