// tristream/analysis.hpp — quantities derived from triangle counts: degrees and clustering.
#pragma once

#include <vector>

#include "tristream/csr.hpp"
#include "tristream/wedges.hpp"

namespace tristream {

// Undirected degree of every vertex of an oriented graph G+: out-degree plus in-degree.
std::vector<eid_t> undirected_degrees(const CsrView& g);

// Number of wedges (paths of length two), sum over v of d(v) * (d(v) - 1) / 2, exact (WedgeSum).
WedgeSum wedge_sum(const std::vector<eid_t>& degrees);
// wedge_sum as a double.
double wedge_count(const std::vector<eid_t>& degrees);

// 3 * triangles / wedges; 0 when there are no wedges.
double transitivity(count_t triangles, const WedgeSum& wedges);

// Global clustering coefficient (transitivity): 3 * triangles / wedges; 0 when there are no wedges.
double transitivity(count_t triangles, const std::vector<eid_t>& degrees);

// Average local clustering coefficient: the mean over all vertices of
// 2 t(v) / (d(v) (d(v) - 1)), where vertices with degree < 2 contribute 0 (as networkx does).
double average_local_clustering(const std::vector<count_t>& per_vertex,
                                const std::vector<eid_t>& degrees);

}  // namespace tristream
