// stats.cpp — pipeline statistics: derived figures, JSON, the one-line summary, Chrome traces.
#include "tristream/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/json.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace {

// Sorted, merged intervals.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

double covered(const std::vector<std::pair<double, double>>& u, double a, double b) {
  double c = 0;
  for (const auto& iv : u) {
    const double lo = std::max(a, iv.first), hi = std::min(b, iv.second);
    if (hi > lo) c += hi - lo;
  }
  return c;
}

std::string stage_json(const StageStats& s) {
  JsonObject o;
  o.add("busy_s", s.busy_s)
      .add("bytes", std::uint64_t{s.bytes})
      .add("spans", std::uint64_t{s.spans});
  return o.str();
}

std::string fmt_gb(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(b) / 1e9);
  return buf;
}

}  // namespace

void PipelineStats::finish_from_spans() {
  std::vector<std::pair<double, double>> k;
  for (const auto& s : spans)
    if (s.stage == "kernel") k.emplace_back(s.start_s, s.end_s);
  const auto ku = merged(std::move(k));
  const double in_kernel = covered(ku, 0, wall_s);
  exposed_transfer_s = std::max(0.0, wall_s - in_kernel);
  double up = 0, hidden = 0;
  for (const auto& s : spans)
    if (s.stage == "upload" && s.end_s > s.start_s) {
      up += s.end_s - s.start_s;
      hidden += covered(ku, s.start_s, s.end_s);
    }
  overlap = up > 0 ? hidden / up : 1.0;
}

std::string PipelineStats::to_json() const {
  JsonObject o;
  o.add("backend", backend)
      .add("scheme", scheme)
      .add("parts", unsigned{parts})
      .add("units", std::uint64_t{units})
      .add("units_skipped", std::uint64_t{units_skipped})
      .add("replans", std::uint64_t{replans})
      .add("device_budget", std::uint64_t{device_budget})
      .add("host_budget", std::uint64_t{host_budget})
      .add("slot_bytes", std::uint64_t{slot_bytes})
      .add("reused_bytes", std::uint64_t{reused_bytes})
      .add("device_cache_hit_bytes", std::uint64_t{device_cache_hit_bytes})
      .add("chunk_cache_peak_bytes", std::uint64_t{chunk_cache_peak_bytes})
      .raw("read", stage_json(read))
      .raw("decompress", stage_json(decompress))
      .raw("transform", stage_json(transform))
      .raw("upload", stage_json(upload))
      .raw("kernel", stage_json(kernel))
      .add("census_s", census_s)
      .add("plan_s", plan_s)
      .add("planned_ahead_s", planned_ahead_s)
      .add("release_s", release_s)
      .add("wall_s", wall_s)
      .add("exposed_transfer_s", exposed_transfer_s)
      .add("overlap", overlap);
  if (ranks > 1) o.add("ranks", ranks).add("rank_split", rank_split);
  if (!cutoff.empty()) o.add("cutoff", cutoff);
  if (!workers.empty()) {
    std::string arr = "[";
    for (std::size_t w = 0; w < workers.size(); ++w) {
      const WorkerStats& x = workers[w];
      JsonObject wo;
      wo.add("worker", std::uint64_t{w})
          .add("backend", x.backend)
          .add("device", x.device)
          .add("units", std::uint64_t{x.units})
          .add("busy_s", x.busy_s)
          .add("wall_s", x.wall_s)
          .add("upload_bytes", std::uint64_t{x.upload_bytes})
          .add("decompress_bytes", std::uint64_t{x.decompress_bytes})
          .add("work", x.work);
      arr += (w ? "," : "") + wo.str();
    }
    o.raw("workers", arr + "]");
  }
  return o.str();
}

std::string PipelineStats::summary() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s %s p=%u: %llu units in %.3f s (kernel %.3f s, decompress %.3f s, transform "
                "%.3f s, upload %.3f s / %s); exposed transfer %.3f s, overlap %.0f%%%s",
                backend.c_str(), scheme.c_str(), parts, static_cast<unsigned long long>(units),
                wall_s, kernel.busy_s, decompress.busy_s, transform.busy_s, upload.busy_s,
                fmt_gb(upload.bytes).c_str(), exposed_transfer_s, overlap * 100.0,
                replans ? (", " + std::to_string(replans) + " re-plan(s)").c_str() : "");
  std::string out = buf;
  if (!cutoff.empty()) out += "; cut-off worker " + cutoff;
  return out;
}

void PipelineStats::write_trace(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error(ErrorKind::Usage, "--trace: cannot write '" + path + "'");
  write_trace(f);
  if (std::fclose(f) != 0)
    throw Error(ErrorKind::Internal, "--trace: error writing '" + path + "'");
}

void PipelineStats::write_trace(std::FILE* f) const {
  // lanes: the stages, then the block cache's row part builds (their passes and registrations)
  static const char* lanes[] = {"decompress", "transform", "upload",  "kernel",
                                "wait",       "build",     "register"};
  constexpr int kLanes = sizeof(lanes) / sizeof(lanes[0]);
  std::fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  // one process per worker (pid = worker + 1), each with the stage lanes; pid 0: the host
  // block store the workers share (its spans are worker -1's), when there is one
  const std::size_t procs = std::max<std::size_t>(1, workers.size());
  bool shared = false;
  for (const auto& s : spans) shared = shared || s.worker < 0;
  for (std::size_t w = shared ? 0 : 1; w <= procs; ++w) {
    std::string name = "tristream " + backend + " " + scheme + " p=" + std::to_string(parts);
    if (w == 0)
      name = "host block store shared by the workers";
    else if (!workers.empty())
      name = "worker " + std::to_string(w - 1) + ": " + workers[w - 1].device;
    std::fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%zu,\"args\":{\"name\":%s}}",
                 w > (shared ? 0u : 1u) ? ",\n" : "", w, JsonObject::quote(name).c_str());
    for (int l = 0; l < kLanes; ++l)
      std::fprintf(f,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%zu,\"tid\":%d,"
                   "\"args\":{\"name\":\"%s\"}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\","
                   "\"pid\":%zu,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                   w, l + 1, lanes[l], w, l + 1, l);
  }
  for (const auto& s : spans) {
    int tid = 0;
    for (int l = 0; l < kLanes; ++l)
      if (s.stage == lanes[l]) tid = l + 1;
    if (tid == 0 || s.end_s <= s.start_s) continue;
    std::fprintf(f,
                 ",\n{\"name\":\"%s u%lld\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                 "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"unit\":%lld,\"bytes\":%llu}}",
                 s.stage.c_str(), static_cast<long long>(s.unit), s.stage.c_str(), s.worker + 1,
                 tid, s.start_s * 1e6, (s.end_s - s.start_s) * 1e6, static_cast<long long>(s.unit),
                 static_cast<unsigned long long>(s.bytes));
  }
  std::fprintf(f, "\n],\"otherData\":%s}\n", to_json().c_str());
}

}  // namespace tristream
