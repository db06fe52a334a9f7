// cmd_convert.cpp — `tristream convert INPUT -o OUTPUT.tcsr`: edge list in, .tcsr out.
#include <cstdio>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "common/json.hpp"
#include "tristream/convert.hpp"
#include "tristream/error.hpp"

namespace tristream::cli {

// Prints the conversion summary as text (or one JSON object) on stdout; shared with `generate`.
void print_convert_summary(const ConvertSummary& s, const std::string& output, bool json) {
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
             s.seconds > 0 ? static_cast<double>(s.input_edges) / s.seconds : 0.0);
    std::printf("%s\n", o.str().c_str());
    return;
  }
  std::printf("output          %s\n", output.c_str());
  std::printf("input edges     %llu\n", static_cast<unsigned long long>(s.input_edges));
  std::printf("self-loops      %llu dropped\n", static_cast<unsigned long long>(s.self_loops));
  std::printf("duplicates      %llu merged\n", static_cast<unsigned long long>(s.duplicates));
  std::printf("vertices        %llu\n", static_cast<unsigned long long>(s.vertices));
  std::printf("edges           %llu\n", static_cast<unsigned long long>(s.edges));
  std::printf("max degree      %llu (oriented out-degree %llu)\n",
              static_cast<unsigned long long>(s.max_degree),
              static_cast<unsigned long long>(s.max_out_degree));
  std::printf("file size       %s (adjacency %s raw -> %s, ratio %.2f)\n",
              format_bytes(s.output_bytes).c_str(), format_bytes(s.raw_adjacency_bytes).c_str(),
              format_bytes(s.compressed_adjacency_bytes).c_str(), ratio);
  std::printf("mode            %s\n", s.out_of_core ? "out of core" : "in memory");
  std::printf("seconds         %.2f (%.1f M input edges/s)\n", s.seconds,
              s.seconds > 0 ? static_cast<double>(s.input_edges) / s.seconds / 1e6 : 0.0);
}

int cmd_convert(int argc, char** argv) {
  std::string input, output, tmp_dir, format = "auto", delimiter;
  std::uint64_t memory_limit = 0, threads = 0, chunk_size = 0, zstd_level = 3;
  bool quiet = false, json = false, header = false;
  ArgParser p("tristream convert",
              "Converts an edge list into a .tcsr file: ids compacted, self-loops dropped,\n"
              "duplicate and reverse-duplicate edges merged, vertices ranked by degree, edges\n"
              "oriented and the adjacency compressed in independent zstd chunks.");
  p.positional("INPUT", "edge list ('-' reads standard input)", &input)
      .option("output", "-o", "FILE", "the .tcsr file to write (required)", &output)
      .option("format", "", "FMT",
              "auto, plain, snap, tsv, csv, mtx, metis, dimacs, adjlist, bin32 or bin64 [auto: "
              "from extension and content]",
              &format)
      .option("delimiter", "", "C", "CSV column delimiter, e.g. ';' or tab (implies csv) [,]",
              &delimiter)
      .flag("header", "", "the first line names the columns: skip it [skipped if not numeric]",
            &header)
      .size_option("memory-limit",
                   "memory for edges; larger inputs go out of core [70% of "
                   "available RAM]",
                   &memory_limit)
      .option("tmp-dir", "", "DIR", "where out-of-core spill files go [beside the output]",
              &tmp_dir)
      .uint_option("threads", "N", "worker threads [all cores]", &threads)
      .size_option("chunk-size", "raw bytes per compressed chunk [8M]", &chunk_size)
      .uint_option("zstd-level", "L", "zstd compression level 1..19 [3]", &zstd_level)
      .flag("quiet", "-q", "no progress bar", &quiet)
      .flag("json", "", "print the summary as one JSON object", &json)
      .epilog(
          "Inputs: plain or SNAP edge lists (whitespace separated, '#' and '%' comments, up to\n"
          "two further columns such as a weight), CSV, GraphChallenge TSV, Matrix Market\n"
          "coordinate files, METIS .graph, DIMACS .gr, networkx adjacency lists, binary uint32\n"
          "or uint64 pairs (bin32, bin64; .bin means bin64), each optionally compressed as .gz,\n"
          ".bz2, .xz or .zst (detected from the content). See docs/convert.md.\n"
          "Examples:\n"
          "  tristream convert edges.txt -o graph.tcsr\n"
          "  tristream convert web.mtx.gz -o web.tcsr --memory-limit 8G --tmp-dir /scratch\n"
          "  zcat edges.txt.gz | tristream convert - -o graph.tcsr");
  if (!p.parse(argc, argv)) return 0;
  if (output.empty()) throw Error(ErrorKind::Usage, "tristream convert: missing -o OUTPUT");
  if (zstd_level < 1 || zstd_level > 22)
    throw Error(ErrorKind::Usage,
                "--zstd-level: expected 1..22, got " + std::to_string(zstd_level));
  if (p.given("chunk-size") && chunk_size < 4096)
    throw Error(ErrorKind::Usage, "--chunk-size: at least 4K");
  ConvertOptions o;
  o.format = format;
  o.delimiter = delimiter;
  o.header = header;
  o.memory_limit = memory_limit;
  o.tmp_dir = tmp_dir;
  o.threads = static_cast<unsigned>(threads);
  o.quiet = quiet;
  o.write.zstd_level = static_cast<int>(zstd_level);
  if (chunk_size) o.write.chunk_bytes = chunk_size;
  o.write.threads = o.threads;
  const ConvertSummary s = convert(input, output, o);
  print_convert_summary(s, output, json);
  return 0;
}

}  // namespace tristream::cli
