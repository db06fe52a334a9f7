// pipeline.cpp — the conversion driver (pipeline.hpp): it takes the parsed blocks in input order,
// keeps them in memory while they fit, switches to out-of-core conversion past that, and hands
// the unique edges to the shared tail that writes the .tcsr file.
//
// In memory (the parsed records, 16 bytes each, fit 7/10 of the limit): in_memory.hpp.
// Out of core: groups of blocks become sorted runs on disk (spill.hpp): while every id is below
// 2^32 and the ids are dense, a group's packed keys are sorted by the in-memory sorter; else
// each parsed block is sorted by its worker and a group's blocks are merged. At the end the runs
// are merged into the unique edge stream in compact ids, kept in memory if it fits, else in a spill
// file (merge_runs). Both paths then share the tail (write_graph.hpp); the output is the same bytes
// either way, and for any thread count, because every stage sees the blocks in input order and
// sorts by key.
//
// Per-vertex memory: about 36 bytes per vertex (ids 8, degree 4, rank 4, out-degree 4 and
// offsets 8, permutation 8 handed to the writer; the ranking's counts a few MiB). Out of core,
// the part alive while rows are written (32 bytes per vertex) is taken out of the limit before
// the row ranges are sized; the rest lies beyond the limit.
//
// --names: the blocks' local names are mapped to ids in input order (name_block); the names table
// is taken out of the limit (up to half of it) before the edges are sized against it.
//
// With an EdgeSorter (options.edge_sorter; docs/convert.md, "On the GPU") every parsed block's
// packed keys go to it and the block is freed (sorter_feed.hpp); at the end it removes the
// repeats and sorts the rows (write_graph.hpp, rows_on_device.hpp). Where the input needs more
// (an id of 2^32 or more, --names, ids too sparse for per-id arrays, a tail beyond the limit) or
// the sorter is full, its keys come back into blocks here and the conversion goes on as if they
// had never left.
#include "pipeline.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#include "common/host_memory_policy.hpp"
#include "common/host_peak.hpp"
#include "in_memory.hpp"
#include "input.hpp"
#include "parse_order.hpp"
#include "progress.hpp"
#include "sorter_feed.hpp"
#include "spill.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "write_graph.hpp"

namespace tristream::conv {

std::uint64_t resolve_memory_limit(const ConvertOptions& options) {
  if (options.memory_limit) return options.memory_limit;
  const std::uint64_t b = default_host_budget();  // common/host_memory_policy.hpp, as `count`
  return b ? b : (std::uint64_t{4} << 30);
}

std::size_t parse_window(unsigned threads) {
  return 2 * static_cast<std::size_t>(resolve_threads(threads)) + 2;
}

std::size_t job_bytes(const ConvertOptions& options) {
  const std::uint64_t jobs = parse_window(options.threads);
  const std::uint64_t b = resolve_memory_limit(options) / 32 / jobs;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(b, 64 << 10, 8 << 20));
}

