// test_util.hpp — shared helpers for the GoogleTest suites: seeded graph builders, a brute-force
// triangle oracle, temporary directories and a runner for the tristream CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tristream/csr.hpp"
#include "tristream/generate.hpp"
#include "tristream/plan.hpp"

namespace tristream::test {

using EdgeList = std::vector<std::pair<vid_t, vid_t>>;

// Closed-form graphs (undirected edge lists on 0..n-1).
EdgeList complete_graph(vid_t n);                      // C(n,3) triangles
EdgeList complete_bipartite(vid_t a, vid_t b);         // 0 triangles
EdgeList wheel(vid_t rim);                             // rim triangles (rim >= 4), hub = 0
EdgeList friendship(vid_t k);                          // k triangles sharing one vertex
EdgeList disjoint_cliques(vid_t cliques, vid_t size);  // cliques * C(size,3)
// Seeded Erdős–Rényi G(n, m) with possible duplicates and self-loops (the cleaner removes them).
EdgeList random_graph(vid_t n, std::uint64_t m, std::uint64_t seed);
// Seeded skewed graph: a few hubs joined to many leaves plus random edges.
EdgeList skewed_graph(vid_t n, std::uint64_t m, std::uint64_t seed);

// A seeded graph of a parameterised suite: n vertices, m drawn edges, skewed or uniform;
// oriented (cleaned, ranked). case_name: "skewed_n600" or "random_n40", for test names.
struct GraphCase {
  vid_t n;
  std::uint64_t m;
  bool skewed;
};
OrientedGraph case_graph(const GraphCase& c, std::uint64_t seed);
std::string case_name(const GraphCase& c);

// The graph `tristream generate` makes with options o (generate_edges), oriented; its vertices are
// the 2^o.scale ids.
OrientedGraph generated_graph(const GenerateOptions& o);

// The edges as a plain edge list ("a b" lines), ids shifted by `shift`; with `messy`, every tenth
// edge repeated reversed and every 97th followed by a self-loop (the converter merges and drops
// them).
std::string plain_edge_text(const EdgeList& e, std::uint64_t shift = 0, bool messy = true);
// plain_edge_text of `base`, then of its first `wide` edges with 2^32 added to their ids: blocks
// of packed keys first, then blocks that need 64-bit ids.
std::string plain_edge_text_crossing_2_to_32(const EdgeList& base, std::size_t wide);

// Number of vertices spanned by an edge list (max id + 1).
std::uint64_t vertex_count(const EdgeList& e);
// Brute force over the cleaned undirected graph: for every edge {u,v} and every w > max(u,v)
// adjacent to both. Independent of the library's orientation and counters.
count_t brute_force_triangles(std::uint64_t n, const EdgeList& e);
// Per-vertex brute force (triangles incident to each vertex).
std::vector<count_t> brute_force_per_vertex(std::uint64_t n, const EdgeList& e);

// A temporary directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);
// A path in single quotes, for the shell command lines run_cli takes.
std::string q(const std::string& s);
// The text of the first `"key":` value in a JSON line (a number, or a string with its quotes),
// "" when absent.
std::string json_field(const std::string& json, const std::string& key);
void write_edge_list(const std::string& path, const EdgeList& e);

struct RunResult {
  int status = -1;  // exit status
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs a shell command line (quoted by the caller) with standard input from /dev/null, and
// returns its exit status (128 + the signal when one ended it) and its output.
RunResult run_shell(const std::string& command);
// Runs the tristream binary with the given argument string (shell-quoted by the caller).
RunResult run_cli(const std::string& args);

// Runs the binary with `args` in a child process (no shell; stderr discarded, stdout into
// `stdout_path`, or discarded when empty); returns the child's own peak RSS in bytes (wait4:
// RUSAGE_CHILDREN would hold the largest of every child this test program has run) and its exit
// status in `status` (128 when it did not exit).
std::uint64_t child_peak_rss(const std::vector<std::string>& args, int& status,
                             const std::string& stdout_path = "");

// A run of the binary stopped by a signal (run_cli_signalled).
struct SignalledRun {
  bool finished_first = false;  // exited before the signal was sent
  int status = -1;              // exit status, or 128 + the signal that ended it
  double seconds_after_signal = 0;
  std::string out, err;
};
// Runs the binary with `args` (no shell; stdout and stderr into files in `dir`, TMPDIR =
// `tmpdir`), sends `sig` after `delay` seconds and waits for its end (killed 30 s after the signal,
// a test failure). finished_first: it ended before the signal was sent.
SignalledRun run_cli_signalled(const std::vector<std::string>& args, double delay, int sig,
                               const std::string& dir, const std::string& tmpdir);

// Path of a file under tests/data.
std::string data_file(const std::string& name);

// The plan with every other unit (from unit `first` on) cut into `slices` slices
// (WorkUnit::slices), each slice right after the previous one, then finished again (bytes, the
// device cache's replay) with the plan's units in flight.
Plan sliced_plan(const Plan& plan, std::uint32_t slices, bool per_vertex, std::size_t first = 0);

// A file's bytes; a file (re)written from bytes.
using Bytes = std::vector<unsigned char>;
Bytes read_bytes(const std::string& path);
void write_bytes(const std::string& path, const Bytes& b);

// Flips a bit of the .tcsr file's stored row-offsets checksum and reseals its header: the
// offsets keep every rule, only their checksum tells.
void flip_offsets_checksum(const std::string& path);

// Runs f and expects a tristream::Error of kind Input whose message contains every one of
// `parts` (a GoogleTest failure otherwise).
void expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts);

// Edges in original ids, as (min, max) pairs.
using OrigEdge = std::pair<std::uint64_t, std::uint64_t>;
// The undirected simple edge set of a .tcsr file, in original ids.
std::set<OrigEdge> edge_set(const std::string& path);
// The cleaned edge set of a raw edge list: self-loops dropped, duplicates merged.
std::set<OrigEdge> clean(const std::vector<OrigEdge>& edges);

}  // namespace tristream::test
