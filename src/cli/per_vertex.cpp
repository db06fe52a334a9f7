// per_vertex.cpp — writes the per-vertex table (vertex,degree,triangles,clustering).
#include "per_vertex.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>

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

std::string csv_field(std::string_view text, char separator) {
  if (text.find_first_of(std::string{separator, '"', '\n', '\r'}) == std::string_view::npos)
    return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

void write_per_vertex(std::FILE* f, char separator, const std::vector<orig_id_t>& ids,
                      const std::vector<count_t>& triangles, const std::vector<eid_t>& degrees,
                      const std::vector<std::string>* names) {
  TS_CHECK(ids.size() == triangles.size() && ids.size() == degrees.size(),
           "per-vertex columns differ in size");
  TS_CHECK(std::is_sorted(ids.begin(), ids.end()), "per-vertex ids are not in ascending order");
  TS_CHECK(!names || names->size() == ids.size(), "per-vertex names differ in size");
  // The clustering prints in the shortest form that reads back to the same double, so it equals
  // another tool's value to the last digit.
  std::fprintf(f, "vertex%cdegree%ctriangles%cclustering\n", separator, separator, separator);
  for (std::size_t v = 0; v < ids.size(); ++v) {
    if ((v & 0xffff) == 0) throw_if_interrupted();  // the caller removes the temporary
    const std::string vertex = names ? csv_field((*names)[v], separator) : std::to_string(ids[v]);
    std::fwrite(vertex.data(), 1, vertex.size(), f);  // a name may hold any byte
    std::fprintf(f, "%c%" PRIu64 "%c%" PRIu64 "%c%s\n", separator,
                 static_cast<std::uint64_t>(degrees[v]), separator,
                 static_cast<std::uint64_t>(triangles[v]), separator,
                 json_number(local_clustering(triangles[v], degrees[v])).c_str());
  }
}

}  // namespace tristream::cli
