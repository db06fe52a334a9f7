// stream/recorder.hpp — the run's spans (PipelineStats::spans) and stage totals, thread-safe: the
// background preload records its spans while the driver records the units'.
//
// The chunks' read and decompress spans come in batches, as many as the chunks a run decompresses
// (over 100,000 in a tight host budget), so they are kept as spans only when asked for (a trace);
// otherwise only their totals and, per unit, the decompression seconds that since() reports. The
// units' spans (transform, upload, kernel, wait) are a few per unit, which the host model counts.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tristream/stats.hpp"

namespace tristream::stream {

class Recorder {
 public:
  // origin: the run's start (now_s()); stats: where the spans go (outlives the recorder);
  // chunk_spans: keep the read and decompress spans too (for a trace).
  Recorder(double origin, PipelineStats& stats, bool chunk_spans = true)
      : origin_(origin), stats_(stats), chunk_spans_(chunk_spans) {}
  double origin() const { return origin_; }
  // A span of `stage` for `unit` (-1: the preload) from t0 to t1 (now_s() times).
  void span(const std::string& stage, std::int64_t unit, double t0, double t1, std::uint64_t bytes);
  // Seconds of `stage` spans of `unit` recorded since index *seen (which moves to the end);
  // without chunk spans, a unit's decompress seconds since the last call for that unit.
  double since(std::size_t* seen, const std::string& stage, std::int64_t unit);
  // Takes `seconds` off the transform stage's busy time (waits and decompression inside it).
  void less_transform(double seconds);
  // Adds to the bytes of A reused in its slot.
  void add_reused(std::uint64_t bytes);

 private:
  double origin_;
  PipelineStats& stats_;
  bool chunk_spans_;
  std::unordered_map<std::int64_t, double> decompress_s_;  // without chunk spans
  std::mutex mu_;
};

}  // namespace tristream::stream
