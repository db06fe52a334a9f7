// tristream/generate.hpp — synthetic graphs (converter/): Graph500 Kronecker and Erdős–Rényi.
//
// Both are deterministic for a seed whatever the thread count: edge i is drawn from a counter-
// based random stream keyed by (seed, i), so any split of the index range gives the same edges.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tristream/convert.hpp"

namespace tristream {

struct GenerateOptions {
  std::string kind = "kronecker";  // kronecker | uniform
  unsigned scale = 16;             // 2^scale vertices
  unsigned edge_factor = 16;       // edge_factor * 2^scale generated edges
  std::uint64_t seed = 1;
  unsigned threads = 0;  // 0 = hardware concurrency
};

// The raw generated edge list (with the self-loops and duplicates the model produces), in memory.
std::vector<std::pair<std::uint64_t, std::uint64_t>> generate_edges(const GenerateOptions& options);

// Generates into `output`: .tcsr (converted, cleaned), .el (text) or .bin (uint64 pairs); out of
// core like the converter. Returns the conversion summary for .tcsr, counts of written edges
// otherwise (input_edges).
ConvertSummary generate(const GenerateOptions& options, const std::string& output,
                        const ConvertOptions& convert_options = {});

}  // namespace tristream
