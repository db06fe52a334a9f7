// gen_mesh.cpp — the mesh model (gen_models.hpp): a 2D or 3D grid of 2^scale vertices, ids in
// row-major order (neighbours have nearby ids, as in meshes and road networks), triangulated.
//
// Vertices x and x + d are adjacent for every nonzero 0/1 vector d (2D: right, down and the
// down-right diagonal, 6 neighbours inside; 3D: the 7 such vectors, which cut every cube of the
// grid into 6 tetrahedra, 14 neighbours inside). A triangle is then a chain x < y < z in the
// componentwise order with z - x a 0/1 vector of k >= 2 ones and y - x one of its 2^k - 2 proper
// nonempty parts, so the count has a closed form (mesh_triangles). Deterministic without a seed:
// edge i is the i-th (direction, position) pair.
#include <algorithm>

#include "gen_models.hpp"
#include "tristream/error.hpp"

namespace tristream::conv {

std::vector<std::uint64_t> mesh_sides(unsigned scale, unsigned dimensions) {
  std::vector<std::uint64_t> sides;
  unsigned left = scale;
  for (unsigned k = dimensions; k > 0; --k) {
    const unsigned bits = left / k;  // the larger sides last
    sides.push_back(std::uint64_t{1} << bits);
    left -= bits;
  }
  return sides;
}

std::uint64_t mesh_triangles(const std::vector<std::uint64_t>& sides) {
  const std::size_t D = sides.size();
  std::uint64_t total = 0;
  for (unsigned d = 1; d < (1u << D); ++d) {
    const unsigned k = static_cast<unsigned>(__builtin_popcount(d));
    if (k < 2) continue;
    std::uint64_t positions = 1;
    for (std::size_t j = 0; j < D; ++j) positions *= sides[j] - ((d >> j) & 1);
    total += ((std::uint64_t{1} << k) - 2) * positions;
  }
  return total;
}

namespace {

class MeshModel : public EdgeModel {
 public:
  explicit MeshModel(const GenerateOptions& o) {
    if (o.dimensions != 2 && o.dimensions != 3)
      throw Error(ErrorKind::Usage,
                  "generate: --dimensions: expected 2 or 3, got " + std::to_string(o.dimensions));
    if (o.scale < o.dimensions)
      throw Error(ErrorKind::Usage, "generate: a " + std::to_string(o.dimensions) +
                                        "D mesh needs --scale " + std::to_string(o.dimensions) +
                                        " or more");
    sides_ = mesh_sides(o.scale, o.dimensions);
    const std::size_t D = sides_.size();
    // Directions in the order of their bit patterns; first_[d] = edges before direction d.
    first_.push_back(0);
    for (unsigned d = 1; d < (1u << D); ++d) {
      std::uint64_t positions = 1;
      for (std::size_t j = 0; j < D; ++j) positions *= sides_[j] - ((d >> j) & 1);
      first_.push_back(first_.back() + positions);
    }
    total_ = first_.back();
  }
  std::uint64_t pieces() const override { return (total_ + kDrawsPerPiece - 1) / kDrawsPerPiece; }
  std::uint64_t expected_edges() const override { return total_; }
  bool exact() const override { return true; }
  void piece(std::uint64_t c, std::vector<GenEdge>& out) const override {
    const std::uint64_t lo = c * kDrawsPerPiece, hi = std::min(total_, lo + kDrawsPerPiece);
    for (std::uint64_t i = lo; i < hi; ++i) out.push_back(edge(i));
  }

 private:
  // Edge i: its direction d, then its position in the box of the vertices x with x + d inside.
  GenEdge edge(std::uint64_t i) const {
    const std::size_t D = sides_.size();
    const unsigned d = static_cast<unsigned>(std::upper_bound(first_.begin(), first_.end(), i) -
                                             first_.begin());  // 1-based pattern
    std::uint64_t pos = i - first_[d - 1];
    std::uint64_t x = 0, y = 0, stride = 1;
    for (std::size_t j = 0; j < D; ++j) {
      const std::uint64_t step = (d >> j) & 1, extent = sides_[j] - step;
      const std::uint64_t coord = pos % extent;
      pos /= extent;
      x += coord * stride;
      y += (coord + step) * stride;
      stride *= sides_[j];
    }
    return {x, y};
  }

  std::vector<std::uint64_t> sides_;
  std::vector<std::uint64_t> first_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<EdgeModel> make_mesh_model(const GenerateOptions& options) {
  return std::make_unique<MeshModel>(options);
}

}  // namespace tristream::conv
