// tristream/generate.hpp — synthetic graphs (converter/): Graph500 Kronecker (A, B, C settable),
// Erdős–Rényi, Chung-Lu power law, triangulated 2D/3D meshes, planted-partition communities and
// hub-dominated graphs.
//
// All are deterministic for a seed whatever the thread count: the edge list is made of pieces
// whose edges depend only on (seed, piece), drawn from a counter-based random stream, so any
// split of the work over threads gives the same edges in the same order.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tristream/convert.hpp"

namespace tristream {

struct GenerateOptions {
  std::string kind = "kronecker";  // kronecker | uniform | powerlaw | mesh | community | hub
  unsigned scale = 16;             // 2^scale vertices (1..32)
  unsigned edge_factor = 16;  // edge_factor * 2^scale drawn edges (kronecker, uniform, powerlaw;
                              // the uniform background of hub)
  std::uint64_t seed = 1;
  unsigned threads = 0;  // 0 = hardware concurrency
  // kronecker: the initiator's quadrant probabilities; D = 1 - A - B - C >= 0.
  double kronecker_a = 0.57, kronecker_b = 0.19, kronecker_c = 0.19;
  // powerlaw: the degree exponent gamma (1.5..5; weights w(x) ~ (x + x0)^(-1 / (gamma - 1))) and
  // a cap on the expected degree of the heaviest vertex (0 = the natural one, x0 = 1).
  double exponent = 2.0;
  std::uint64_t max_degree = 0;
  // mesh: 2 (triangulated grid, 6 neighbours inside) or 3 (the grid's cubes cut into 6
  // tetrahedra each, 14 neighbours inside).
  unsigned dimensions = 2;
  // community: `communities` groups of consecutive ids (0 = groups of 64); each pair inside a
  // group is an edge with probability p_in, each pair across groups with p_out (< 0: 4 / 2^scale).
  std::uint64_t communities = 0;
  double p_in = 0.25, p_out = -1;
  // hub: `hubs` vertices (ids 0..hubs-1) each adjacent to every other vertex with probability
  // hub_share, over a uniform background of edge_factor * 2^scale edges.
  std::uint64_t hubs = 4;
  double hub_share = 0.5;
};

// The raw generated edge list (with the self-loops and duplicates the model produces), in memory.
std::vector<std::pair<std::uint64_t, std::uint64_t>> generate_edges(const GenerateOptions& options);

// Generates into `output`: .tcsr (converted, cleaned), .el (text) or .bin (uint64 pairs); out of
// core like the converter. Returns the conversion summary for .tcsr, counts of written edges
// otherwise (input_edges).
ConvertSummary generate(const GenerateOptions& options, const std::string& output,
                        const ConvertOptions& convert_options = {});

}  // namespace tristream
