// kernels_bench.cpp — CUDA kernel times and TEPS on the graph-shape suite, plus the end-to-end
// count time of a .tcsr file. A standalone program (no Google Benchmark fixtures: each graph is
// built once and every kernel is timed on it).
//
//   kernels_bench [--kinds kronecker,uniform|suite|SHAPE,...] [--scales 20-25|20,22,24]
//                 [--edge-factor 0] [--graphs FILE.tcsr,...]
//                 [--kernels auto,lstc,trust,trust:in,wedge,gui,bitmap] [--reps 5] [--max-ms 4000]
//                 [--profile 0] [--device 0] [--tcsr-scale 22] [--tmp DIR] [--csv FILE]
//   kernels_bench --generate-args SCALE    (prints "SHAPE ARGS" per suite shape and exits)
//
// Graphs: the shapes of the suite (cuda/testing/graph_suite.hpp: kronecker, uniform, powerlaw,
// mesh2d, mesh3d, community, hub; `suite` names all seven) made by the project's generators
// (generate_edges, the code of `tristream generate`) and oriented and compacted on the GPU
// (cuda::orient_on_device); --edge-factor 0 keeps each shape's own. Or .tcsr files (--graphs, e.g.
// made by `tristream generate $(kernels_bench --generate-args 22 | ...)`), named by their stem; a
// stem SHAPE-sSCALE is checked against the shape's closed form. Kernel time: CUDA events around
// enqueue_count on a resident graph, one warm-up then the median of --reps runs
// (cuda/testing/tools.hpp). TEPS = undirected edges after cleaning / kernel time. Every kernel's
// count must agree with the others on the same graph and with the closed form where one exists
// (the meshes); a disagreement is printed as MISMATCH and makes the exit status 1. --profile 1
// runs each kernel once between cudaProfilerStart and cudaProfilerStop after its warm-up (for
// Nsight Compute with --profile-from-start off; scripts/kernel_suite.sh). End to end (--tcsr-scale
// S, 0 to skip): the Kronecker graph of scale S is written as a .tcsr file, then opened, loaded
// and counted with the CUDA counter (kernel auto), timed by wall clock.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/testing/graph_suite.hpp"
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

// A suite shape at a scale, generated and oriented on the GPU.
OrientedGraph make_shape(const std::string& shape, unsigned scale, unsigned edge_factor,
                         int device) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<vid_t, vid_t>> edges;
  {
    auto raw = generate_edges(cuda::suite_shape(shape, scale, edge_factor));
    edges.resize(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i)
      edges[i] = {static_cast<vid_t>(raw[i].first), static_cast<vid_t>(raw[i].second)};
  }
  const double gen_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  OrientedGraph g = cuda::orient_on_device(std::uint64_t{1} << scale, edges, device);
  std::fprintf(stderr, "# %s scale %u: generated in %.1f s, oriented on the GPU in %.1f s\n",
               shape.c_str(), scale, gen_s, seconds_since(t1));
  return g;
}

// The shape and scale a file stem SHAPE-sSCALE names, if it does (else scale 0).
std::pair<std::string, unsigned> stem_shape(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  const auto at = stem.rfind("-s");
  if (at == std::string::npos) return {stem, 0};
  return {stem.substr(0, at),
          static_cast<unsigned>(std::strtoul(stem.c_str() + at + 2, nullptr, 10))};
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt = {
      {"kinds", "kronecker,uniform"},
      {"scales", "20-25"},
      {"edge-factor", "0"},
      {"graphs", ""},
      {"profile", "0"},
      {"generate-args", ""},
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
    // 1. --generate-args: the `tristream generate` arguments of the suite, no GPU needed.
    if (!opt["generate-args"].empty()) {
      const auto scale = static_cast<unsigned>(std::stoul(opt["generate-args"]));
      for (const auto& shape : cuda::suite_shapes())
        std::printf("%s %s\n", shape.c_str(), cuda::suite_generate_args(shape, scale).c_str());
      return 0;
    }
    if (cuda_device_count() == 0) {
      std::fprintf(stderr, "kernels_bench: no usable CUDA device\n");
      return 2;
    }
    const int device = std::stoi(opt["device"]);
    const auto info = cuda::device_info(device);
    std::printf("device %d: %s, %d SMs, %.1f GiB\n", device, info.name.c_str(), info.sm_count,
                info.total_memory / 1073741824.0);
    // 2. The graphs: suite shapes at scales, or files.
    std::vector<unsigned> scales;  // "20-25" or "20,22,24"
    if (opt["scales"].find('-') != std::string::npos) {
      unsigned s0 = 20, s1 = 25;
      std::sscanf(opt["scales"].c_str(), "%u-%u", &s0, &s1);
      for (unsigned s = s0; s <= s1; ++s) scales.push_back(s);
    } else {
      for (const auto& x : split(opt["scales"])) scales.push_back(std::stoul(x));
    }
    std::vector<std::string> kinds = split(opt["kinds"]);
    if (opt["kinds"] == "suite") kinds = cuda::suite_shapes();
    const std::vector<std::string> files = split(opt["graphs"]);
    if (!files.empty()) kinds.clear();
    const auto kernels = split(opt["kernels"]);
    const int reps = std::stoi(opt["reps"]);
    const double max_ms = std::stod(opt["max-ms"]);
    const bool profile = opt["profile"] != "0";
    const auto edge_factor = static_cast<unsigned>(std::stoul(opt["edge-factor"]));
    std::FILE* csv = opt["csv"].empty() ? nullptr : std::fopen(opt["csv"].c_str(), "w");
    if (csv) std::fprintf(csv, "graph,scale,n,m,triangles,kernel,chosen,median_ms,teps,runs\n");
    bool mismatch = false;
    std::printf("%-10s %5s %10s %11s %15s %-15s %-8s %10s %10s\n", "graph", "scale", "n", "m",
                "triangles", "kernel", "chosen", "ms", "GTEPS");
    // 3. Every kernel on one graph: a row each, checked against the first and the closed form.
    auto bench = [&](const std::string& kind, unsigned scale, const OrientedGraph& g) {
      const auto runs = cuda::time_kernels(g.csr.view(), kernels, reps, device, max_ms, profile);
      const auto closed = cuda::suite_closed_form(kind, scale);
      for (const auto& r : runs) {
        const double teps = g.m() / (r.median_ms / 1000.0);
        const bool bad =
            r.triangles != runs.front().triangles || (closed && r.triangles != *closed);
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
      return runs.empty() ? count_t{0} : runs.front().triangles;
    };
    for (const auto& path : files) {
      const auto [kind, scale] = stem_shape(path);
      tcsr::Reader reader(path);
      bench(kind, scale, reader.load());
    }
    for (const auto& kind : kinds) {
      for (const unsigned scale : scales) {
        const OrientedGraph g = make_shape(kind, scale, edge_factor, device);
        const count_t triangles = bench(kind, scale, g);
        // 4. End to end: the Kronecker graph of --tcsr-scale through a .tcsr file.
        const unsigned ts = static_cast<unsigned>(std::stoul(opt["tcsr-scale"]));
        if (kind == "kronecker" && scale == ts && !profile) {
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
              load_s + count_s, (unsigned long long)t, t == triangles ? "" : "  MISMATCH");
          mismatch |= t != triangles;
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
