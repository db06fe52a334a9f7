// cuda/testing/graph_suite.hpp — the graph-shape suite of the kernel benchmark
// (bench/kernels_bench.cpp), the gpu tests (tests/cuda/shapes_gpu_test.cpp) and
// scripts/kernel_suite.sh: seven shapes made by the project's generators (`tristream generate`,
// tristream/generate.hpp), each at a scale of 2^scale vertices. CUDA-free, header only.
//
//   kronecker  Graph500 Kronecker, 16 edges a vertex (skewed degrees, scrambled ids)
//   uniform    Erdos-Renyi, 16 edges a vertex (even degrees, no locality)
//   powerlaw   Chung-Lu, degree exponent 2 (heavy tail: the heaviest vertex meets most others)
//   mesh2d     triangulated 2D grid (6 neighbours, ids in grid order: road networks, meshes)
//   mesh3d     3D grid cut into tetrahedra (14 neighbours)
//   community  planted partition: groups of 64, p_in 0.25, about 4 edges a vertex across
//   hub        one vertex adjacent to all, over a uniform background of 20 edges a vertex (the
//              hub-dominated shape of social and web graphs)
//
// suite_generate_args gives the `tristream generate` arguments of a shape, so a file of the suite
// can be made by the command line; suite_closed_form the exact triangle count where one is known
// (the meshes; docs/convert.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/generate.hpp"

namespace tristream::cuda {

inline const std::vector<std::string>& suite_shapes() {
  static const std::vector<std::string> names = {"kronecker", "uniform",   "powerlaw", "mesh2d",
                                                 "mesh3d",    "community", "hub"};
  return names;
}

// The generator options of shape `name` at `scale` (seed 1). edge_factor 0 keeps the shape's own
// (16; hub 20). Throws Error(Usage) for an unknown name.
inline GenerateOptions suite_shape(const std::string& name, unsigned scale,
                                   unsigned edge_factor = 0) {
  GenerateOptions o;
  o.scale = scale;
  o.seed = 1;
  o.edge_factor = edge_factor ? edge_factor : 16;
  if (name == "kronecker" || name == "uniform") {
    o.kind = name;
  } else if (name == "powerlaw") {
    o.kind = "powerlaw";
    o.exponent = 2.0;
  } else if (name == "mesh2d" || name == "mesh3d") {
    o.kind = "mesh";
    o.dimensions = name == "mesh2d" ? 2 : 3;
  } else if (name == "community") {
    o.kind = "community";  // groups of 64, p_in 0.25, p_out 4 / 2^scale (the defaults)
  } else if (name == "hub") {
    o.kind = "hub";
    o.hubs = 1;
    o.hub_share = 1.0;
    o.edge_factor = edge_factor ? edge_factor : 20;
  } else {
    throw Error(ErrorKind::Usage, "unknown graph shape '" + name +
                                      "' (expected kronecker, uniform, powerlaw, mesh2d, mesh3d, "
                                      "community or hub)");
  }
  return o;
}

// The `tristream generate` arguments (model and options, without -o) that make the same graph.
inline std::string suite_generate_args(const std::string& name, unsigned scale,
                                       unsigned edge_factor = 0) {
  const GenerateOptions o = suite_shape(name, scale, edge_factor);
  std::string a = o.kind + " --scale " + std::to_string(scale) + " --seed 1";
  if (o.kind == "kronecker" || o.kind == "uniform" || o.kind == "powerlaw" || o.kind == "hub")
    a += " --edge-factor " + std::to_string(o.edge_factor);
  if (o.kind == "powerlaw") a += " --exponent 2";
  if (o.kind == "mesh") a += " --dimensions " + std::to_string(o.dimensions);
  if (o.kind == "hub") a += " --hubs 1 --hub-share 1";
  return a;
}

// The triangles of shape `name` at `scale` where a closed form exists (docs/convert.md): the 2D
// mesh, R x C vertices, 2(R-1)(C-1); the 3D mesh, sides a x b x c,
// 2[(a-1)(b-1)c + (a-1)b(c-1) + a(b-1)(c-1)] + 6(a-1)(b-1)(c-1). The sides are powers of two,
// the larger ones last (scale bits split as evenly as they go).
inline std::optional<count_t> suite_closed_form(const std::string& name, unsigned scale) {
  const unsigned d = name == "mesh2d" ? 2 : name == "mesh3d" ? 3 : 0;
  if (d == 0) return std::nullopt;
  std::uint64_t side[3] = {1, 1, 1};
  unsigned left = scale;
  for (unsigned k = d; k > 0; --k) {
    side[d - k] = std::uint64_t{1} << (left / k);
    left -= left / k;
  }
  if (d == 2) return 2 * (side[0] - 1) * (side[1] - 1);
  const std::uint64_t a = side[0], b = side[1], c = side[2];
  return 2 * ((a - 1) * (b - 1) * c + (a - 1) * b * (c - 1) + a * (b - 1) * (c - 1)) +
         6 * (a - 1) * (b - 1) * (c - 1);
}

}  // namespace tristream::cuda
