// stream/recorder.hpp — the run's spans (PipelineStats::spans) and stage totals, thread-safe: the
// background preload records its spans while the driver records the units'.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "tristream/stats.hpp"

namespace tristream::stream {

class Recorder {
 public:
  // origin: the run's start (now_s()); stats: where the spans go (outlives the recorder).
  Recorder(double origin, PipelineStats& stats) : origin_(origin), stats_(stats) {}
  double origin() const { return origin_; }
  // A span of `stage` for `unit` (-1: the preload) from t0 to t1 (now_s() times).
  void span(const std::string& stage, std::int64_t unit, double t0, double t1, std::uint64_t bytes);
  // Seconds of `stage` spans of `unit` recorded since index *seen (which moves to the end).
  double since(std::size_t* seen, const std::string& stage, std::int64_t unit);
  // Takes `seconds` off the transform stage's busy time (waits and decompression inside it).
  void less_transform(double seconds);
  // Adds to the bytes of A reused in its slot.
  void add_reused(std::uint64_t bytes);

 private:
  double origin_;
  PipelineStats& stats_;
  std::mutex mu_;
};

}  // namespace tristream::stream
