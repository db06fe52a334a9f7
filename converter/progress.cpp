// progress.cpp — the converter's progress line and its per-stage timing report (progress.hpp).
#include "progress.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "common/interrupt.hpp"

namespace tristream::conv {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// The process's CPU seconds (user + system, all threads).
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

struct StageTime {
  std::string what;
  double seconds = 0, cpu = 0;
};

// The stage clock: totals per stage name (wall and CPU seconds), in order of first appearance.
struct StageClock {
  int level = 0;  // TRISTREAM_CONVERT_TIMING: 0 off, 1 the totals, 2 also every call
  double last = 0, last_cpu = 0;
  std::vector<StageTime> totals;
  StageClock() {
    const char* v = std::getenv("TRISTREAM_CONVERT_TIMING");
    level = v ? std::max(1, std::atoi(v)) : 0;
    last = now_seconds();
    last_cpu = cpu_seconds();
  }
};

StageClock& stage_clock() {
  static StageClock c;
  return c;
}

// VmRSS and VmHWM in KiB.
void memory_kib(std::uint64_t& rss, std::uint64_t& hwm) {
  rss = hwm = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long v = 0;
      if (std::sscanf(line, "VmRSS: %llu", &v) == 1) rss = v;
      if (std::sscanf(line, "VmHWM: %llu", &v) == 1) hwm = v;
    }
    std::fclose(f);
  }
}

}  // namespace

void stage_detail(const std::string& line) {
  if (stage_clock().level) std::fprintf(stderr, "[convert]   %s\n", line.c_str());
}

void stage_done(const char* what) {
  StageClock& c = stage_clock();
  if (!c.level) return;
  const double t = now_seconds(), cpu = cpu_seconds();
  if (std::string(what) == "start") {
    c.totals.clear();
    c.last = t;
    c.last_cpu = cpu;
    return;
  }
  auto it =
      std::find_if(c.totals.begin(), c.totals.end(), [&](const auto& x) { return x.what == what; });
  if (it == c.totals.end()) it = c.totals.insert(c.totals.end(), StageTime{what, 0, 0});
  it->seconds += t - c.last;
  it->cpu += cpu - c.last_cpu;
  if (c.level >= 2) {
    std::uint64_t rss = 0, hwm = 0;
    memory_kib(rss, hwm);
    std::fprintf(stderr, "[convert] %-28s %8.3f s  rss %6llu MiB  peak %6llu MiB\n", what,
                 t - c.last, static_cast<unsigned long long>(rss >> 10),
                 static_cast<unsigned long long>(hwm >> 10));
  }
  c.last = t;
  c.last_cpu = cpu;
}

void stage_report() {
  StageClock& c = stage_clock();
  if (!c.level) return;
  std::uint64_t rss = 0, hwm = 0;
  memory_kib(rss, hwm);
  double sum = 0, sum_cpu = 0;
  for (const auto& x : c.totals) {
    std::fprintf(stderr, "[convert] %-28s %8.3f s  cpu %7.3f s\n", x.what.c_str(), x.seconds,
                 x.cpu);
    sum += x.seconds;
    sum_cpu += x.cpu;
  }
  std::fprintf(stderr, "[convert] %-28s %8.3f s  cpu %7.3f s  peak RSS %llu MiB\n", "total", sum,
               sum_cpu, static_cast<unsigned long long>(hwm >> 10));
  c.totals.clear();
}

Progress::Progress(bool enabled) : enabled_(enabled), t0_(now_seconds()) {}

void Progress::update(std::uint64_t done, std::uint64_t total, std::uint64_t edges, bool bytes) {
  throw_if_interrupted();
  if (!enabled_) return;
  const double t = now_seconds();
  if (t - last_ < 0.2) return;
  last_ = t;
  const double el = t - t0_;
  const double rate = el > 0 ? static_cast<double>(edges) / el : 0;
  char line[256];
  if (total > 0) {
    const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const int w = 24, fill = static_cast<int>(f * w);
    std::string bar(static_cast<std::size_t>(fill), '#');
    bar.resize(w, '.');
    const double eta = f > 0.001 ? el / f - el : 0;
    const double unit = bytes ? 1048576.0 : 1e6;
    std::snprintf(line, sizeof line, "\r[%s] %3.0f%% %.1f/%.1f %s  %.1f M edges/s  ETA %.0f s ",
                  bar.c_str(), f * 100, static_cast<double>(done) / unit,
                  static_cast<double>(total) / unit, bytes ? "MiB" : "M edges", rate / 1e6, eta);
  } else {
    std::snprintf(line, sizeof line, "\rread %.1f MiB  %llu edges  %.1f M edges/s ",
                  static_cast<double>(done) / 1048576.0, static_cast<unsigned long long>(edges),
                  rate / 1e6);
  }
  std::fputs(line, stderr);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::stage(const char* what) {
  throw_if_interrupted();
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s ...", what);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!enabled_ || !shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace tristream::conv
