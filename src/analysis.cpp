// analysis.cpp — transitivity and average local clustering from triangle counts and degrees
// (tristream/analysis.hpp).
#include "tristream/analysis.hpp"

#include "tristream/error.hpp"

namespace tristream {

std::vector<eid_t> undirected_degrees(const CsrView& g) {
  std::vector<eid_t> d(g.rows, 0);
  for (std::uint64_t u = 0; u < g.rows; ++u) {
    d[u] += g.degree(u);
    for (const vid_t* p = g.begin(u); p != g.end(u); ++p) {
      TS_CHECK(*p < g.rows, "column id out of range");
      ++d[*p];
    }
  }
  return d;
}

WedgeSum wedge_sum(const std::vector<eid_t>& degrees) {
  WedgeSum w;
  for (eid_t d : degrees) w.add_degree(d);
  return w;
}

double wedge_count(const std::vector<eid_t>& degrees) {
  return wedge_sum(degrees).value();
}

double transitivity(count_t triangles, const WedgeSum& wedges) {
  const double w = wedges.value();
  return w > 0 ? 3.0 * static_cast<double>(triangles) / w : 0.0;
}

double transitivity(count_t triangles, const std::vector<eid_t>& degrees) {
  return transitivity(triangles, wedge_sum(degrees));
}

double average_local_clustering(const std::vector<count_t>& per_vertex,
                                const std::vector<eid_t>& degrees) {
  TS_CHECK(per_vertex.size() == degrees.size(), "per-vertex counts and degrees differ in size");
  if (degrees.empty()) return 0.0;
  double sum = 0;
  for (std::size_t v = 0; v < degrees.size(); ++v) {
    const double d = static_cast<double>(degrees[v]);
    if (d >= 2) sum += 2.0 * static_cast<double>(per_vertex[v]) / (d * (d - 1));
  }
  return sum / static_cast<double>(degrees.size());
}

}  // namespace tristream
