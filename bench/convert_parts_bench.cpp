// convert_parts_bench.cpp — the converter's parser and sorter alone, on data in memory, so that
// each rate can be set beside the machine's memory bandwidth (a stage that reads its input once
// cannot beat it). Counters: bytes/s (bytes of input read) and items/s (edges, or keys sorted).
//
//   build/bench/convert_parts_bench [--benchmark_filter=Parse]
// The data: Kronecker-like edges (ids skewed towards small values, 2^21 vertices), 4 Mi edges
// as a text edge list ("u v" lines) and as uint64 pairs; 32 Mi random 42-bit keys with 5%
// repeats for the sorter; 32 Mi unique keys row << 32 | col (row < col < 2^21 for the narrow sort
// of rows straight into 32-bit columns, < 2^24 for the wide one). Thread counts: 1 and every core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_pool.hpp"
#include "converter/parse.hpp"
#include "converter/sort.hpp"
#include "converter/sort_rows.hpp"
#include "converter/util.hpp"

namespace {

using namespace tristream;
using namespace tristream::conv;

constexpr std::size_t kEdges = std::size_t{1} << 22;
constexpr std::size_t kKeys = std::size_t{1} << 25;

// A skewed id below 2^21: the smaller of two uniform draws, as min(u, v) of a random edge.
std::uint64_t skewed_id(std::mt19937_64& rng) {
  const std::uint64_t x = rng() & ((1u << 21) - 1), y = rng() & ((1u << 21) - 1);
  return x < y ? x : y;
}

const std::string& text_input() {
  static const std::string text = [] {
    std::mt19937_64 rng(1);
    std::string s;
    s.reserve(kEdges * 16);
    for (std::size_t i = 0; i < kEdges; ++i) {
      s += std::to_string(skewed_id(rng));
      s += ' ';
      s += std::to_string(rng() & ((1u << 21) - 1));
      s += '\n';
    }
    return s;
  }();
  return text;
}

const std::string& binary_input() {
  static const std::string bin = [] {
    std::mt19937_64 rng(2);
    std::string s(kEdges * 16, '\0');
    for (std::size_t i = 0; i < kEdges; ++i) {
      const std::uint64_t pair[2] = {skewed_id(rng), rng() & ((1u << 21) - 1)};
      std::memcpy(&s[16 * i], pair, 16);
    }
    return s;
  }();
  return bin;
}

// Parses `data` in `threads` pieces (cut at line ends for text) on as many threads.
template <typename ParseFn>
void parse_pieces(benchmark::State& state, const std::string& data, std::size_t unit, bool text,
                  ParseFn&& parse) {
  const unsigned threads =
      state.range(0) ? static_cast<unsigned>(state.range(0)) : resolve_threads(0);
  std::vector<std::size_t> cut{0};
  for (unsigned t = 1; t < threads; ++t) {
    std::size_t c = data.size() * t / threads / unit * unit;
    if (text) c = data.find('\n', c) + 1;
    cut.push_back(c);
  }
  cut.push_back(data.size());
  std::uint64_t edges = 0;
  for (auto _ : state) {
    std::vector<Block> blocks(threads);
    for_each_item(threads, threads, [&](std::size_t i, unsigned) {
      parse(data.data() + cut[i], cut[i + 1] - cut[i], blocks[i]);
    });
    edges = 0;
    for (const Block& b : blocks) edges += b.records;
    benchmark::DoNotOptimize(blocks.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(data.size()) *
                          static_cast<std::int64_t>(state.iterations()));
  state.SetItemsProcessed(static_cast<std::int64_t>(edges) *
                          static_cast<std::int64_t>(state.iterations()));
}

void BM_ParseText(benchmark::State& state) {
  const TextSpec spec;
  parse_pieces(state, text_input(), 1, true,
               [&](const char* p, std::size_t n, Block& b) { parse_text(p, n, spec, b); });
}

void BM_ParseBinary64(benchmark::State& state) {
  parse_pieces(state, binary_input(), 16, false,
               [&](const char* p, std::size_t n, Block& b) { parse_binary(p, n, true, b); });
}

// The in-memory sort with repeats removed (the keys are restored before every iteration,
// outside the timing).
void BM_SortUnique(benchmark::State& state) {
  const unsigned threads =
      state.range(0) ? static_cast<unsigned>(state.range(0)) : resolve_threads(0);
  static const std::vector<std::uint64_t> input = [] {
    std::mt19937_64 rng(3);
    std::vector<std::uint64_t> v(kKeys);
    for (std::size_t i = 0; i < kKeys; ++i)
      v[i] = (i % 20 == 19 && i > 0) ? v[i / 2] : (rng() & ((std::uint64_t{1} << 42) - 1));
    return v;
  }();
  BigBuffer<std::uint64_t> keys(kKeys + 1), tmp(kKeys + 1);
  std::size_t unique = 0;
  for (auto _ : state) {
    state.PauseTiming();
    keys.resize(kKeys);
    std::memcpy(keys.data(), input.data(), kKeys * sizeof(std::uint64_t));
    state.ResumeTiming();
    unique = parallel_sort_unique_u64(keys, tmp, threads);
  }
  benchmark::DoNotOptimize(unique);
  state.SetBytesProcessed(static_cast<std::int64_t>(kKeys * sizeof(std::uint64_t)) *
                          static_cast<std::int64_t>(state.iterations()));
  state.SetItemsProcessed(static_cast<std::int64_t>(kKeys) *
                          static_cast<std::int64_t>(state.iterations()));
}

// Unique edge keys row << 32 | col (row < col < rows: skewed rows, uniform columns), shuffled.
std::vector<std::uint64_t> row_keys(std::uint64_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(kKeys);
  for (std::size_t i = 0; i < kKeys; ++i) {
    std::uint64_t a = skewed_id(rng) & (rows - 1), b = rng() & (rows - 1);
    if (a == b) b = (b + 1) & (rows - 1);
    v[i] = a < b ? a << 32 | b : b << 32 | a;
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

// The rows of G+ sorted straight into their columns, by sort_rows_narrow (rows up to about 2^22
// vertices) or sort_rows_wide (any); the keys restored before every iteration, outside the timing.
void sort_rows_bench(benchmark::State& state, const std::vector<std::uint64_t>& input,
                     std::uint64_t rows, bool wide) {
  const unsigned threads =
      state.range(0) ? static_cast<unsigned>(state.range(0)) : resolve_threads(0);
  const int col_bits = 64 - __builtin_clzll(rows - 1);
  BigBuffer<std::uint64_t> keys(input.size() + 1);
  BigBuffer<std::uint32_t> cols(input.size() + 1), fill(rows + 1);
  for (auto _ : state) {
    state.PauseTiming();
    keys.resize(input.size());
    std::memcpy(keys.data(), input.data(), input.size() * sizeof(std::uint64_t));
    fill.resize(rows);
    std::memset(fill.data(), 0, rows * sizeof(std::uint32_t));
    state.ResumeTiming();
    SpanSortInput in;
    in.spans.push_back({keys.data(), input.size()});
    in.max_key = (rows - 2) << 32 | (rows - 1);
    benchmark::DoNotOptimize(wide ? sort_rows_wide(in, cols, fill.data(), threads)
                                  : sort_rows_narrow(in, col_bits, cols, fill.data(), threads));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(input.size() * sizeof(std::uint64_t)) *
                          static_cast<std::int64_t>(state.iterations()));
  state.SetItemsProcessed(static_cast<std::int64_t>(input.size()) *
                          static_cast<std::int64_t>(state.iterations()));
}

void BM_SortRowsNarrow(benchmark::State& state) {
  constexpr std::uint64_t kRows = std::uint64_t{1} << 21;
  static const std::vector<std::uint64_t> input = row_keys(kRows, 4);
  sort_rows_bench(state, input, kRows, false);
}

void BM_SortRowsWide(benchmark::State& state) {
  constexpr std::uint64_t kRows = std::uint64_t{1} << 24;
  static const std::vector<std::uint64_t> input = row_keys(kRows, 5);
  sort_rows_bench(state, input, kRows, true);
}

// Arg: threads (0 = every core).
BENCHMARK(BM_ParseText)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseBinary64)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SortUnique)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SortRowsNarrow)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SortRowsWide)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
