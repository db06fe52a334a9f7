// cmd_generate.cpp — `tristream generate MODEL --scale S -o OUTPUT`: the synthetic graph models
// (kronecker, uniform, powerlaw, mesh, community, hub) into .tcsr, text or binary edge lists.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/json.hpp"
#include "edge_sorter_choice.hpp"
#include "tristream/error.hpp"
#include "tristream/generate.hpp"

namespace tristream::cli {

void print_convert_summary(const ConvertSummary& s, const std::string& output, bool json);

namespace {

// A decimal number given as --name VALUE; `text` empty keeps `fallback`.
double parse_real(const std::string& text, const std::string& name, double fallback) {
  if (text.empty()) return fallback;
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0')
    throw Error(ErrorKind::Usage, "--" + name + ": expected a number, got '" + text + "'");
  return x;
}

const char* kSummary =
    "Generates a synthetic graph of 2^S vertices. The edges are the same for a seed whatever\n"
    "the thread count. Models:\n"
    "  kronecker  Graph500 Kronecker, F*2^S edges; initiator A=0.57, B=0.19, C=0.19 (D = the\n"
    "             rest) unless --kronecker-a/b/c say otherwise (A well above 0.57: a few hubs\n"
    "             adjacent to a large share of all vertices); vertices scrambled\n"
    "  uniform    Erdos-Renyi with F*2^S edges\n"
    "  powerlaw   Chung-Lu with a power-law degree distribution (--exponent, --max-degree),\n"
    "             F*2^S edges; vertices scrambled\n"
    "  mesh       a triangulated 2D grid (6 neighbours inside) or 3D grid (14), ids in grid\n"
    "             order (--dimensions); its triangle count has a closed form\n"
    "             (docs/convert.md)\n"
    "  community  planted partition: --communities groups of consecutive ids, pairs inside a\n"
    "             group are edges with probability --p-in, pairs across with --p-out\n"
    "  hub        --hubs vertices each adjacent to every other with probability --hub-share,\n"
    "             over a uniform background of F*2^S edges";

}  // namespace

int cmd_generate(int argc, char** argv) {
  std::string kind, output, tmp_dir, ka, kb, kc, exponent, p_in, p_out, hub_share, device = "auto";
  std::uint64_t scale = 16, edge_factor = 16, seed = 1, threads = 0, memory_limit = 0;
  std::uint64_t max_degree = 0, dimensions = 2, communities = 0, hubs = 4;
  bool quiet = false, json = false;
  ArgParser p("tristream generate", kSummary);
  p.positional("MODEL", "kronecker, uniform, powerlaw, mesh, community or hub", &kind)
      .option("output", "-o", "FILE",
              "output: .tcsr (converted), .el (text edge list) or .bin (uint64 pairs)", &output)
      .uint_option("scale", "S", "2^S vertices (1..32) [16]", &scale)
      .uint_option("edge-factor", "F",
                   "kronecker, uniform, powerlaw, hub: F * 2^S drawn edges [16]", &edge_factor)
      .uint_option("seed", "X", "random seed [1]", &seed)
      .uint_option("threads", "N", "worker threads, 1..4096 [all usable cores]", &threads, 1,
                   kMaxThreads)
      .option("kronecker-a", "", "A", "kronecker: initiator A [0.57]", &ka)
      .option("kronecker-b", "", "B", "kronecker: initiator B [0.19]", &kb)
      .option("kronecker-c", "", "C", "kronecker: initiator C [0.19]; D = 1 - A - B - C", &kc)
      .option("exponent", "", "G", "powerlaw: degree exponent, 1.5..5 [2]", &exponent)
      .uint_option("max-degree", "D",
                   "powerlaw: cap on the heaviest vertex's expected degree [natural]", &max_degree)
      .uint_option("dimensions", "K", "mesh: 2 or 3 [2]", &dimensions)
      .uint_option("communities", "K", "community: number of groups [2^S / 64]", &communities)
      .option("p-in", "", "P", "community: edge probability inside a group [0.25]", &p_in)
      .option("p-out", "", "P", "community: edge probability across groups [4 / 2^S]", &p_out)
      .uint_option("hubs", "H", "hub: number of hubs (ids 0..H-1) [4]", &hubs)
      .option("hub-share", "", "P", "hub: probability of each hub-vertex edge [0.5]", &hub_share)
      .size_option("memory-limit",
                   "for .tcsr output: as in `convert` [7/8 of the available memory]", &memory_limit)
      .option("tmp-dir", "", "DIR", "for .tcsr output: spill directory [beside the output]",
              &tmp_dir)
      .option("device", "", "WHERE",
              "for .tcsr output: where repeated edges are removed and rows sorted, as in "
              "`convert`: auto (CUDA device 0 when one is usable and 2^24 edges or more are "
              "drawn), cpu, or a CUDA device number; the same bytes either way [auto]",
              &device)
      .flag("quiet", "-q", "no progress bar", &quiet)
      .flag("json", "-j", "print the summary as one JSON object", &json)
      .epilog(
          "Examples:\n"
          "  tristream generate kronecker --scale 20 -o kron20.tcsr\n"
          "  tristream generate uniform --scale 22 --edge-factor 8 --seed 7 -o er22.bin\n"
          "  tristream generate powerlaw --scale 22 --exponent 2.1 -o pl22.tcsr\n"
          "  tristream generate mesh --scale 22 --dimensions 3 -o mesh22.tcsr\n"
          "  tristream generate community --scale 22 --communities 65536 --p-in 0.3 -o c22.tcsr\n"
          "  tristream generate hub --scale 20 --hubs 1 --hub-share 1 --edge-factor 10 -o h.tcsr\n"
          "  tristream generate kronecker --scale 22 --kronecker-a 0.7 --kronecker-b 0.13 \\\n"
          "      --kronecker-c 0.13 -o kron-hub22.tcsr");
  if (!p.parse(argc, argv)) return 0;
  if (output.empty()) throw Error(ErrorKind::Usage, "tristream generate: missing -o OUTPUT");
  if (scale < 1 || scale > 32)
    throw Error(ErrorKind::Usage, "--scale: expected 1..32, got " + std::to_string(scale));
  if (edge_factor < 1 || edge_factor > 1024)
    throw Error(ErrorKind::Usage,
                "--edge-factor: expected 1..1024, got " + std::to_string(edge_factor));
  if (dimensions > 3)
    throw Error(ErrorKind::Usage,
                "--dimensions: expected 2 or 3, got " + std::to_string(dimensions));
  GenerateOptions g;
  g.kind = kind;
  g.scale = static_cast<unsigned>(scale);
  g.edge_factor = static_cast<unsigned>(edge_factor);
  g.seed = seed;
  g.threads = static_cast<unsigned>(threads);
  g.kronecker_a = parse_real(ka, "kronecker-a", g.kronecker_a);
  g.kronecker_b = parse_real(kb, "kronecker-b", g.kronecker_b);
  g.kronecker_c = parse_real(kc, "kronecker-c", g.kronecker_c);
  g.exponent = parse_real(exponent, "exponent", g.exponent);
  g.max_degree = max_degree;
  g.dimensions = static_cast<unsigned>(dimensions);
  g.communities = communities;
  g.p_in = parse_real(p_in, "p-in", g.p_in);
  g.p_out = parse_real(p_out, "p-out", g.p_out);
  if (!p_out.empty() && g.p_out < 0)
    throw Error(ErrorKind::Usage, "--p-out: expected 0..1, got '" + p_out + "'");
  g.hubs = hubs;
  g.hub_share = parse_real(hub_share, "hub-share", g.hub_share);
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
  // A .tcsr file is written with the planner's census in it, its rows sorted where --device
  // says (auto: a device for 2^24 drawn edges or more; the mesh draws about K per vertex).
  const bool tcsr = output.size() >= 5 && output.compare(output.size() - 5, 5, ".tcsr") == 0;
  const double drawn = std::ldexp(static_cast<double>(kind == "mesh" ? dimensions : edge_factor),
                                  static_cast<int>(scale));
  const std::unique_ptr<EdgeSorter> sorter =
      tcsr ? edge_sorter_for(device, drawn * 16 >= static_cast<double>(kDeviceMinInputBytes))
           : nullptr;
  c.edge_sorter = sorter.get();
  const ConvertSummary s =
      tcsr ? write_tcsr_with_census(output, c,
                                    [&](const std::string& to, const ConvertOptions& with) {
                                      return generate(g, to, with);
                                    })
           : generate(g, output, c);
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