namespace {

// Least memory for everything but the writer: the process itself, parse jobs, a few blocks.
constexpr std::uint64_t kRestFloor = std::uint64_t{16} << 20;

// Needs round up, what is given rounds down, so that a refusal never reads "34 MiB < 34 MiB".
std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}
std::string mib_down(std::uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

class Driver {
 public:
  Driver(Producer& p, const std::string& output, const ConvertOptions& o)
      : producer_(p), output_(output), options_(o), progress_(!o.quiet && ::isatty(2)) {
    threads_ = resolve_threads(o.threads);
    baseline_ = host_resident_bytes();
    bounded_ = producer_.bounds(&bound_records_, &bound_max_id_);
    // The .tcsr writer's chunks in flight (raw, compressed, contexts) come out of the limit: a
    // quarter of it, between the writer's floor and the larger of its default batch (64 MiB raw
    // and frames) and two floors per thread (so that every thread compresses: a floor is one
    // chunk, its frame and a context).
    const std::uint64_t limit = resolve_memory_limit(o);
    summary_.memory_limit_bytes = limit;
    const std::uint64_t floor = tcsr::writer_floor_bytes(o.write.chunk_bytes, o.write.zstd_level);
    // Below the floor the conversion cannot run within the limit: an error before any work when
    // the machine (or its cgroup) has no room for it either; a smaller explicit --memory-limit
    // (which also serves to force out-of-core conversion) gets the writer's floor beyond it.
    const std::uint64_t room = o.memory_limit ? default_host_budget() : limit;
    if (room != 0 && room < floor + kRestFloor)
      throw Error(ErrorKind::Usage, "memory limit " + mib_down(room) +
                                        " is too small: the .tcsr writer needs " + mib(floor) +
                                        " for chunks of " + mib(o.write.chunk_bytes) +
                                        " (--chunk-size) and the rest of the conversion at least " +
                                        mib(kRestFloor) + "; at least " + mib(floor + kRestFloor) +
                                        " is needed (or a smaller --chunk-size)");
    const std::uint64_t top = std::max<std::uint64_t>(
        {floor, 2 * (std::uint64_t{64} << 20), std::uint64_t{2} * threads_ * floor});
    const std::uint64_t writer = std::clamp<std::uint64_t>(limit / 4, floor, top);
    options_.write.memory_bytes = writer;
    limit_ = limit > 2 * writer ? limit - writer : limit / 2;
    const auto slash = output.find_last_of('/');
    const std::string out_dir =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : output.substr(0, slash));
    tmp_dir_ = o.tmp_dir.empty() ? out_dir : o.tmp_dir;
    // Fail before the work, not after it.
    for (const std::string& dir : {out_dir, tmp_dir_})
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw Error(ErrorKind::Input, dir + ": cannot write there: " + std::strerror(errno));
    store_ = std::make_unique<SpillStore>(threads_, limit_, tmp_dir_);
    feed_ = std::make_unique<SorterFeed>(o.names ? nullptr : o.edge_sorter, threads_, limit_ / 4,
                                         [this](std::unique_ptr<Block> b) { hold(std::move(b)); });
  }

  ConvertSummary run(double start) {
    // 1. Parse everything (spilling runs on the way when the input outgrows the limit).
    stage_done("start");
    parse();
    producer_.finish(records_, lines_);
    parsed_ = bounded_ = true;  // (the input's own totals from now on)
    bound_records_ = records_;
    bound_max_id_ = max_id_;
    decltype(name_ids_)().swap(name_ids_);  // --names: the ids are final
    stage_done("parse");
    summary_.input_edges = records_;
    summary_.self_loops = loops_;
    summary_.input_bytes = producer_.input_bytes();
    // 2. Unique edges and the .tcsr file, in memory or out of core.
    std::uint64_t m = 0;
    TailResult tail;
    if (feed_->finish() && !device_fits()) feed_->take_back();
    if (feed_->sorter()) {
      tail = finish_on_device(m);
    } else if (!spilling_ && in_memory_fits()) {
      tail = finish_in_memory(m);
    } else {
      if (!spilling_) start_spilling();
      // The last group stays in memory (packed keys): the merge reads it there.
      store_->spill(held_, max_id_, packed_spills(), /*keep=*/true);
      held_bytes_ = held_records_ = 0;
      tail = finish_out_of_core(m);
    }
    // 3. The summary.
    summary_.vertices = tail.n;
    summary_.edges = m;
    summary_.duplicates = records_ - loops_ - m;
    summary_.max_degree = tail.max_degree;
    summary_.max_out_degree = tail.max_out_degree;
    summary_.out_of_core = spilling_;
    summary_.raw_adjacency_bytes = tail.raw_adjacency_bytes;
    summary_.compressed_adjacency_bytes = tail.compressed_adjacency_bytes;
    progress_.clear();
    describe_output();
    summary_.seconds = now_seconds() - start;
    summary_.host_peak_bytes = host_peak_bytes();
    stage_done("summary");
    stage_report();
    return summary_;
  }

 private:
  void parse() {
    const std::exception_ptr reader_error =
        parse_in_order(producer_, threads_, spill_flag_, feed_->parsed_hook(), [&](Block& b) {
          take(b);
          progress_.update(producer_.done(), producer_.total(), records_,
                           producer_.input_bytes() > 0);
        });
    if (!reader_error) return;
    try {
      std::rethrow_exception(reader_error);
    } catch (const StreamError& e) {
      throw input_error(producer_.name(), producer_.first_line() + lines_ + 1, e.what());
    }
  }

  // One block, in input order.
  void take(Block& b) {
    if (b.failure) std::rethrow_exception(b.failure);
    producer_.check(b, records_);
    if (b.error)
      throw input_error(producer_.name(), producer_.first_line() + lines_ + b.error_line,
                        b.error_msg);
    records_ += b.records;
    loops_ += b.loops;
    lines_ += b.lines;
    if (options_.names) name_block(b);
    max_id_ = std::max(max_id_, b.max_id);
    b.text.reset();
    if (feed_->take(b)) return;  // (the sorter has its keys)
    if (b.size() == 0) return;
    b.keys.trim();
    b.edges.trim();
    hold(std::make_unique<Block>(std::move(b)));
  }

  // Keeps a block of edges (in memory, or spilled with the others as the limit asks).
  void hold(std::unique_ptr<Block> b) {
    held_records_ += b->size();
    held_bytes_ += b->edge_bytes() + b->ids.size() * 8;
    wide_ |= b->wide;
    held_.push_back(std::move(b));
    // In memory up to 7/10 of the limit: the switch needs a fifth more (see start_spilling), and
    // the jobs in flight and the spill buffers the rest. Unless every record to come is known to
    // fit: then no switch can come, and no room is kept for one.
    if (!spilling_ && held_records_ * record_bytes() > edge_limit() / 10 * 7 && !all_fit())
      start_spilling();
    if (!spilling_) return;
    // Packed spills sort like the in-memory path (10 bytes an edge at the peak); the others need
    // room for each block's ids and the merge's output.
    if (!spill_flag_ && !packed_spills()) {  // (a wide block, or the ids no longer dense)
      spill_flag_ = true;
      spill_sorted_groups();
    }
    if (packed_spills() ? held_records_ * 10 > edge_limit() / 10 * 7
                        : held_bytes_ > edge_limit() / 2)
      spill_held();
  }

  // Whether the sorter's keys are converted there: the tail's host memory (the columns, 4 bytes
  // an edge, and 44 bytes per id: degrees, permutation, row lengths and offsets, the census) fits
  // the limit, and the sorter's per-id arrays fit beside its keys.
  bool device_fits() const {
    const std::uint64_t space = max_id_ + 1, records = feed_->records();
    if (records == 0 || records * 4 + space * 44 > edge_limit()) return false;
    return feed_->sorter()->fits_ids(space);
  }

  // Whether spills take packed keys (spill.hpp): no wide block so far, and the ids dense. Else
  // the workers sort their blocks for the spills' merges.
  bool packed_spills() const { return !wide_ && dense_ids(); }

  // --names: maps the block's local ids to ids of the whole input. The blocks come in input order
  // and list their names in order of first appearance, so the ids follow the order in which the
  // names first appear in the input, whatever the thread count.
  void name_block(Block& b) {
    widen(b);
    std::vector<std::uint64_t> global(b.names.size());
    for (std::uint64_t k = 0; k < b.names.size(); ++k) {
      const auto ins = name_ids_.emplace(std::string(b.names[k]), names_.size());
      if (ins.second) names_.add(b.names[k]);
      global[k] = ins.first->second;
    }
    b.names = tcsr::Names();
    std::uint64_t max_id = 0;
    for (Edge64& e : b.edges) {
      e = Edge64{global[e.a], global[e.b]};
      if (e.a > e.b) std::swap(e.a, e.b);
      max_id = std::max(max_id, e.b);
    }
    b.max_id = max_id;
    if (b.sorted) sort_block(b);  // sorted by local ids: sort again
  }

  void spill_held() {
    store_->spill(held_, max_id_, packed_spills());
    held_bytes_ = held_records_ = 0;
  }

  // The limit less what the names table takes (--names; at most half of it): the table stays
  // in memory for the whole conversion, so the edges get the rest.
  std::uint64_t edge_limit() const {
    // While parsing, a hash map node (string, id, links) about 64 bytes and the name a second
    // time; then the table alone (the name and its offset).
    const std::uint64_t names =
        name_ids_.size() * 64 + names_.bytes.size() * 2 + (names_.offsets.size() - 1) * 8;
    return limit_ - std::min(names, limit_ / 2);
  }

  bool dense_ids() const { return dense_ids(max_id_); }
  bool dense_ids(std::uint64_t max_id) const {
    const std::uint64_t words = max_id / 64 + 1;
    return max_id < (std::uint64_t{1} << 40) &&
           words * 16 <= std::max<std::uint64_t>(limit_ / 4, std::uint64_t{64} << 20);
  }
  // Peak bytes per held edge of the in-memory path: packed keys (8) turned into sorted keys in
  // place, with a few pages to spare (10); records (16) turned into keys (16); sparse ids: the
  // records, every endpoint and its sort buffer (48).
  std::uint64_t record_bytes() const { return record_bytes(max_id_, wide_); }
  std::uint64_t record_bytes(std::uint64_t max_id, bool wide) const {
    if (!dense_ids(max_id)) return 48;
    return wide ? 16 : 10;
  }
  // Whether all the input's records fit the in-memory path beside what the process held at the
  // start: known once the parse is done, or before it from the producer's bounds (a generator of
  // a fixed count), then at 9/10 of the limit while jobs are in flight.
  bool all_fit() const {
    if (!bounded_ || records_ > bound_records_ || max_id_ > bound_max_id_) return false;
    const bool wide = wide_ || bound_max_id_ >= (std::uint64_t{1} << 32);
    const std::uint64_t room = parsed_ ? edge_limit() : edge_limit() / 10 * 9;
    return bound_records_ * record_bytes(bound_max_id_, wide) + baseline_ <= room;
  }
  bool in_memory_fits() const {
    return held_records_ * record_bytes() <= std::max<std::uint64_t>(edge_limit(), 1);
  }

  // Switches to out-of-core conversion. Packed spills take the blocks held so far at once. Else
  // from now on workers sort their blocks, and the blocks held so far are sorted and spilled in
  // groups (spill_sorted_groups), so that the ids a sort adds (up to 16 bytes per edge) never
  // take memory beyond the limit.
  void start_spilling() {
    spilling_ = true;
    if (packed_spills()) {
      progress_.stage("sorting edges for out-of-core conversion");
      spill_held();
      return;
    }
    spill_flag_ = true;
    progress_.stage("sorting blocks for out-of-core conversion");
    spill_sorted_groups();
  }

  // The blocks held so far sorted and spilled in groups of a fifth of the limit.
  void spill_sorted_groups() {
    std::vector<std::unique_ptr<Block>> rest = std::move(held_);
    held_.clear();
    held_bytes_ = held_records_ = 0;
    std::size_t i = 0;
    while (i < rest.size()) {
      std::size_t j = i;
      std::uint64_t bytes = 0;
      while (j < rest.size() &&
             (j == i || bytes + rest[j]->size() * sizeof(Edge64) <= edge_limit() / 5))
        bytes += rest[j++]->size() * sizeof(Edge64);
      parallel_for(threads_, j - i, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
        for (std::size_t k = i + lo; k < i + hi; ++k)
          if (!rest[k]->sorted) {
            sort_block(*rest[k]);
            rest[k]->sorted = true;
          }
      });
      for (; i < j; ++i) {
        held_records_ += rest[i]->size();
        held_bytes_ += rest[i]->edge_bytes() + rest[i]->ids.size() * 8;
        held_.push_back(std::move(rest[i]));
      }
      if (held_bytes_ > edge_limit() / 2) spill_held();
    }
  }

  void check_vertices(std::uint64_t n) const {
    if (n > kMaxVertices)
      throw input_error(
          producer_.name(), 0,
          "graph has " + std::to_string(n) + " vertices; at most 2^32-1 are supported");
  }

  TailContext tail_context(std::uint64_t limit) {
    return TailContext{output_,
                       options_,
                       limit,
                       tmp_dir_,
                       threads_,
                       &progress_,
                       options_.names ? &names_ : nullptr,
                       {}};
  }

  TailResult finish_in_memory(std::uint64_t& m_out) {
    MemoryEdges e;
    build_in_memory(
        held_, held_records_, max_id_, dense_ids(), threads_,
        [this](std::uint64_t n) { check_vertices(n); }, progress_, e);
    m_out = e.source.count;
    return write_graph(e.source, e.n, e.degree, e.own_ids ? nullptr : &e.idmap,
                       tail_context(edge_limit()));
  }

  TailResult finish_on_device(std::uint64_t& m_out) {
    progress_.stage("sorting edges on the device");
    // 1. Repeats removed there; the degrees of every id below max_id_ + 1 here.
    const std::uint64_t space = max_id_ + 1;
    BigBuffer<std::uint32_t> degree(space + 1);
    degree.resize(space);
    EdgeSorter* const sorter = feed_->sorter();
    const std::uint64_t m = sorter->unique_and_degrees(space, degree.data());
    std::vector<std::uint64_t> part(threads_, 0);
    parallel_for(threads_, space, 1 << 16, [&](std::size_t lo, std::size_t hi, unsigned w) {
      std::uint64_t nz = 0;
      for (std::size_t v = lo; v < hi; ++v) nz += degree[v] != 0;
      part[w] += nz;
    });
    std::uint64_t n = 0;
    for (std::uint64_t x : part) n += x;
    check_vertices(n);
    stage_done("sort unique keys on the device");
    // 2. The tail, the rows sorted there (the keys' ids are the input's).
    KeySource src;
    src.device = sorter;
    src.count = m;
    m_out = m;
    summary_.sorter = sorter->name();
    return write_graph(src, n, degree, nullptr, tail_context(edge_limit()));
  }

  TailResult finish_out_of_core(std::uint64_t& m_out) {
    stage_done("last spill");
    progress_.stage("merging sorted runs");
    IdMap idmap;
    store_->make_idmap(idmap);
    const std::uint64_t n = idmap.n();
    check_vertices(n);
    CloseBehind close_behind;  // (declared first: joined after e is gone)
    MergedEdges e;
    merge_runs(store_->runs(), idmap, threads_, edge_limit(), tmp_dir_, close_behind, e);
    m_out = e.source.count;
    stage_done("merge runs");
    // The rows of G+ are filled by ranges when the keys stay on disk; their file closes behind
    // the work once they are read.
    TailContext ctx = tail_context(e.in_memory ? edge_limit() : edge_limit() / 2);
    ctx.source_read = [&] { close_behind.add(std::move(e.file)); };
    if (e.own_ids) idmap = IdMap();  // (the keys kept the input's ids)
    return write_graph(e.source, n, e.degree, e.own_ids ? nullptr : &idmap, ctx);
  }

  // The output's size (best effort; the adjacency's bytes come from the writer).
  void describe_output() {
    struct stat st {};
    if (::stat(output_.c_str(), &st) == 0)
      summary_.output_bytes = static_cast<std::uint64_t>(st.st_size);
  }

  Producer& producer_;
  std::string output_;
  ConvertOptions options_;
  Progress progress_;
  unsigned threads_ = 1;
  std::uint64_t limit_ = 0;
  std::string tmp_dir_;
  ConvertSummary summary_;
  std::uint64_t records_ = 0, loops_ = 0, lines_ = 0, max_id_ = 0;
  std::vector<std::unique_ptr<Block>> held_;  // parsed blocks not yet spilled
  std::uint64_t held_records_ = 0, held_bytes_ = 0;
  bool wide_ = false;  // a held block has ids of 2^32 or more
  bool spilling_ = false;
  bool parsed_ = false;   // every block read: records_ and max_id_ are final
  bool bounded_ = false;  // the bounds below known (the producer's, or final)
  std::uint64_t bound_records_ = 0, bound_max_id_ = 0;
  std::uint64_t baseline_ = 0;           // the process's resident bytes at the start
  std::atomic<bool> spill_flag_{false};  // workers sort their blocks
  std::unique_ptr<SpillStore> store_;
  std::unique_ptr<SorterFeed> feed_;  // the keys on their way to the edge sorter, if any
  tcsr::Names names_;                 // --names: by id of the whole input
  std::unordered_map<std::string, std::uint64_t> name_ids_;
};

}  // namespace

ConvertSummary run_conversion(Producer& producer, const std::string& output,
                              const ConvertOptions& options, double start_seconds) {
  Driver d(producer, output, options);
  return d.run(start_seconds);
}

}  // namespace tristream::conv
