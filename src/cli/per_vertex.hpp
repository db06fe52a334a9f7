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
#include <vector>

#include "tristream/types.hpp"

namespace tristream::cli {

// ',' or '\t' (for names ending in ".tsv", any case).
char per_vertex_separator(const std::string& path);

// networkx's local clustering of a vertex of degree `degree` in `triangles` triangles.
double local_clustering(count_t triangles, eid_t degree);

// Writes the header and one row per vertex: ids[v] is a vertex's original id, triangles[v] and
// degrees[v] its counts (CountResult's per-vertex arrays; a declared isolated vertex is a row of
// degree 0). Precondition: the three have the same size; ids ascending.
void write_per_vertex(std::FILE* f, char separator, const std::vector<orig_id_t>& ids,
                      const std::vector<count_t>& triangles, const std::vector<eid_t>& degrees);

}  // namespace tristream::cli
