// per_vertex.hpp — the table `count --per-vertex FILE` writes: one row per vertex, ordered by
// original id, with the columns vertex,degree,triangles,clustering.
//
// `clustering` is the local clustering coefficient as networkx defines it: 2 t / (d (d - 1)) for
// a vertex of degree d >= 2 in t triangles, 0 below degree 2. The format is CSV with a header
// line; TSV (same header, tab separated) when the file name ends in ".tsv"; "-" is standard
// output (CSV).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "tristream/types.hpp"

namespace tristream::cli {

// ',' or '\t' (for names ending in ".tsv", any case).
char per_vertex_separator(const std::string& path);

// networkx's local clustering of a vertex of degree `degree` in `triangles` triangles.
double local_clustering(count_t triangles, eid_t degree);

// Writes the header and one row per vertex: ids[v] is a vertex's original id, triangles[v] and
// degrees[v] its counts (CountResult's per-vertex arrays; a declared isolated vertex is a row of
// degree 0). With `names` (the graph's vertex names, CountResult::vertex_names), the vertex
// column holds names[v] instead of the id. Precondition: the arrays (and names) have the same
// size; ids ascending.
void write_per_vertex(std::FILE* f, char separator, const std::vector<orig_id_t>& ids,
                      const std::vector<count_t>& triangles, const std::vector<eid_t>& degrees,
                      const std::vector<std::string>* names = nullptr);

// A field as CSV (or TSV) writes it: as it is, or in quotes ("" for a quote inside) when it holds
// the separator, a quote or a line end.
std::string csv_field(std::string_view text, char separator);

}  // namespace tristream::cli
