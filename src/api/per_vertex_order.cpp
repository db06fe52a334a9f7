// api/per_vertex_order.cpp — a count's per-vertex arrays in original-id order
// (api/per_vertex_order.hpp): sorted in place (a 32-bit order where the room allows, else a
// heapsort of the arrays themselves), the declared isolated vertices merged in from the back.
#include "api/per_vertex_order.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "plan/host_model.hpp"
#include "tristream/analysis.hpp"
#include "tristream/error.hpp"

namespace tristream::api {

namespace {

// The original ids 1..declared that no vertex of the graph has: the isolated vertices a Matrix
// Market size line (ids 1..rows) declares. Precondition: ids ascending.
std::vector<std::uint64_t> declared_isolated(const std::vector<std::uint64_t>& ids,
                                             std::uint64_t declared) {
  std::vector<std::uint64_t> out;
  std::size_t a = 0;
  for (std::uint64_t id = 1; id <= declared; ++id) {
    while (a < ids.size() && ids[a] < id) ++a;
    if (a == ids.size() || ids[a] != id) out.push_back(id);
  }
  return out;
}

// Puts a[i] = a[order[i]] for every i, for each array of `arrays` at once, by walking the cycles
// of `order` (a permutation of 0..n-1) with one bit per vertex: no second copy of any array.
template <class... Arrays>
void permute_in_place(const std::vector<std::uint32_t>& order, Arrays&... arrays) {
  const std::size_t n = order.size();
  std::vector<bool> done(n, false);
  for (std::size_t start = 0; start < n; ++start) {
    if (done[start]) continue;
    const auto held = std::make_tuple(arrays[start]...);
    std::size_t j = start;
    for (;;) {
      done[j] = true;
      const std::size_t k = order[j];
      if (k == start) break;
      ((arrays[j] = arrays[k]), ...);
      j = k;
    }
    std::apply([&](const auto&... v) { ((arrays[j] = v), ...); }, held);
  }
}

// Sorts ids ascending and moves counts and degrees with them, in place (a heapsort: nothing
// beside the three arrays). Precondition: ids distinct, the three of one size.
void sort_by_id_in_place(std::vector<orig_id_t>& ids, std::vector<count_t>& counts,
                         std::vector<eid_t>& degrees) {
  const std::size_t n = ids.size();
  auto swap_at = [&](std::size_t a, std::size_t b) {
    std::swap(ids[a], ids[b]);
    std::swap(counts[a], counts[b]);
    std::swap(degrees[a], degrees[b]);
  };
  auto sift_down = [&](std::size_t root, std::size_t end) {
    for (;;) {
      std::size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && ids[child] < ids[child + 1]) ++child;
      if (ids[child] < ids[root]) return;
      swap_at(root, child);
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;) sift_down(i, n);
  for (std::size_t end = n; end > 1; --end) {
    swap_at(0, end - 1);
    sift_down(0, end - 1);
  }
}

// Merges the isolated vertices (ascending ids, degree 0, no triangle) into the id-ordered
// arrays in place, from the back: each array grows to its final size once.
void merge_isolated(const std::vector<std::uint64_t>& isolated, std::vector<std::uint64_t>& ids,
                    std::vector<count_t>& counts, std::vector<eid_t>& degrees) {
  const std::size_t n = ids.size(), total = n + isolated.size();
  for (auto* v : {&ids, &counts, &degrees}) {
    v->reserve(total);  // one array at a time: the old block is freed before the next grows
    v->resize(total);
  }
  std::size_t a = n, b = isolated.size();
  for (std::size_t i = total; i-- > 0;) {
    if (b > 0 && (a == 0 || isolated[b - 1] > ids[a - 1])) {
      ids[i] = isolated[--b];
      counts[i] = 0;
      degrees[i] = 0;
    } else {
      --a;
      ids[i] = ids[a];
      counts[i] = counts[a];
      degrees[i] = degrees[a];
    }
  }
}

}  // namespace

// The per-vertex arrays in original-id order, with the declared isolated vertices (degree 0,
// no triangle) merged in by id. The arrays by rank are put in id order in place: through a
// 32-bit order when `room` (0 = no limit) holds it beside them (a fast sort), else by a heapsort
// of the three arrays themselves; then the clustering beside the three results
// (plan/host_model.hpp: count_host's figures).
void per_vertex_figures(std::vector<orig_id_t> perm, std::vector<count_t> counts,
                        std::vector<eid_t> degrees, std::uint64_t declared, bool clustering,
                        std::uint64_t room, CountResult* r) {
  const double n = static_cast<double>(counts.size());
  const double average = average_local_clustering(counts, degrees);
  // 1. The graph's vertices by original id (vertex ids are 32-bit), every array put in that
  //    order; the permutation becomes the ids.
  TS_CHECK(counts.size() <= (std::uint64_t{1} << 32), "vertex ids are 32-bit");
  if (room && room < per_vertex_order_bytes(counts.size())) {
    sort_by_id_in_place(perm, counts, degrees);
  } else {
    std::vector<std::uint32_t> order(counts.size());
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return perm[a] < perm[b]; });
    permute_in_place(order, perm, counts, degrees);
  }
  // 2. The declared isolated vertices merged in by id.
  std::vector<std::uint64_t> isolated = declared_isolated(perm, declared);
  if (!isolated.empty()) merge_isolated(isolated, perm, counts, degrees);
  r->isolated_vertices = isolated.size();
  std::vector<std::uint64_t>().swap(isolated);
  const std::size_t total = perm.size();
  r->vertex_ids = std::move(perm);
  r->per_vertex = std::move(counts);
  r->degrees = std::move(degrees);
  // 3. The local clustering, networkx's: 2 t / (d (d - 1)), 0 below degree 2. The average is
  //    over all vertices, the isolated ones included, as networkx's is.
  if (clustering) {
    r->clustering.resize(total);
    for (std::size_t i = 0; i < total; ++i) {
      const double d = static_cast<double>(r->degrees[i]);
      r->clustering[i] = d < 2 ? 0.0 : 2.0 * static_cast<double>(r->per_vertex[i]) / (d * (d - 1));
    }
  }
  r->average_clustering = total ? average * n / static_cast<double>(total) : 0.0;
}

}  // namespace tristream::api
