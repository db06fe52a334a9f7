// tristream/tristream.hpp — the public C++ API: count the triangles of a file or an in-memory edge
// array, convert either into a .tcsr file. One include gives the whole library:
//
//   #include <tristream/tristream.hpp>
//   tristream::CountOptions opt;
//   opt.backend = "cpu";                      // strings as on the command line
//   opt.per_vertex = true;
//   tristream::CountResult r = tristream::count("graph.tcsr", opt);   // or any edge list
//   std::uint64_t t = r.triangles;
//
// Link with the CMake target tristream::tristream (find_package(tristream)) or
// `pkg-config --cflags --libs tristream`. docs/library.md has the complete guide.
//
// Errors: every function throws tristream::Error (error.hpp): kind Input for a missing, damaged or
// unparsable input (the message names the file and line), Usage for a bad option value, Device
// for a CUDA failure, Internal otherwise. No output file is left behind by a failed conversion.
// Thread safety: independent calls may run concurrently on different threads; a call blocks until
// the count is done and uses up to CountOptions::threads threads (all cores by default).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tristream/convert.hpp"
#include "tristream/error.hpp"

namespace tristream {

// A byte budget given as a number of bytes or as text like the command line's ("512M", "4G",
// "1T", "4096"; K, M, G, T are binary multiples). 0 or "" means "choose" (the default).
// Assigning text that is not a size throws Error(Usage).
class ByteSize {
 public:
  ByteSize() = default;
  // Any integer type; throws Error(Usage) for a negative value.
  template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  ByteSize(Int bytes) : bytes_(checked(bytes)) {}  // NOLINT: implicit on purpose
  ByteSize(const std::string& text);               // NOLINT
  ByteSize(const char* text) : ByteSize(std::string(text ? text : "")) {}  // NOLINT
  std::uint64_t bytes() const { return bytes_; }

