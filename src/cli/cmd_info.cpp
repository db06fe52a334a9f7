// cmd_info.cpp — `tristream info FILE [--check] [--json]`: header, degree statistics, chunking
// and compression of a .tcsr file (an edge list is converted into a temporary one first);
// --check verifies every byte and invariant.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/input.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "common/json.hpp"
#include "edge_sorter_choice.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::cli {

int cmd_info(int argc, char** argv) {
  std::string path, format = "auto", tmp_dir;
  bool check = false, json = false, names = false;
  std::uint64_t threads = 0;
  ArgParser p("tristream info",
              "Shows the header, degree statistics, chunking and compression of a\n"
              ".tcsr file. With --check, decompresses every chunk and verifies\n"
              "every checksum and invariant (rows sorted, ids in range, orientation\n"
              "by rank, offsets consistent); exit status 1 if anything is wrong.\n"
              "An edge list is converted into a temporary .tcsr file first (as `count` does);\n"
              "the figures are then those of the graph it converts to.");
  p.positional("FILE", "a .tcsr file or an edge list ('-' reads standard input)", &path)
      .flag("check", "", "verify the whole file", &check)
      .flag("json", "-j", "print one JSON object instead of text", &json)
      .uint_option("threads", "N", "threads for --check, 1..4096 [all usable cores]", &threads, 1,
                   kMaxThreads)
      .option("format", "", "FMT", "edge-list dialect of FILE (see `tristream convert --help`)",
              &format)
      .flag("names", "", "the id columns of an edge-list FILE hold vertex names", &names)
      .option("tmp-dir", "", "DIR", "where a temporary .tcsr file goes [$TMPDIR or /tmp]",
              &tmp_dir);
  if (!p.parse(argc, argv)) return 0;

  // 1. Open (verifies header, section table, index and offsets) and optionally check it all.
  ConvertOptions conv;
  conv.format = format;
  conv.names = names;
  conv.quiet = true;
  conv.threads = static_cast<unsigned>(threads);
  const std::unique_ptr<EdgeSorter> sorter = edge_list_sorter(path, /*wanted=*/!names, 0);
  conv.edge_sorter = sorter.get();
  api::TcsrInput resolved(path, conv, tmp_dir);
  tcsr::Reader r(resolved.tcsr_path());
  double check_seconds = 0;
  if (check) {
    const auto t0 = std::chrono::steady_clock::now();
    r.check(static_cast<unsigned>(threads));
    check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // 2. Degree statistics of G+ from the row offsets.
  const auto& h = r.header();
  const eid_t* off = r.offsets();
  std::vector<eid_t> outdeg(h.n);
  double wedges_plus = 0;
  std::uint64_t isolated_rows = 0;
  for (std::uint64_t u = 0; u < h.n; ++u) {
    outdeg[u] = off[u + 1] - off[u];
    wedges_plus += static_cast<double>(outdeg[u]) * (static_cast<double>(outdeg[u]) - 1) / 2;
    isolated_rows += outdeg[u] == 0;
  }
  auto percentile = [&](double q) -> std::uint64_t {
    if (outdeg.empty()) return 0;
    const std::size_t k = std::min(outdeg.size() - 1, static_cast<std::size_t>(q * outdeg.size()));
    std::nth_element(outdeg.begin(), outdeg.begin() + static_cast<std::ptrdiff_t>(k), outdeg.end());
    return outdeg[k];
  };
  const std::uint64_t p50 = percentile(0.5), p90 = percentile(0.9), p99 = percentile(0.99);

  // 3. Chunking and compression.
  std::uint64_t compressed = 0, raw = 0, largest_chunk = 0;
  for (const auto& c : r.chunks()) {
    compressed += c.compressed_size;
    raw += c.raw_size;
    largest_chunk = std::max(largest_chunk, c.raw_size);
  }
  const double ratio =
      compressed ? static_cast<double>(raw) / static_cast<double>(compressed) : 0.0;
  const double avg_degree = h.n ? 2.0 * static_cast<double>(h.m) / static_cast<double>(h.n) : 0.0;
  const bool delta = (h.flags & tcsr::kFlagDelta) != 0;
  const bool planes = (h.flags & tcsr::kFlagPlanes) != 0;

  if (json) {
    JsonObject o;
    o.add("file", path)
        .add("converted", resolved.converted())
        .add("version", h.version)
        .add("delta_coded", delta)
        .add("byte_planes", planes)
        .add("names", r.has_names())
        .add("vertices", h.n)
        .add("edges", h.m)
        .add("max_degree", h.max_degree)
        .add("max_out_degree", h.max_out_degree)
        .add("average_degree", avg_degree)
        .add("out_degree_p50", p50)
        .add("out_degree_p90", p90)
        .add("out_degree_p99", p99)
        .add("rows_without_out_edges", isolated_rows)
        .add("oriented_wedges", wedges_plus)
        .add("chunks", h.num_chunks)
        .add("chunk_edges", h.chunk_edges)
        .add("largest_chunk_bytes", largest_chunk)
        .add("file_bytes", r.file_size())
        .add("adjacency_raw_bytes", raw)
        .add("adjacency_compressed_bytes", compressed)
        .add("compression_ratio", ratio);
    if (check) o.add("check", "ok").add("check_seconds", check_seconds);
    std::printf("%s\n", o.str().c_str());
    return 0;
  }
  std::printf("file              %s\n", path.c_str());
  std::printf("format            .tcsr version %u%s%s%s%s\n", h.version,
              delta ? ", delta-coded rows" : "", planes ? ", byte planes" : "",
              r.has_names() ? ", vertex names" : "",
              resolved.converted() ? " (converted from the edge list into a temporary file)" : "");
  std::printf("vertices          %" PRIu64 "\n", h.n);
  std::printf("edges             %" PRIu64 " (undirected, simple)\n", h.m);
  std::printf("degree            max %" PRIu64 ", average %.2f\n", h.max_degree, avg_degree);
  std::printf("out-degree (G+)   max %" PRIu64 ", p50 %" PRIu64 ", p90 %" PRIu64 ", p99 %" PRIu64
              ", %" PRIu64 " rows empty\n",
              h.max_out_degree, p50, p90, p99, isolated_rows);
  std::printf("oriented wedges   %.4g\n", wedges_plus);
  std::printf("chunks            %" PRIu64 " of up to %" PRIu64 " edges (largest %s raw)\n",
              h.num_chunks, h.chunk_edges, format_bytes(largest_chunk).c_str());
  std::printf("adjacency         %s raw, %s compressed (ratio %.2f)\n", format_bytes(raw).c_str(),
              format_bytes(compressed).c_str(), ratio);
  std::printf("file size         %s\n", format_bytes(r.file_size()).c_str());
  if (check) std::printf("check             ok (%.3f s)\n", check_seconds);
  return 0;
}

}  // namespace tristream::cli
