// kernels_bench.cpp — CUDA kernel times and TEPS on generated graphs, plus the end-to-end count
// time of a .tcsr file. A standalone program (no Google Benchmark fixtures: each graph is built
// once and every kernel is timed on it).
//
//   kernels_bench [--kinds kronecker,uniform] [--scales 20-25|20,22,24] [--edge-factor 16]
//                 [--kernels auto,lstc,trust,trust:in,wedge,gui,bitmap] [--reps 5] [--max-ms 4000]
//                 [--device 0] [--tcsr-scale 22] [--tmp DIR] [--csv FILE]
//
// Graphs come from the project's generator (generate_edges, Graph500 parameters) and are
// oriented and compacted on the GPU (cuda::orient_on_device). Kernel time: CUDA events around
// enqueue_count on a resident graph, one warm-up then the median of --reps runs
// (cuda/testing/tools.hpp). TEPS = undirected edges after cleaning / kernel time. Every kernel's
// count must agree with the others on the same graph; a disagreement is printed as MISMATCH and
// makes the exit status 1. End to end (--tcsr-scale S, 0 to skip): the Kronecker graph of scale S
// is written as a .tcsr file, then opened, loaded and counted with the CUDA counter (kernel auto),
// timed by wall clock.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/testing/tools.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/generate.hpp"

using namespace tristream;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) out.push_back(x);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt = {
      {"kinds", "kronecker,uniform"},
      {"scales", "20-25"},
      {"edge-factor", "16"},
      {"kernels", "auto,lstc,trust,trust:in,wedge,gui,bitmap"},
      {"reps", "5"},
      {"max-ms", "4000"},
      {"device", "0"},
      {"tcsr-scale", "22"},
      {"tmp", "/tmp"},
      {"csv", ""}};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0 || !opt.count(k.substr(2))) {
      std::fprintf(stderr, "kernels_bench: unknown option %s\n", argv[i]);
      return 2;
    }
    opt[k.substr(2)] = argv[i + 1];
  }
  try {
    if (cuda_device_count() == 0) {
      std::fprintf(stderr, "kernels_bench: no usable CUDA device\n");
      return 2;
    }
    const int device = std::stoi(opt["device"]);
    const auto info = cuda::device_info(device);
    std::printf("device %d: %s, %d SMs, %.1f GiB\n", device, info.name.c_str(), info.sm_count,
                info.total_memory / 1073741824.0);
    std::vector<unsigned> scales;  // "20-25" or "20,22,24"
    if (opt["scales"].find('-') != std::string::npos) {
      unsigned s0 = 20, s1 = 25;
      std::sscanf(opt["scales"].c_str(), "%u-%u", &s0, &s1);
      for (unsigned s = s0; s <= s1; ++s) scales.push_back(s);
    } else {
      for (const auto& x : split(opt["scales"])) scales.push_back(std::stoul(x));
    }
    const auto kernels = split(opt["kernels"]);
    const int reps = std::stoi(opt["reps"]);
    const double max_ms = std::stod(opt["max-ms"]);
    std::FILE* csv = opt["csv"].empty() ? nullptr : std::fopen(opt["csv"].c_str(), "w");
    if (csv) std::fprintf(csv, "graph,scale,n,m,triangles,kernel,chosen,median_ms,teps,runs\n");
    bool mismatch = false;
    std::printf("%-10s %5s %10s %11s %15s %-15s %-8s %10s %10s\n", "graph", "scale", "n", "m",
                "triangles", "kernel", "chosen", "ms", "GTEPS");
    for (const auto& kind : split(opt["kinds"])) {
      for (const unsigned scale : scales) {
        const auto t0 = std::chrono::steady_clock::now();
        GenerateOptions go;
        go.kind = kind;
        go.scale = scale;
        go.edge_factor = static_cast<unsigned>(std::stoul(opt["edge-factor"]));
        go.seed = 1;
        std::vector<std::pair<vid_t, vid_t>> edges;
        {
          auto raw = generate_edges(go);
          edges.resize(raw.size());
          for (std::size_t i = 0; i < raw.size(); ++i)
            edges[i] = {static_cast<vid_t>(raw[i].first), static_cast<vid_t>(raw[i].second)};
        }
        const double gen_s = seconds_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        const OrientedGraph g = cuda::orient_on_device(std::uint64_t{1} << scale, edges, device);
        const double orient_s = seconds_since(t1);
        std::vector<std::pair<vid_t, vid_t>>().swap(edges);
        std::fprintf(stderr, "# %s scale %u: generated in %.1f s, oriented on the GPU in %.1f s\n",
                     kind.c_str(), scale, gen_s, orient_s);
        const auto runs = cuda::time_kernels(g.csr.view(), kernels, reps, device, max_ms);
        for (const auto& r : runs) {
          const double teps = g.m() / (r.median_ms / 1000.0);
          const bool bad = r.triangles != runs.front().triangles;
          mismatch |= bad;
          std::printf("%-10s %5u %10llu %11llu %15llu %-15s %-8s %10.2f %10.3f%s\n", kind.c_str(),
                      scale, (unsigned long long)g.n(), (unsigned long long)g.m(),
                      (unsigned long long)r.triangles, r.kernel.c_str(), r.chosen.c_str(),
                      r.median_ms, teps / 1e9, bad ? "  MISMATCH" : "");
          if (csv) {
            std::fprintf(csv, "%s,%u,%llu,%llu,%llu,%s,%s,%.4f,%.6g,", kind.c_str(), scale,
                         (unsigned long long)g.n(), (unsigned long long)g.m(),
                         (unsigned long long)r.triangles, r.kernel.c_str(), r.chosen.c_str(),
                         r.median_ms, teps);
            for (std::size_t i = 0; i < r.ms.size(); ++i)
              std::fprintf(csv, "%s%.4f", i ? " " : "", r.ms[i]);
            std::fprintf(csv, "\n");
            std::fflush(csv);
          }
        }
        std::fflush(stdout);
        const unsigned ts = static_cast<unsigned>(std::stoul(opt["tcsr-scale"]));
        if (kind == "kronecker" && scale == ts) {
          const std::string path = opt["tmp"] + "/kernels_bench_s" + std::to_string(ts) + ".tcsr";
          tcsr::write_file(path, g);
          const auto e0 = std::chrono::steady_clock::now();
          tcsr::Reader reader(path);
          const OrientedGraph loaded = reader.load();
          const double load_s = seconds_since(e0);
          CounterOptions co;
          co.device = device;
          auto counter = make_cuda_counter(co);
          const auto e1 = std::chrono::steady_clock::now();
          const count_t t = counter->count(loaded.csr.view());
          const double count_s = seconds_since(e1);
          std::printf(
              "end-to-end %s scale %u from %s (%.0f MB): open+load %.3f s, count (upload + auto "
              "kernel + copy back) %.3f s, total %.3f s, triangles %llu%s\n",
              kind.c_str(), ts, path.c_str(), reader.file_size() / 1e6, load_s, count_s,
              load_s + count_s, (unsigned long long)t,
              t == runs.front().triangles ? "" : "  MISMATCH");
          mismatch |= t != runs.front().triangles;
          std::remove(path.c_str());
        }
      }
    }
    if (csv) std::fclose(csv);
    return mismatch ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "kernels_bench: %s\n", e.what());
    return e.exit_code();
  }
}
