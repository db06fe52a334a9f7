// tristream/convert.hpp — edge lists in, .tcsr out (converter/).
//
// Pipeline: parse (parallel over independent blocks of the input) -> compact original 64-bit ids
// to 0..n-1 -> drop self-loops -> merge duplicate and reverse-duplicate edges -> rank vertices by
// (degree, id) -> orient low rank -> high rank -> sort rows -> tcsr::Writer. Inputs whose edges do
// not fit the memory limit are converted out of core with identical output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tristream/edge_sorter.hpp"
#include "tristream/format.hpp"
#include "tristream/row_tally.hpp"
#include "tristream/wedges.hpp"

namespace tristream {

// Sees the oriented graph while convert() writes it, and gives the bytes of the file's census
// extension (format version 3; the planner's stored census: src/plan/census_store.hpp). The
// converter calls start() once the row offsets are known, then shows every edge once to the
// mark calls, then, after all marks, every row once to count_rows(), then finish(). Where the
// rows are sorted by an EdgeSorter that can tally them (edge_sorter.hpp) and the observer's
// figures are a row tally (tally_spec), the converter asks the sorter for the sums instead and
// gives them to take_tally(): then no mark or count call comes.
class RowObserver {
 public:
  virtual ~RowObserver() = default;
  // Bytes it holds for a graph of n vertices seen on `threads` threads (counted in the
  // converter's memory limit).
  virtual std::uint64_t memory_bytes(std::uint64_t n, unsigned threads) const = 0;
  // offsets: the n + 1 row offsets of G+, alive until finish() returns; wedges: the undirected
  // graph's wedges (from the degrees the converter ranks by).
  virtual void start(std::uint64_t n, const eid_t* offsets, unsigned threads,
                     const WedgeSum& wedges) = 0;
  // The edges of whole rows [r0, r1) (row r's ids at cols[offsets[r] - offsets[r0]]), or single
  // edges (row << 32 | col); any thread, concurrent calls allowed.
  virtual void mark_rows(std::uint64_t r0, std::uint64_t r1, const vid_t* cols) = 0;
  virtual void mark_edges(const std::uint64_t* keys, std::size_t count) = 0;
  // Whole rows [r0, r1) on thread t < threads (no two concurrent calls with the same t).
  virtual void count_rows(unsigned t, std::uint64_t r0, std::uint64_t r1, const vid_t* cols) = 0;
  // The census extension's payload; empty when the observer cannot take this census.
  virtual std::vector<unsigned char> finish() = 0;
  // After start(): whether its figures are the sums of a row tally (row_tally.hpp), and which.
  virtual bool tally_spec(RowTallySpec* spec) const {
    (void)spec;
    return false;
  }
  // The sums of the tally of tally_spec(), in place of every mark and count call.
  virtual void take_tally(RowTallySums&& sums) { (void)sums; }
};

struct ConvertOptions {
  // auto (from extension and content) | plain | snap | tsv | csv | mtx | metis | dimacs |
  // adjlist | bin32 | bin64 (docs/convert.md)
  std::string format = "auto";
  // CSV field delimiter: one punctuation character, "tab" or "space" (these two mean plain);
  // empty = ','. Given with format auto, it selects csv.
  std::string delimiter;
  // The first non-comment line of a plain, TSV, CSV or adjlist input names the columns and is
  // skipped (without it, such a line is skipped when its first column is not a number).
  bool header = false;
  // The two id columns hold vertex names (any token; a CSV field), numbered 0, 1, ... in order
  // of first appearance in an edge that is not a self-loop; the names go into the .tcsr file
  // (plain, snap, tsv, csv and adjlist input; docs/convert.md).
  bool names = false;
  std::uint64_t memory_limit = 0;  // bytes; 0 = a share of available RAM
  std::string tmp_dir;             // for spill files; empty = beside the output
  unsigned threads = 0;            // 0 = hardware concurrency
  bool quiet = false;              // no progress bar
  tcsr::WriteOptions write;
  // Sees the rows while they are written; its payload goes into the file as the census
  // extension (nullptr: none; not owned).
  RowObserver* observer = nullptr;
  // Removes the repeated edges and sorts the rows where it runs (cuda::make_edge_sorter: on a
  // GPU); the file is the same bytes (nullptr: the host's sorts; not owned).
  EdgeSorter* edge_sorter = nullptr;
};

struct ConvertSummary {
  std::uint64_t input_edges = 0;  // edge records read
  std::uint64_t self_loops = 0;   // dropped
  std::uint64_t duplicates = 0;   // duplicate or reverse-duplicate records merged
  std::uint64_t vertices = 0;     // n
  // Vertices the input's header declares (the Matrix Market size line), ids 1..declared, isolated
  // ones included; 0 when the dialect declares none.
  std::uint64_t declared_vertices = 0;
  std::uint64_t edges = 0;           // undirected simple edges (m)
  std::uint64_t max_degree = 0;      // undirected
  std::uint64_t max_out_degree = 0;  // oriented
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;  // size of the .tcsr file
  std::uint64_t raw_adjacency_bytes = 0;
  std::uint64_t compressed_adjacency_bytes = 0;
  std::string sorter = "host";  // where repeats were removed and rows sorted (EdgeSorter::name)
  bool out_of_core = false;
  double seconds = 0;
  // The memory limit the conversion kept to (--memory-limit, else the default host budget).
  std::uint64_t memory_limit_bytes = 0;
  // The process's peak resident memory when the conversion ended (VmHWM; 0 where unknown). In a
  // process that did other work first, that work's peak counts too.
  std::uint64_t host_peak_bytes = 0;
};

// Converts `input` (a path, or "-" for standard input) into the .tcsr file `output`.
// Bad input throws Error(Input) as "FILE:LINE: what"; no output file is left behind then.
ConvertSummary convert(const std::string& input, const std::string& output,
                       const ConvertOptions& options = {});

}  // namespace tristream
