// cmd_generate.cpp — `tristream generate kronecker|uniform --scale S -o OUTPUT`.
#include <cstdio>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/json.hpp"
#include "tristream/error.hpp"
#include "tristream/generate.hpp"

namespace tristream::cli {

void print_convert_summary(const ConvertSummary& s, const std::string& output, bool json);

int cmd_generate(int argc, char** argv) {
  std::string kind, output, tmp_dir;
  std::uint64_t scale = 16, edge_factor = 16, seed = 1, threads = 0, memory_limit = 0;
  bool quiet = false, json = false;
  ArgParser p(
      "tristream generate",
      "Generates a Graph500 Kronecker graph (A=0.57, B=0.19, C=0.19, D=0.05, vertices\n"
      "scrambled) or an Erdos-Renyi graph with the same number of edges. The edges are the\n"
      "same for a seed whatever the thread count.");
  p.positional("KIND", "kronecker or uniform", &kind)
      .option("output", "-o", "FILE",
              "output: .tcsr (converted), .el (text edge list) or .bin (uint64 pairs)", &output)
      .uint_option("scale", "S", "2^S vertices [16]", &scale)
      .uint_option("edge-factor", "F", "F * 2^S generated edges [16]", &edge_factor)
      .uint_option("seed", "X", "random seed [1]", &seed)
      .uint_option("threads", "N", "worker threads, 1..4096 [all cores]", &threads, 1, kMaxThreads)
      .size_option("memory-limit", "for .tcsr output: as in `convert` [70% of available RAM]",
                   &memory_limit)
      .option("tmp-dir", "", "DIR", "for .tcsr output: spill directory [beside the output]",
              &tmp_dir)
      .flag("quiet", "-q", "no progress bar", &quiet)
      .flag("json", "-j", "print the summary as one JSON object", &json)
      .epilog(
          "Examples:\n"
          "  tristream generate kronecker --scale 20 -o kron20.tcsr\n"
          "  tristream generate uniform --scale 22 --edge-factor 8 --seed 7 -o er22.bin");
  if (!p.parse(argc, argv)) return 0;
  if (output.empty()) throw Error(ErrorKind::Usage, "tristream generate: missing -o OUTPUT");
  if (kind != "kronecker" && kind != "uniform")
    throw Error(ErrorKind::Usage,
                "tristream generate: KIND must be kronecker or uniform, not '" + kind + "'");
  if (scale < 1 || scale > 32)
    throw Error(ErrorKind::Usage, "--scale: expected 1..32, got " + std::to_string(scale));
  if (edge_factor < 1 || edge_factor > 1024)
    throw Error(ErrorKind::Usage,
                "--edge-factor: expected 1..1024, got " + std::to_string(edge_factor));
  GenerateOptions g;
  g.kind = kind;
  g.scale = static_cast<unsigned>(scale);
  g.edge_factor = static_cast<unsigned>(edge_factor);
  g.seed = seed;
  g.threads = static_cast<unsigned>(threads);
  ConvertOptions c;
  c.memory_limit = memory_limit;
  c.tmp_dir = tmp_dir;
  c.threads = g.threads;
  c.quiet = quiet;
  c.write.threads = g.threads;
  // The output is checked (not a directory, a writable place) before the edges are generated.
  check_output_path("-o", output, {});
  if (output == "-") throw Error(ErrorKind::Usage, "tristream generate: -o needs a file name");
  if (!tmp_dir.empty()) check_directory("--tmp-dir", tmp_dir);
  probe_output_dir(output);
  const ConvertSummary s = generate(g, output, c);
  const bool tcsr = output.size() >= 5 && output.compare(output.size() - 5, 5, ".tcsr") == 0;
  if (tcsr) {
    print_convert_summary(s, output, json);
  } else if (json) {
    JsonObject o;
    o.add("output", output).add("edges", s.input_edges).add("seconds", s.seconds);
    std::printf("%s\n", o.str().c_str());
  } else {
    std::printf("wrote %llu edges to %s in %.2f s\n",
                static_cast<unsigned long long>(s.input_edges), output.c_str(), s.seconds);
  }
  return 0;
}

}  // namespace tristream::cli
