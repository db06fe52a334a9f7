// per_vertex.cpp — writes the per-vertex table (vertex,degree,triangles,clustering).
#include "per_vertex.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <numeric>

#include "common/interrupt.hpp"
#include "common/json.hpp"
#include "tristream/error.hpp"

namespace tristream::cli {

char per_vertex_separator(const std::string& path) {
  if (path.size() < 4) return ',';
  std::string ext = path.substr(path.size() - 4);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".tsv" ? '\t' : ',';
}

double local_clustering(count_t triangles, eid_t degree) {
  if (degree < 2) return 0.0;
  const double d = static_cast<double>(degree);
  return 2.0 * static_cast<double>(triangles) / (d * (d - 1));
}

void write_per_vertex(std::FILE* f, char separator, const std::vector<orig_id_t>& ids,
                      const std::vector<count_t>& triangles, const std::vector<eid_t>& degrees,
                      const std::vector<orig_id_t>& isolated) {
  TS_CHECK(ids.size() == triangles.size() && ids.size() == degrees.size(),
           "per-vertex columns differ in size");
  // 1. The vertices in original-id order.
  std::vector<std::uint64_t> order(ids.size());
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::uint64_t a, std::uint64_t b) { return ids[a] < ids[b]; });
  std::vector<orig_id_t> lonely = isolated;
  std::sort(lonely.begin(), lonely.end());

  // 2. Header, then both sequences merged by id. The clustering prints in the shortest form that
  //    reads back to the same double, so it equals another tool's value to the last digit.
  std::fprintf(f, "vertex%cdegree%ctriangles%cclustering\n", separator, separator, separator);
  std::size_t a = 0, b = 0;
  while (a < order.size() || b < lonely.size()) {
    if (((a + b) & 0xffff) == 0) throw_if_interrupted();  // the caller removes the temporary
    if (b < lonely.size() && (a == order.size() || lonely[b] < ids[order[a]])) {
      std::fprintf(f, "%" PRIu64 "%c0%c0%c0\n", static_cast<std::uint64_t>(lonely[b++]), separator,
                   separator, separator);
      continue;
    }
    const std::uint64_t v = order[a++];
    std::fprintf(f, "%" PRIu64 "%c%" PRIu64 "%c%" PRIu64 "%c%s\n",
                 static_cast<std::uint64_t>(ids[v]), separator,
                 static_cast<std::uint64_t>(degrees[v]), separator,
                 static_cast<std::uint64_t>(triangles[v]), separator,
                 json_number(local_clustering(triangles[v], degrees[v])).c_str());
  }
}

}  // namespace tristream::cli
