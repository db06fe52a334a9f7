// stream/recorder.cpp — the run's spans (stream/recorder.hpp).
#include "stream/recorder.hpp"

namespace tristream::stream {

void Recorder::span(const std::string& stage, std::int64_t unit, double t0, double t1,
                    std::uint64_t bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  const bool chunk_stage = stage == "read" || stage == "decompress";
  if (chunk_spans_ || !chunk_stage)
    stats_.spans.push_back(TraceSpan{stage, unit, t0 - origin_, t1 - origin_, bytes});
  else if (stage == "decompress")
    decompress_s_[unit] += t1 - t0;
  StageStats* s = stage == "read"         ? &stats_.read
                  : stage == "decompress" ? &stats_.decompress
                  : stage == "transform"  ? &stats_.transform
                  : stage == "upload"     ? &stats_.upload
                  : stage == "kernel"     ? &stats_.kernel
                                          : nullptr;
  if (s) {
    s->busy_s += t1 - t0;
    s->bytes += bytes;
    ++s->spans;
  }
}

double Recorder::since(std::size_t* seen, const std::string& stage, std::int64_t unit) {
  std::lock_guard<std::mutex> lk(mu_);
  double t = 0;
  for (std::size_t x = *seen; x < stats_.spans.size(); ++x)
    if (stats_.spans[x].unit == unit && stats_.spans[x].stage == stage)
      t += stats_.spans[x].end_s - stats_.spans[x].start_s;
  *seen = stats_.spans.size();
  if (!chunk_spans_ && stage == "decompress") {
    const auto it = decompress_s_.find(unit);
    if (it != decompress_s_.end()) {
      t += it->second;
      decompress_s_.erase(it);
    }
  }
  return t;
}

void Recorder::less_transform(double seconds) {
  std::lock_guard<std::mutex> lk(mu_);
  stats_.transform.busy_s -= seconds;
}

void Recorder::add_reused(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  stats_.reused_bytes += bytes;
}

}  // namespace tristream::stream
