// pipeline.hpp — converter internals: the conversion driver shared by `convert` (edge-list files)
// and `generate` (synthetic edges). A Producer cuts the input into independent jobs on a reader
// thread; worker threads run them into Blocks (parse_order.hpp); the driver takes the Blocks in
// input order, keeps them in memory (in_memory.hpp) or spills sorted runs to disk (spill.hpp),
// and finally writes the .tcsr file (write_graph.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "parse.hpp"
#include "progress.hpp"
#include "tristream/convert.hpp"

namespace tristream::conv {

class Producer {
 public:
  virtual ~Producer() = default;
  // Runs on the reader thread: prepares the next job (reads the next block of input). Returns an
  // empty function at the end. Read errors throw (StreamError for a damaged compressed stream;
  // the driver adds the file and line).
  virtual std::function<void(Block&)> next() = 0;
  // Runs on the driver thread for every block in input order, before its edges are used;
  // `records_before` counts the records of the earlier blocks. May rewrite the block's error.
  virtual void check(Block& block, std::uint64_t records_before) {}
  // After the last block: whole-input checks (lines = all newlines seen).
  virtual void finish(std::uint64_t records, std::uint64_t lines) {}
  // For errors: the input's name, and the line number of the first block's first line minus 1.
  virtual std::string name() const = 0;
  virtual std::uint64_t first_line() const { return 0; }
  // Progress: work done and total (0 = unknown): input bytes, or generated edges for a producer
  // whose input_bytes() is 0.
  virtual std::uint64_t done() const { return 0; }
  virtual std::uint64_t total() const { return 0; }
  virtual std::uint64_t input_bytes() const { return done(); }
  // Bounds known before the parse (a generator of a fixed edge count): the records it delivers
  // and its largest id, at most. False when either is unknown.
  virtual bool bounds(std::uint64_t* records, std::uint64_t* max_id) const { return false; }
};

// Runs the whole conversion; `start` is when the caller's clock started (for seconds).
ConvertSummary run_conversion(Producer& producer, const std::string& output,
                              const ConvertOptions& options, double start_seconds);

// The memory limit in bytes (options.memory_limit, or default_host_budget(), the policy `count`
// uses too: MemAvailable and the room under cgroup limits, common/host_memory_policy.hpp).
std::uint64_t resolve_memory_limit(const ConvertOptions& options);
// Parse jobs in flight at most, between read and taken (parse_in_order's window), for `threads`
// workers (0 = resolve_threads(0)).
std::size_t parse_window(unsigned threads);
// Bytes of input per parse job: up to 8 MiB, less under small memory limits so that the jobs in
// flight (parse_window) take at most a thirty-second of the limit.
std::size_t job_bytes(const ConvertOptions& options);

}  // namespace tristream::conv
