// sort.hpp — converter internals: the parallel sort of 64-bit keys with repeats removed, reading
// its keys from any list of spans (the parsed blocks themselves, or pieces of one buffer), so
// that no pass has to gather them into one buffer first. One MSD radix pass on the top bits
// scatters the keys into the output buffer (through write-combining buffers, scatter.hpp); each
// bucket is then sorted on its own (in cache) and its repeats removed, and a caller's hook sees
// it there while it is hot (degree counting).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "util.hpp"

namespace tristream::conv {

// A run of keys to sort.
struct KeySpan {
  std::uint64_t* data = nullptr;
  std::size_t count = 0;
};

// keys[0, n) as spans of at most 2^21 keys (16 MiB) and at least one per thread, in order: the
// input of a sort whose scatter returns the keys' pages as it goes (SpanSortInput::drop_read).
std::vector<KeySpan> key_spans(std::uint64_t* keys, std::size_t n, unsigned threads);

struct SpanSortInput {
  std::vector<KeySpan> spans;  // the keys (read once, by the scatter)
  std::uint64_t max_key = 0;   // a bound of the largest key, 0 = unknown (then a pass finds it)
  // With a rank table: every key a << 32 | b is first oriented in place (the histogram pass
  // writes min(rank[a], rank[b]) << 32 | max(rank[a], rank[b]) over it) and sorted as such;
  // max_key must then bound the oriented keys.
  const std::uint32_t* orient = nullptr;
  // Called once for each span after its keys have been scattered (e.g. to free them); may run on
  // any worker, for different spans at once. Optional.
  std::function<void(std::size_t span)> release;
  // The spans lie in ascending order in one buffer, whose pages the scatter may return to the OS
  // as it goes (in whole 2 MiB pieces read by one worker, so that few calls do it).
  bool drop_read = false;
  // The order inside each run does not matter: buckets then lose their repeats by hashing instead
  // of sorting (the keys kept in their order in the spans, which does not depend on the threads;
  // a bucket of more than 2^16 keys first grouped by a second hash, so that each group's table
  // stays in cache).
  bool unordered = false;
  // Called once for each non-empty bucket once it is sorted (or, unordered, hashed) without
  // repeats: its keys and the worker (< threads). Buckets come in no particular order, on several
  // workers at once. Optional.
  std::function<void(const std::uint64_t* keys, std::size_t count, unsigned worker)> on_bucket;
};

// The result: the unique keys are the runs [start, start + count) of the output buffer, in key
// order (repeats leave gaps between them); each run sorted unless the input was unordered.
struct SortedRuns {
  std::vector<std::size_t> start, count;
  std::size_t total = 0;  // unique keys
};

// Sorts the keys of in.spans into out (contents discarded; capacity at least the number of keys).
// out is filled in small pages, so that its pages touched follow the keys written while the
// spans are released. Deterministic: the runs hold the same keys for any thread count.
SortedRuns sort_unique_spans(const SpanSortInput& in, BigBuffer<std::uint64_t>& out,
                             unsigned threads);

// The bucket of key k is k >> sort_shift(max_key) when the keys are at most max_key (> 0) and there
// are at least 2^16 of them (fewer are sorted as one bucket).
int sort_shift(std::uint64_t max_key);

// Moves the runs together into keys[0, runs.total) (keys' contents discarded; capacity at least
// out.size()): up to 4 threads by moving them left inside out, which then becomes keys (no fresh
// pages); more threads copy them in parallel, dropping out's pages as they go (out is then empty).
void join_runs(const SortedRuns& runs, BigBuffer<std::uint64_t>& out,
               BigBuffer<std::uint64_t>& keys, unsigned threads);

}  // namespace tristream::conv
