// convert_bench.cpp — the converter's throughput: text and binary edge lists, in memory and out
// of core, on Kronecker graphs (Graph500 parameters). Counters: input edges/s and bytes/s.
//
//   build/convert_bench --benchmark_filter=Convert
// Inputs are generated once into a temporary folder (removed at exit).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "tristream/convert.hpp"
#include "tristream/generate.hpp"

namespace {

using namespace tristream;

struct Inputs {
  std::string dir;
  std::map<std::string, std::string> files;
  Inputs() {
    char templ[] = "/tmp/tristream-convert-bench-XXXXXX";
    dir = ::mkdtemp(templ) ? templ : "/tmp";
  }
  ~Inputs() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // The generated Kronecker graph of this scale as .el or .bin (generated on first use).
  const std::string& get(unsigned scale, const std::string& ext) {
    const std::string key = std::to_string(scale) + ext;
    auto it = files.find(key);
    if (it != files.end()) return it->second;
    GenerateOptions g;
    g.scale = scale;
    const std::string path = dir + "/kron" + key;
    generate(g, path);
    return files[key] = path;
  }
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

void run(benchmark::State& state, const std::string& ext, bool out_of_core) {
  const unsigned scale = static_cast<unsigned>(state.range(0));
  const std::string& in = inputs().get(scale, ext);
  const std::string out = inputs().dir + "/out.tcsr";
  ConvertOptions o;
  o.quiet = true;
  o.tmp_dir = inputs().dir;
  // Out of core: a limit of 1/8 of the 16 bytes per edge record.
  if (out_of_core) o.memory_limit = (std::uint64_t{16} << scale) * 16 / 8;
  ConvertSummary s;
  for (auto _ : state) s = convert(in, out, o);
  const double edges = static_cast<double>(s.input_edges);
  state.counters["edges/s"] = benchmark::Counter(edges * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  state.counters["out_of_core"] = s.out_of_core ? 1 : 0;
  state.SetBytesProcessed(static_cast<std::int64_t>(std::filesystem::file_size(in)) *
                          static_cast<std::int64_t>(state.iterations()));
}

void BM_ConvertText(benchmark::State& state) {
  run(state, ".el", false);
}
void BM_ConvertBinary(benchmark::State& state) {
  run(state, ".bin", false);
}
void BM_ConvertTextOutOfCore(benchmark::State& state) {
  run(state, ".el", true);
}
void BM_ConvertBinaryOutOfCore(benchmark::State& state) {
  run(state, ".bin", true);
}

void BM_GenerateKronecker(benchmark::State& state) {
  GenerateOptions g;
  g.scale = static_cast<unsigned>(state.range(0));
  std::size_t n = 0;
  for (auto _ : state) n = generate_edges(g).size();
  state.counters["edges/s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ConvertText)->Arg(14)->Arg(18)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ConvertBinary)->Arg(14)->Arg(18)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ConvertTextOutOfCore)->Arg(14)->Arg(18)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ConvertBinaryOutOfCore)
    ->Arg(14)
    ->Arg(18)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_GenerateKronecker)->Arg(18)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
