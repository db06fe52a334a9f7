// progress.hpp — converter internals: the progress line on a terminal and the per-stage timing
// report (TRISTREAM_CONVERT_TIMING=1). Neither changes what is converted. Both Progress calls
// are also the pipeline's interrupt points: they throw Error(Interrupted) once SIGINT or SIGTERM
// arrived (common/interrupt.hpp); the caller's temporaries are removed as the error unwinds.
#pragma once

#include <cstdint>
#include <string>

namespace tristream::conv {

// Monotonic seconds.
double now_seconds();

// The stage clock (TRISTREAM_CONVERT_TIMING set; otherwise both do nothing): stage_done(what)
// adds the seconds since the previous call to the stage `what` ("start" clears the totals and
// starts the clock); stage_report() prints the total per stage, in order of first appearance,
// and the peak RSS on stderr. TRISTREAM_CONVERT_TIMING=2 also prints every call with the RSS.
void stage_done(const char* what);
void stage_report();
// With the stage clock on, prints "[convert]   line" on stderr at once (a detail of a stage).
void stage_detail(const std::string& line);

// A one-line progress display on stderr (only when enabled: not quiet and stderr a terminal).
// Called from the converting thread only (update and stage may throw Error(Interrupted)).
class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // done / total: input bytes, or generated edges when !bytes; total 0 = unknown. At most five
  // updates a second are drawn.
  void update(std::uint64_t done, std::uint64_t total, std::uint64_t edges, bool bytes);
  // Names the stage now running.
  void stage(const char* what);
  // Erases the line.
  void clear();

 private:
  bool enabled_;
  double t0_, last_ = 0;
  bool shown_ = false;
};

}  // namespace tristream::conv