 private:
  template <class Int>
  static std::uint64_t checked(Int bytes) {
    if constexpr (std::is_signed_v<Int>) {
      if (bytes < 0)
        throw Error(ErrorKind::Usage,
                    "a byte size cannot be negative (" + std::to_string(bytes) + ")");
    }
    return static_cast<std::uint64_t>(bytes);
  }
  std::uint64_t bytes_ = 0;
};

// Parses a size like the command line's --gpu-memory ("4G" -> 4 << 30, "1.5G" -> 3 << 29): a
// decimal number, optionally with a fraction (which needs a suffix; the result is rounded down to
// whole bytes), and an optional K/M/G/T suffix ("B", "KB", "KiB" accepted, any case). `what`
// names the value in the error message. Throws Error(Usage).
std::uint64_t parse_byte_size(const std::string& text, const std::string& what);

// The options of `tristream count`, with the command line's names and defaults.
struct CountOptions {
  std::string backend = "auto";  // auto (CUDA when a GPU exists, else CPU), cpu or cuda
  std::string kernel = "auto";   // CUDA kernel: auto, lstc, trust, trust:lite, trust:in, ...
  unsigned device = 0;           // CUDA device ordinal
  // Several workers (docs/scale-out.md): "all" or CUDA ordinals "0,1,3" (one worker per entry;
  // empty = the one backend above); with hybrid the CPU joins as a worker that takes a unit
  // only when it finishes it before the GPUs; cpu_workers adds that many CPU workers.
  std::string devices;
  bool hybrid = false;
  unsigned cpu_workers = 0;
  // Under mpirun: how the ranks share the units: auto, static or dynamic.
  std::string rank_split = "auto";
  unsigned threads = 0;         // CPU threads (decompression, CPU backend); 0 = all cores
  ByteSize gpu_memory;          // device budget; 0 = free GPU memory minus a reserve
  ByteSize host_memory;         // host budget; 0 = a share of the available memory
  std::string scheme = "auto";  // out-of-core partition: auto, range, hash, vertex or pair
  std::uint32_t parts = 0;      // force the number of parts (<= 4096; 1 = in core); 0 = choose
  bool per_vertex = false;      // fill CountResult::per_vertex (and vertex_ids)
  bool clustering = false;      // fill CountResult::clustering and average_clustering (implies
                                // per-vertex counts)
  std::string format = "auto";  // edge-list dialect of a path input (see docs/convert.md)
  std::string delimiter;        // CSV column delimiter of a path input (implies csv); empty = ,
  bool names = false;           // a path input: the id columns hold vertex names (convert --names)
  bool header = false;          // the first line of a path input names the columns: skip it
  // Count the isolated vertices a path input declares (a Matrix Market size line: ids 1..rows)
  // in vertices, average_clustering and the per-vertex arrays, as networkx does (implies
  // per_vertex). Throws Error(Usage) for a .tcsr input, which does not record them.
  bool count_isolated = false;
  std::string tmp_dir;  // where a temporary .tcsr goes; empty = $TMPDIR or /tmp
  // An edge-list input's repeats removed and rows sorted there (ConvertOptions::edge_sorter,
  // e.g. cuda::make_edge_sorter on the device the count runs on, owns_device false); null = the
  // host's sorts. Not owned; it must outlive the call.
  EdgeSorter* edge_sorter = nullptr;
  bool quiet = true;  // no progress output on stderr (the library prints nothing)
  std::string trace;  // write a Chrome trace of the pipeline to this file; empty = none
                      // (CountResult::write_trace writes it later instead)
  // Keep every span of the run for a trace written later (CountResult::write_trace): without it
  // (and without `trace`) the chunks' read and decompress spans, one per batch of chunks, are
  // kept as totals only, so that a run of many units stays within its host budget.
  bool keep_trace = false;
  // Called on the counting thread after each work unit: units done, units planned, seconds.
  // Must not throw.
  std::function<void(std::uint64_t, std::uint64_t, double)> progress;
  // Ctrl-C (SIGINT) stops the count between work units and returns a result with interrupted
  // set (the previous handler is restored afterwards). Off: the process's handlers are left
  // alone.
  bool handle_sigint = false;
};

struct PipelineStats;  // stats.hpp

struct CountResult {
  std::uint64_t triangles = 0;
  std::uint64_t vertices = 0;  // n: vertices with at least one edge that is not a self-loop
  std::uint64_t edges = 0;     // undirected simple edges after cleaning
  double transitivity = 0;     // global clustering coefficient, 3 triangles / wedges
  // With per_vertex, clustering or count_isolated, one entry per vertex (n, plus the isolated
  // vertices with count_isolated), ordered by original id (ascending):
  std::vector<std::uint64_t> vertex_ids;  // the vertices' ids as they appeared in the input
  std::vector<std::uint64_t> per_vertex;  // triangles through vertex_ids[i]
  std::vector<std::uint64_t> degrees;     // the undirected degree of vertex_ids[i]
  // With per_vertex, when the graph has vertex names (converted with names): vertex_ids[i]'s.
  std::vector<std::string> vertex_names;
  // With clustering: the local clustering coefficient of vertex_ids[i] (0 for degree < 2, as
  // networkx does).
  std::vector<double> clustering;
  double average_clustering = 0;  // with per_vertex or clustering: their mean over the vertices
  bool has_per_vertex = false;    // per_vertex, clustering or count_isolated was asked
  // With count_isolated: the vertices the input declares (0 when it declares none) and those
  // of them without an edge (counted in vertices and the per-vertex arrays, degree 0).
  bool counted_isolated = false;
  std::uint64_t declared_vertices = 0;
  std::uint64_t isolated_vertices = 0;
  std::string backend;         // "cpu" or "cuda"
  std::string device;          // the backend's description
  std::string stats;           // the pipeline's measurements: one JSON object (docs/out-of-core.md)
  std::string plan;            // the partition the planner chose: one JSON object
  std::string plan_summary;    // the same in one line for people ("range, p = 3, 9 units")
  std::string stats_summary;   // the measurements in one line for people
  bool interrupted = false;    // handle_sigint and Ctrl-C: the counts are incomplete (the
                               // triangles of the units done; no degree or per-vertex figures)
  double seconds = 0;          // the whole call
  bool converted = false;      // the input was an edge list, converted to a temporary .tcsr
  double convert_seconds = 0;  // converting an edge-list input (0 for a .tcsr file)
  // Where an edge-list input's repeats were removed and rows sorted (ConvertSummary::sorter:
  // "host", or the edge sorter's name, e.g. "CUDA device 0, NVIDIA H200"); empty for a .tcsr file.
  std::string convert_sorter;
  double plan_seconds = 0;   // the census and the planner
  double count_seconds = 0;  // the streamed count
  // The host budget of the whole process (0 = unlimited) and the process's peak resident memory
  // when the call returned (VmHWM, common/host_peak.hpp; 0 when unknown): docs/memory.md.
  std::uint64_t host_budget_bytes = 0;
  std::uint64_t host_peak_bytes = 0;
  // Where the call's seconds went (docs/outputs.md, "Timing"). The stages of the calling thread
  // run one after the other: [convert], open, [wait for startup], census, plan, pipeline, finish,
  // teardown; startup (the backend's device initialisation) runs on its own thread from the call's
  // start.
  struct Timing {
    double before_call = 0;   // the process's start to the call (set by the command line)
    double startup = 0;       // making the backend: CUDA context, streams, kernel warm-up
    double startup_wait = 0;  // the part of startup the calling thread waited for after open
    double image = 0;         // waiting for the in-core image's decoding and registering it
    double open = 0;          // opening the .tcsr file (header, offsets, chunk index, census)
    double census = 0;        // the block census (a pass, or reading the stored one)
    double plan = 0;          // resolving the budgets and the planner
    // The census and planner seconds that ran while the device started (with --gpu-memory on
    // a GPU: the plan is made beside the startup), not in `census` and `plan`.
    double plan_ahead = 0;
    double pipeline = 0;  // the streamed count (= count_seconds)
    double release = 0;   // after the pipeline: giving its memory back (device, pinned host blocks)
    double finish = 0;    // after the pipeline: degrees, per-vertex figures, the result
    // after the result: the workers, the in-core image and the file given back (the devices'
    // memory, the pinned host memory unregistered and freed)
    double teardown = 0;
  } timing;
  // Where the block census came from: "none" (in-core), "stored" (the file's) or "pass".
  std::string census = "none";
  // Advice for the user (one line, or empty): e.g. that `tristream reindex FILE` would store the
  // census of a file that needed a pass over the graph.
  std::string note;
  // The object `tristream count --json` prints ("input" is the given name).
  std::string to_json(const std::string& input = "") const;
  // Writes the Chrome trace of the run (as CountOptions::trace does; the read and decompress
  // lanes only with CountOptions::trace or keep_trace) to f. Precondition: f is
  // open for writing; the result came from count or count_edges.
  void write_trace(std::FILE* f) const;
  // The pipeline's measurements behind stats and write_trace.
  std::shared_ptr<const PipelineStats> pipeline_stats;
};

// Counts the triangles of `input`: a .tcsr file, or any edge list `tristream convert` reads
// (converted into a temporary .tcsr file under options.tmp_dir first); "-" reads standard input.
// Preconditions: none beyond a readable input; bad options throw Error(Usage).
CountResult count(const std::string& input, const CountOptions& options = {});

// Counts the triangles of the graph with the m edges pairs[2i] -- pairs[2i + 1] (u0 v0 u1 v1 ...,
// ids any values; self-loops are dropped, duplicate and reverse edges merged). The edges are
// converted to a temporary .tcsr file under options.tmp_dir. Preconditions: pairs points to 2 m
// readable ids (may be null when m == 0). options.format, delimiter and header are ignored;
// count_isolated throws Error(Usage) (an array declares no vertex count).
CountResult count_edges(const std::uint64_t* pairs, std::size_t m,
                        const CountOptions& options = {});
CountResult count_edges(const std::uint32_t* pairs, std::size_t m,
                        const CountOptions& options = {});

// Converts m in-memory edges (as count_edges takes them) into the .tcsr file `output`, cleaned
// and oriented like `convert` (convert.hpp) does for a file; options.format is ignored.
// Preconditions: as count_edges. The file is written atomically (no partial output on error).
ConvertSummary convert_edges(const std::uint64_t* pairs, std::size_t m, const std::string& output,
                             const ConvertOptions& options = {});
ConvertSummary convert_edges(const std::uint32_t* pairs, std::size_t m, const std::string& output,
                             const ConvertOptions& options = {});

// Stores the planner's block census in the .tcsr file at `path` (its census extension, format
// version 3; formats/FORMAT.md), replacing an older one, so that out-of-core plans of the file
// need no pass over the graph. The file is rewritten atomically (a copy renamed over it).
// Returns the census extension's bytes. Throws Error(Input) for a file that is not valid .tcsr.
std::uint64_t reindex(const std::string& path, unsigned threads = 0);

// The file conversion itself is convert.hpp's:
//   ConvertSummary convert(const std::string& input, const std::string& output,
//                          const ConvertOptions& options = {});

// The library's version, "MAJOR.MINOR.PATCH".
std::string version();

}  // namespace tristream
