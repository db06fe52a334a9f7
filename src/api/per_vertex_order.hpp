// api/per_vertex_order.hpp — a count's per-vertex arrays put in original-id order, with the
// isolated vertices a source declares merged in, and the local clustering beside them.
#pragma once

#include <cstdint>
#include <vector>

#include "tristream/tristream.hpp"

namespace tristream::api {

// The per-vertex arrays in original-id order, with the declared isolated vertices (degree 0,
// no triangle) merged in by id. The arrays by rank are put in id order in place: through a
// 32-bit order when `room` (0 = no limit) holds it beside them (a fast sort), else by a heapsort
// of the three arrays themselves; then the clustering beside the three results
// (plan/host_model.hpp: count_host's figures).
void per_vertex_figures(std::vector<orig_id_t> perm, std::vector<count_t> counts,
                        std::vector<eid_t> degrees, std::uint64_t declared, bool clustering,
                        std::uint64_t room, CountResult* r);

}  // namespace tristream::api
