// cmd_convert.cpp — `tristream convert INPUT -o OUTPUT.tcsr`: edge list in, .tcsr out. The output
// path is checked and a file created beside it before the conversion starts; `-o -` converts
// into a private temporary directory and copies the result to standard output.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/temp_dir.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/host_peak.hpp"
#include "common/json.hpp"
#include "edge_sorter_choice.hpp"
#include "plan/census_store.hpp"
#include "tristream/convert.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"
#include "tristream/tristream.hpp"

namespace tristream::cli {

namespace {

// Checks before the work that `output` can be written: not the input, not a directory, and a file
// can be created beside it (created and removed again).
void check_convert_output(const std::string& output, const std::string& input) {
  check_output_path("-o", output, {input});
  if (output != "-") probe_output_dir(output);
}

// Copies the file at `path` to standard output.
void copy_to_stdout(const std::string& path) {
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (!in) throw Error(ErrorKind::Internal, path + ": cannot reopen: " + std::strerror(errno));
  std::vector<char> buf(1 << 20);
  std::size_t got;
  bool ok = true;
  while (ok && (got = std::fread(buf.data(), 1, buf.size(), in)) > 0)
    ok = std::fwrite(buf.data(), 1, got, stdout) == got;
  ok = ok && !std::ferror(in) && std::fflush(stdout) == 0;
  std::fclose(in);
  if (!ok)
    throw Error(ErrorKind::Internal,
                "<stdout>: write failed: " + std::string(std::strerror(errno)));
}

}  // namespace

ConvertSummary write_tcsr_with_census(
    const std::string& output, ConvertOptions o,
    const std::function<ConvertSummary(const std::string&, const ConvertOptions&)>& write) {
  const std::unique_ptr<plan_internal::CensusRows> census = plan_internal::stored_census_rows();
  o.observer = census.get();
  ConvertSummary s = write(output, o);
  if (!census->taken()) {
    const auto t0 = std::chrono::steady_clock::now();
    reindex(output, o.threads);
    s.output_bytes = std::filesystem::file_size(output);
    s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.host_peak_bytes = host_peak_bytes();  // (the census's pass counted in)
  }
  return s;
}

// Prints the conversion summary as text (or one JSON object) on `to`.
void print_convert_summary_to(std::FILE* to, const ConvertSummary& s, const std::string& output,
                              bool json) {
  const double ratio = s.compressed_adjacency_bytes
                           ? static_cast<double>(s.raw_adjacency_bytes) /
                                 static_cast<double>(s.compressed_adjacency_bytes)
                           : 0.0;
  if (json) {
    JsonObject o;
    o.add("output", output)
        .add("input_edges", s.input_edges)
        .add("self_loops", s.self_loops)
        .add("duplicates", s.duplicates)
        .add("vertices", s.vertices)
        .add("edges", s.edges)
        .add("max_degree", s.max_degree)
        .add("max_out_degree", s.max_out_degree)
        .add("input_bytes", s.input_bytes)
        .add("output_bytes", s.output_bytes)
        .add("raw_adjacency_bytes", s.raw_adjacency_bytes)
        .add("compressed_adjacency_bytes", s.compressed_adjacency_bytes)
        .add("compression_ratio", ratio)
        .add("out_of_core", s.out_of_core)
        .add("seconds", s.seconds)
        .add("edges_per_second",
             s.seconds > 0 ? static_cast<double>(s.input_edges) / s.seconds : 0.0)
        .add("sorter", s.sorter)
        .add("memory_limit_bytes", s.memory_limit_bytes)
        .add("host_peak_bytes", s.host_peak_bytes);
    std::fprintf(to, "%s\n", o.str().c_str());
    return;
  }
  std::fprintf(to, "output          %s\n", output.c_str());
  std::fprintf(to, "input edges     %llu\n", static_cast<unsigned long long>(s.input_edges));
  std::fprintf(to, "self-loops      %llu dropped\n", static_cast<unsigned long long>(s.self_loops));
  std::fprintf(to, "duplicates      %llu merged\n", static_cast<unsigned long long>(s.duplicates));
  std::fprintf(to, "vertices        %llu\n", static_cast<unsigned long long>(s.vertices));
  std::fprintf(to, "edges           %llu\n", static_cast<unsigned long long>(s.edges));
  std::fprintf(to, "max degree      %llu (oriented out-degree %llu)\n",
               static_cast<unsigned long long>(s.max_degree),
               static_cast<unsigned long long>(s.max_out_degree));
  std::fprintf(to, "file size       %s (adjacency %s raw -> %s, ratio %.2f)\n",
               format_bytes(s.output_bytes).c_str(), format_bytes(s.raw_adjacency_bytes).c_str(),
               format_bytes(s.compressed_adjacency_bytes).c_str(), ratio);
  std::fprintf(to, "mode            %s\n", s.out_of_core ? "out of core" : "in memory");
  std::fprintf(to, "sorted on       %s\n", s.sorter.c_str());
  std::fprintf(to, "seconds         %.2f (%.1f M input edges/s)\n", s.seconds,
               s.seconds > 0 ? static_cast<double>(s.input_edges) / s.seconds / 1e6 : 0.0);
  std::fprintf(to, "memory          peak %s (limit %s)\n",
               s.host_peak_bytes ? format_bytes(s.host_peak_bytes).c_str() : "unknown",
               format_bytes(s.memory_limit_bytes).c_str());
}

void print_convert_summary(const ConvertSummary& s, const std::string& output, bool json) {
  print_convert_summary_to(stdout, s, output, json);
}

int cmd_convert(int argc, char** argv) {
  std::string input, output, tmp_dir, format = "auto", delimiter, device = "auto";
  std::uint64_t memory_limit = 0, threads = 0, chunk_size = 0, zstd_level = 1;
  bool quiet = false, json = false, header = false, names = false;
  ArgParser p("tristream convert",
              "Converts an edge list into a .tcsr file: ids compacted, self-loops dropped,\n"
              "duplicate and reverse-duplicate edges merged, vertices ranked by degree, edges\n"
              "oriented and the adjacency compressed in independent zstd chunks.");
  p.positional("INPUT", "edge list ('-' reads standard input)", &input)
      .option("output", "-o", "FILE",
              "the .tcsr file to write (required); '-' writes it to standard output (not a "
              "terminal) and the summary to stderr",
              &output)
      .option("format", "", "FMT",
              "auto, plain, snap, tsv, csv, mtx, metis, dimacs, adjlist, bin32 or bin64 [auto: "
              "from extension and content]",
              &format)
      .option("delimiter", "", "C", "CSV column delimiter, e.g. ';' or tab (implies csv) [,]",
              &delimiter)
      .flag("header", "", "the first line names the columns: skip it [skipped if not numeric]",
            &header)
      .flag("names", "",
            "the id columns hold vertex names (any token; a CSV field): numbered in order of "
            "first appearance and kept in the file",
            &names)
      .size_option("memory-limit",
                   "memory for edges; larger inputs go out of core [as count's "
                   "--host-memory: 7/8 of the available memory, cgroup limits included]",
                   &memory_limit)
      .option("tmp-dir", "", "DIR", "where out-of-core spill files go [beside the output]",
              &tmp_dir)
      .uint_option("threads", "N", "worker threads, 1..4096 [all usable cores]", &threads, 1,
                   kMaxThreads)
      .option("device", "", "WHERE",
              "where repeated edges are removed and rows sorted: auto (CUDA device 0 when one "
              "is usable and the input is 256 MiB or more), cpu, or a CUDA device number; the "
              "file is the same bytes either way [auto]",
              &device)
      .size_option("chunk-size", "raw bytes per compressed chunk, at least 4K [8M]", &chunk_size,
                   4096)
      .uint_option("zstd-level", "L", "zstd compression level 1..19 [1]", &zstd_level, 1, 19)
      .flag("quiet", "-q", "no progress bar", &quiet)
      .flag("json", "-j", "print the summary as one JSON object", &json)
      .epilog(
          "Inputs: plain or SNAP edge lists (whitespace separated, '#' and '%' comments, up to\n"
          "two further columns such as a weight), CSV, GraphChallenge TSV, Matrix Market\n"
          "coordinate files, METIS .graph, DIMACS .gr, networkx adjacency lists, binary uint32\n"
          "or uint64 pairs (bin32, bin64; .bin means bin64), each optionally compressed as .gz,\n"
          ".bz2, .xz or .zst (detected from the content). See docs/convert.md.\n"
          "Examples:\n"
          "  tristream convert edges.txt -o graph.tcsr\n"
          "  tristream convert people.csv --names -o people.tcsr\n"
          "  tristream convert web.mtx.gz -o web.tcsr --memory-limit 8G --tmp-dir /scratch\n"
          "  zcat edges.txt.gz | tristream convert - -o graph.tcsr");
  if (!p.parse(argc, argv)) return 0;
  if (output.empty()) throw Error(ErrorKind::Usage, "tristream convert: missing -o OUTPUT");
  if (output == "-" && ::isatty(STDOUT_FILENO))
    throw Error(ErrorKind::Usage,
                "-o -: standard output is a terminal; redirect it to a file or a pipe");
  // 1. Check the output and the spill directory before any work.
  check_convert_output(output, input);
  if (!tmp_dir.empty()) check_directory("--tmp-dir", tmp_dir);
  ConvertOptions o;
  o.format = format;
  o.delimiter = delimiter;
  o.header = header;
  o.names = names;
  o.memory_limit = memory_limit;
  o.tmp_dir = tmp_dir;
  o.threads = static_cast<unsigned>(threads);
  o.quiet = quiet;
  o.write.zstd_level = static_cast<int>(zstd_level);
  if (chunk_size) o.write.chunk_bytes = chunk_size;
  o.write.threads = o.threads;
  const std::unique_ptr<EdgeSorter> sorter = edge_sorter_for(device, worth_a_device(input));
  o.edge_sorter = sorter.get();
  // 2. Convert; for standard output into a private directory first (a .tcsr file is written
  //    with seeks), then copied.
  //    The planner's census is stored in the file, so out-of-core plans need no pass.
  const auto write = [&](const std::string& to, const ConvertOptions& with) {
    return convert(input, to, with);
  };
  if (output != "-") {
    const ConvertSummary s = write_tcsr_with_census(output, o, write);
    print_convert_summary(s, output, json);
    return 0;
  }
  api::TempDir dir(tmp_dir);  // under --tmp-dir, else $TMPDIR or /tmp
  if (o.tmp_dir.empty()) o.tmp_dir = dir.path();
  const ConvertSummary s = write_tcsr_with_census(dir.path() + "/graph.tcsr", o, write);
  copy_to_stdout(dir.path() + "/graph.tcsr");
  print_convert_summary_to(stderr, s, "<stdout>", json);
  return 0;
}

}  // namespace tristream::cli
