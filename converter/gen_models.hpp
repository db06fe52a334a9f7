// gen_models.hpp — converter internals: the generator models behind `tristream generate`. A model
// is a list of independent pieces; piece c's edges (in order) are a pure function of the options
// and c, so the pieces can be made on any threads in any order and laid end to end give the same
// edge list. Edges are raw: a model may produce self-loops and repeats, which conversion drops.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tristream/generate.hpp"

namespace tristream::conv {

using GenEdge = std::pair<std::uint64_t, std::uint64_t>;

class EdgeModel {
 public:
  virtual ~EdgeModel() = default;
  virtual std::uint64_t pieces() const = 0;
  // Appends the edges of piece c (c < pieces()) to out.
  virtual void piece(std::uint64_t c, std::vector<GenEdge>& out) const = 0;
  // The edges in total: exact for the models that draw a fixed number, else the expectation
  // (progress and job sizes only).
  virtual std::uint64_t expected_edges() const = 0;
  // Whether expected_edges() is exact (the fixed-count models and the mesh).
  virtual bool exact() const { return false; }
};

// Edges per piece: exactly, for the fixed-count models (piece c holds draws [c * kDrawsPerPiece,
// (c + 1) * kDrawsPerPiece)); in expectation for the Bernoulli-pair models.
constexpr std::uint64_t kDrawsPerPiece = std::uint64_t{1} << 12;

// The model the options name. Bad options throw Error(Usage) naming the option.
std::unique_ptr<EdgeModel> make_model(const GenerateOptions& options);

// The fixed-count models: kronecker, uniform, powerlaw (Chung-Lu).
std::unique_ptr<EdgeModel> make_draw_model(const GenerateOptions& options);
// The triangulated 2D or 3D grid (mesh).
std::unique_ptr<EdgeModel> make_mesh_model(const GenerateOptions& options);
// The Bernoulli-pair models: community (planted partition) and hub.
std::unique_ptr<EdgeModel> make_pair_model(const GenerateOptions& options);

// Closed forms for the mesh: the side lengths of its grid (2 or 3 of them, product 2^scale) and
// its triangle count.
std::vector<std::uint64_t> mesh_sides(unsigned scale, unsigned dimensions);
std::uint64_t mesh_triangles(const std::vector<std::uint64_t>& sides);

}  // namespace tristream::conv
