// spill.hpp — converter internals: the out-of-core store. Groups of parsed blocks become sorted
// runs of unique edges on disk, in original ids, and the set of all ids seen is kept in memory.
// While every id is below 2^32 and the ids are dense (a bitmap of them is small beside the
// limit), a group's packed keys are sorted by the in-memory sorter (sort.hpp) and written as a run
// of packed keys (8 bytes an edge), and the ids are bits of a bitmap; otherwise the blocks are
// sorted one by one and merged (in parallel over key ranges) into a run of Edge64 records, and
// the ids are a sorted array (8 bytes per vertex). merge_runs then merges the runs into the unique
// edge stream in compact ids with the vertex degrees.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "idmap.hpp"
#include "parse.hpp"
#include "spill_file.hpp"
#include "write_graph.hpp"

namespace tristream::conv {

// A spill of packed keys is written into up to kSpillFiles files at once, one writer each, each
// of kSpillFileBytes or more, while the store's files number at most kMaxSpillFiles (then one).
constexpr std::size_t kSpillFiles = 8;
constexpr std::uint64_t kSpillFileBytes = std::uint64_t{128} << 20;
constexpr std::size_t kMaxSpillFiles = 256;

class SpillStore {
 public:
  // `limit` sizes the stream buffers (io_records); spill files go to tmp_dir; a spill of packed
  // keys takes a file for every file_bytes (at most kSpillFiles, and threads).
  SpillStore(unsigned threads, std::uint64_t limit, std::string tmp_dir,
             std::uint64_t file_bytes = kSpillFileBytes)
      : threads_(threads), limit_(limit), tmp_dir_(std::move(tmp_dir)), file_bytes_(file_bytes) {}
  // Turns the blocks into one new run and their ids into the id set, then clears `blocks`.
  // `max_id` bounds every id spilled so far and now. `packed`: the blocks' packed keys are
  // sorted in memory and their ids marked in the bitmap (the caller's choice, Driver::
  // packed_spills: every block so far packed, max_id below 2^32, a bitmap of max_id + 1 bits
  // small beside the limit; once false, false for the rest of the input). `keep`: a run of packed
  // keys stays in memory (the last spill: merge_runs reads it there; 8 bytes per held edge).
  // Nothing happens for no blocks.
  void spill(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t max_id, bool packed,
             bool keep = false);
  std::vector<std::unique_ptr<Run>>& runs() { return runs_; }
  // The id map of all spilled blocks' ids (the set is moved out).
  void make_idmap(IdMap& idmap);

 private:
  void spill_packed(std::vector<std::unique_ptr<Block>>& blocks, std::uint64_t max_id, bool keep);
  void ids_to_array();
  void merge_edges(std::vector<std::unique_ptr<Block>>& blocks, Run& run);
  void merge_ids(std::vector<std::unique_ptr<Block>>& blocks);
  unsigned threads_;
  std::uint64_t limit_;
  std::string tmp_dir_;
  std::vector<std::unique_ptr<Run>> runs_;
  std::uint64_t file_bytes_;
  std::size_t files_ = 0;  // the runs' spill files made so far
  // The id set: bits_ while every spill was packed, else ids_ (sorted, unique).
  BigBuffer<std::uint64_t> bits_;
  BigBuffer<std::uint64_t> ids_;
};

// The unique edges in compact ids, with the degrees; keys in memory when they and their sort
// buffer fit the limit (16 bytes per edge), else in a spill file. `source` points into this
// object, which therefore must not move once filled.
struct MergedEdges {
  BigBuffer<std::uint64_t> keys;
  std::unique_ptr<TempFile> file;
  KeySource source;
  BigBuffer<std::uint32_t> degree;
  bool in_memory = false;
  // The keys and the degrees in the input's ids (degree: one entry per id up to the largest, 0 for
  // the ids absent) instead of compact ids: packed runs (ids below 2^32) of dense ids whose direct
  // table would fit the merge. Compaction keeps the ids' order, so the result is the same.
  bool own_ids = false;
};

// Merges all runs of the store (at most 64 at a time, then in parallel over key ranges cut at
// quantiles of a sample) into `out`, mapping the ids through idmap (through its direct table
// while the merge runs, when that takes at most an eighth of `limit`; packed runs of such ids are
// not mapped: out.own_ids); the runs' files are then handed to close_behind (closing gigabytes
// of unlinked file takes seconds) and runs is emptied. The result's order is the key order,
// whatever the thread count.
void merge_runs(std::vector<std::unique_ptr<Run>>& runs, IdMap& idmap, unsigned threads,
                std::uint64_t limit, const std::string& tmp_dir, CloseBehind& close_behind,
                MergedEdges& out);

}  // namespace tristream::conv
