// tristream/plan.hpp — the partition planner (src/plan.cpp). No CUDA types.
//
// The planner is a pure function of the graph's metadata (n, m, row offsets, chunk index), a
// block census (exact edge counts per block, gathered by one streamed pass over the columns,
// only when the graph does not fit in-core), a device budget and a host budget. It returns the
// partition (scheme and p), the work units in execution order, their sizes and estimated work,
// the estimated bytes moved and a `reason`.
//
// Schemes (DESIGN.md, "The counting model"):
//   range  — BBTC: p contiguous rank ranges balanced by edges; tasks (i, j, k) with i <= j <= k.
//   hash   — TRUST: part(x) = x mod p; all p^3 tasks.
//   vertex — LSTC: partition i owns the contiguous rows V_i (balanced by wedges); its unit holds
//            A = B = the rows of V_i with columns rebased into X_i = N+(V_i), and C = the proxy
//            rows X_i restricted to columns in X_i; only local rows are counted.
//   pair   — range's parts; one unit per pair i <= j: A = G_ij, B = R_i, C = R_j, where R_a is
//            row part a whole with global column ids (the suffix block G_{a,>=0}), so every edge
//            is an edge of A once and each intersection is the in-core one.
// A unit's blocks sit in one staging slot; two slots exist at once (double buffering), so the
// plan fits when 2 * slot_bytes (+ per-vertex arrays) <= device budget.
//
// Host staging: a unit's blocks are normally built in a host staging slot as large as its device
// slot (pinned on CUDA). When that host slot does not fit the host budget but the device slot
// fits the device budget, the in-core plan (p = 1) uses *streamed staging* instead: the unit is
// built and uploaded in pieces of piece_bytes through a ring of staging_buffers host buffers, so
// its host need is the row offsets + the ring + the decompression window, independent of m.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tristream/format.hpp"
#include "tristream/packed_rows.hpp"
#include "tristream/types.hpp"
#include "tristream/wedges.hpp"

namespace tristream {

enum class Scheme { Auto, Range, Hash, Vertex, Pair };
// The most parts --parts may force (the census's histograms grow with p^2). The planner also caps
// a forced p at the graph's rows n (PlanOptions::parts).
constexpr std::uint64_t kMaxParts = 4096;
std::string scheme_name(Scheme s);
// "auto" | "range" | "hash" | "vertex" | "pair"; anything else throws Error(Usage).
Scheme parse_scheme(const std::string& name);

// Where the oriented graph comes from: a .tcsr file (reader_source) or memory (memory_source,
// for tests). read_chunk must be callable from several threads at once.
class GraphSource {
 public:
  virtual ~GraphSource() = default;
  virtual std::string name() const = 0;
  virtual std::uint64_t n() const = 0;
  virtual eid_t m() const = 0;
  virtual const eid_t* offsets() const = 0;  // n + 1 entries
  virtual const std::vector<tcsr::ChunkInfo>& chunks() const = 0;
  virtual void read_chunk(std::uint64_t k, vid_t* out) const = 0;
  virtual std::uint64_t compressed_bytes() const = 0;  // adjacency bytes on disk
  // Chunk k's columns where they already lie decoded in memory for as long as the source lives
  // (the in-core image once it has decoded them), else null: readers then use them in place
  // instead of copying them out with read_chunk. Once non-null for k, it stays so.
  virtual const vid_t* resident_chunk(std::uint64_t k) const {
    (void)k;
    return nullptr;
  }
  // The file's stored census (its census extension's payload, or its first `limit` bytes) into
  // *out; false when it has none.
  virtual bool stored_census(std::vector<unsigned char>* out, std::size_t limit = SIZE_MAX) const {
    (void)out;
    (void)limit;
    return false;
  }
};

// A source over a tcsr::Reader (which must outlive it).
std::unique_ptr<GraphSource> reader_source(const tcsr::Reader& reader);
// A source over an in-memory graph (which must outlive it), cut into chunks of chunk_edges edges
// (chunks start and end inside rows, as in files).
std::unique_ptr<GraphSource> memory_source(const OrientedGraph& g, std::uint64_t chunk_edges);

// How vertices map to parts and to local ids.
struct Partition {
  Scheme scheme = Scheme::Range;  // never Auto
  std::uint32_t p = 1;
  std::uint64_t n = 0;
  std::vector<std::uint64_t> bounds;  // range, vertex, pair: p + 1 row boundaries; hash: empty

  std::uint32_t part_of(std::uint64_t x) const;
  std::uint64_t local_of(std::uint64_t x) const;                    // range, hash
  std::uint64_t global_of(std::uint32_t a, std::uint64_t l) const;  // range, hash, vertex rows
  std::uint64_t rows(std::uint32_t a) const;                        // vertices in part a
  // Range and pair: contiguous rank ranges (part_of by the bounds).
  bool ranged() const { return scheme == Scheme::Range || scheme == Scheme::Pair; }
  // The first column part b whose block G_ab may hold edges: range and pair blocks below the
  // diagonal are empty (the DAG points up), so range and pair give a, hash and vertex 0.
  std::uint32_t first_block(std::uint32_t a) const { return ranged() ? a : 0; }
  // Pair's suffix column parts: the code p + b names the columns in parts b..p-1.
  std::uint32_t suffix_block(std::uint32_t b) const { return p + b; }
  bool is_suffix(std::uint32_t c) const { return c >= p; }
  // Range and pair: the global id of column part c's local id 0, and the end of its columns.
  std::uint64_t col_lo(std::uint32_t c) const { return bounds[c >= p ? c - p : c]; }
  std::uint64_t col_hi(std::uint32_t c) const { return c >= p ? n : bounds[c + 1]; }
  // The pair scheme's units (p > 1) hold A = G_ij as a cut of B = R_i, made by the backend from
  // B's rows (SlotBlock::cut): A is never built on the host nor uploaded.
  bool cuts_a() const { return scheme == Scheme::Pair && p > 1; }
};

// Exact block statistics from one streamed pass over the columns (take_census).
struct CensusOptions {
  std::uint32_t fine = 1024;         // range: fine row buckets (balanced by edges); p groups them
  std::uint32_t hash_mod = 8;        // hash: p must divide it
  std::uint32_t vertex_groups = 16;  // vertex: p must divide it (<= 16: exact proxy blocks)
  unsigned threads = 0;
  std::uint64_t max_bytes = 0;  // host memory the census may use (fewer threads); 0 = any
  bool vertex = true;  // gather the vertex scheme's proxy statistics (a bitmap OR per edge and a
                       // second pass); off when the scheme is forced to range or hash
  // The device budget the plan will have (0 = unknown): the second, exact pass of the vertex
  // statistics is skipped when no vertex candidate (p >= 2) could fit it even with empty proxy
  // blocks — two units of at least the rows of V_i with their edges plus the offsets of X_i —
  // and the proxy blocks keep their upper bounds (which rule those candidates out as well).
  std::uint64_t device_budget = 0;
  // Count the undirected graph's wedges too (Census::wedges: in-degrees, 4 bytes per vertex, in
  // the first pass), for the census a file stores.
  bool wedges = false;
};
struct Census {
  std::vector<std::uint64_t> fine_bounds;  // F + 1 row boundaries
  std::vector<eid_t> fine_hist;            // F * F: edges from fine row bucket a to column bucket b
  std::uint32_t hash_mod = 0;
  std::vector<eid_t> hash_hist;              // H * H: edges with (u mod H, v mod H)
  std::vector<std::uint64_t> vertex_bounds;  // G + 1 row boundaries (balanced by wedges)
  struct VertexParts {
    std::uint32_t p = 0;
    std::vector<std::uint64_t> proxies;    // |X_i| per part
    std::vector<eid_t> proxy_edges_bound;  // sum of out-degrees over X_i per part (>= C edges)
    std::vector<eid_t> proxy_edges_upper;  // when exact: the upper bounds it replaced (else empty)
  };
  std::vector<VertexParts> vertex;  // one entry per p dividing G
  bool vertex_exact = false;        // the proxy block edges were counted (else upper bounds)
  double seconds = 0;
  std::uint64_t decompressed_bytes = 0;
  bool stored = false;      // read from the file's census extension (census_from_store), not taken
  bool has_wedges = false;  // wedges holds the undirected graph's wedges (CensusOptions::wedges)
  WedgeSum wedges;
  bool empty() const { return fine_bounds.empty(); }
  // (F + 1) x (F + 1) inclusive 2D prefix sums of fine_hist (computed on first use).
  const std::vector<eid_t>& fine_prefix() const;

 private:
  mutable std::vector<eid_t> fine_prefix_;
};
// Row boundaries balanced by weight: part a holds rows [b[a], b[a+1]); balance by edges
// (by_wedges = false) or by wedges d(d-1)/2 + d (true). Boundaries may repeat (empty parts).
std::vector<std::uint64_t> balanced_bounds(std::uint64_t n, const eid_t* offsets, std::uint32_t p,
                                           bool by_wedges);
Census take_census(const GraphSource& g, const CensusOptions& options);

// The census stored in a .tcsr file (its census extension, FORMAT.md; `tristream reindex`): the
// census the automatic plan (no forced --parts, unlimited budgets) asks for, with the vertex
// scheme's exact proxy edges and their upper bounds, so that any device budget and any scheme
// without forced parts plans from it exactly as from take_census.
CensusOptions stored_census_options(std::uint64_t n);
// Takes the stored census of g (stored_census_options, on `threads` threads) and encodes it.
std::vector<unsigned char> encode_stored_census(const GraphSource& g, unsigned threads);
// The census for `wanted` from a stored census's bytes: false (out untouched) when it was taken
// with other boundaries than `wanted` asks for (forced --parts, a host budget too small for 16
// vertex groups). Throws Error(Input) naming g and "section census" when the bytes are damaged or
// do not belong to g's graph.
bool census_from_store(const std::vector<unsigned char>& bytes, const GraphSource& g,
                       const CensusOptions& wanted, Census* out);
// The census plan_graph uses: the stored one when g has one that fits `wanted`, else take_census.
Census obtain_census(const GraphSource& g, const CensusOptions& wanted);
// The undirected graph's wedges from g's stored census, when it holds them (payload version 2,
// written by `convert`, `generate` and `reindex`): true and *out set; false when g has no stored
// census or one without them. Throws Error(Input) as census_from_store does when the census's
// head is damaged or belongs to another graph.
bool stored_wedges(const GraphSource& g, WedgeSum* out);

// The balance of uploads against kernels the planner assumes when it chooses the units in flight
// and the tail cover (plan.cpp: estimated_exposed_upload): seconds per byte uploaded and per unit
// of estimated work (wedges), plus a fixed cost per unit. The defaults were measured on the
// reference GPU (an H100 on PCIe 5, Kronecker 25 at a quarter of its footprint); only their
// ratios matter.
struct PlanRates {
  double upload_bytes_per_s = 40e9;
  double kernel_work_per_s = 9e11;
  double kernel_s_per_unit = 4e-4;
};

struct PlanOptions {
  Scheme scheme = Scheme::Auto;
  // 0: the planner chooses. A forced p above the graph's rows n is capped at n (more parts would
  // only be empty); the plan's reason then says so.
  std::uint32_t parts = 0;
  std::uint64_t device_budget = 0;  // bytes the two slots may use on the device; 0 = unlimited
  std::uint64_t host_budget = 0;    // bytes the process may use; 0 = unlimited
  bool device_is_host = false;      // CPU backend: the slots live in host memory only (so streamed
                                    // staging, which saves host memory only when a separate device
                                    // holds the slot, is never planned)
  // The part of the host budget census_needed sets aside for decompressed chunks when it
  // guesses, from n and m alone, whether the in-core plan fits (the plan itself counts its
  // window from the chunk index). The default, 64 MiB, is a window of 2 x threads chunks at the
  // converter's default chunk size on a few cores. Too low a guess costs a second planning (with
  // the census, when the in-core plan turns out not to fit); too high, a census pass the
  // in-core plan might not have needed.
  std::uint64_t window_budget = 64ull << 20;
  bool per_vertex = false;
  unsigned threads = 0;
  PlanRates rates;
};

// The census a plan with these options needs (fine/hash_mod/vertex_groups chosen from the forced
// scheme and parts), or none (returns false) when the graph fits in-core.
bool census_needed(std::uint64_t n, eid_t m, const PlanOptions& options, CensusOptions* out);
// The census options for a plan with these options, whether or not it needs one.
CensusOptions census_options(std::uint64_t n, const PlanOptions& options);

struct BlockInfo {
  // range/hash: G_ab; vertex: (i, 0) = A, (i, 1) = C; pair: G_ab, or with col_part = p + b the
  // suffix block G_{a,>=b} (the columns in parts b..p-1, ids column - bounds[b]; suffix_block;
  // the planner uses b = 0: row part a whole, global ids)
  std::uint32_t row_part = 0, col_part = 0;
  std::uint64_t rows = 0;
  eid_t edges = 0;  // exact (range, hash, vertex A) or an upper bound (vertex C)
  std::uint64_t col_space = 0;
  std::uint64_t bytes = 0;  // on the device: aligned offsets + columns
  // Uploaded and held in the host block cache: range and hash blocks with offsets packed when
  // that is smaller (packed_block_bytes, an upper bound), other blocks as `bytes`.
  std::uint64_t upload_bytes = 0;
};

struct WorkUnit {
  std::uint32_t i = 0, j = 0, k = 0;  // task (vertex: i = j = k = partition; pair: k = j)
  BlockInfo a, b, c;                  // the views A, B, C (duplicates share storage)
  bool b_is_a = false, c_is_a = false, c_is_b = false;
  std::uint64_t device_bytes = 0;  // slot bytes (blocks) + per-vertex arrays
  std::uint64_t slot_bytes = 0;    // blocks only
  // bytes uploaded: the blocks not already on the device (the device block cache, or without it
  // the slot's cached A block)
  std::uint64_t upload_bytes = 0;
  std::uint64_t decompress_bytes = 0;  // estimated raw bytes decompressed to build it
  bool reuse_a = false;                // A is already in the slot (the previous unit of that slot)
  double work = 0;                     // estimated work (wedges)
  // A slice (the tail cover's pieces of a heavy unit): the unit counts only the triangles whose
  // middle vertex v (a row of C) lies in slice `slice` of `slices` of C's rows, cut by the
  // pipeline into ranges of about equal estimated work (slice_bounds, pipeline.hpp); the slices
  // of a task count it once between them. slices == 1: the whole task.
  std::uint32_t slice = 0, slices = 1;
  // The device block cache's replay (finish_units): the last unit collected before this unit's
  // upload is issued (its lane's previous unit, or older units collected early to make room for
  // its blocks), so its upload starts after that unit's kernel; -1 when none waits.
  std::int64_t upload_after = -1;
};

struct Plan {
  Partition partition;
  std::vector<WorkUnit> units;  // execution order; unit u runs in slot u % 2
  int slots = 2;                // staging slots (1 when there is a single unit)
  // Units in flight at once (uploaded or counting, not yet collected): the slots, or with the
  // device block cache kDeviceCacheInFlight, so uploads run ahead of the kernels through the
  // cache (unit u then goes in lane u % in_flight; the oldest unit is collected early when the
  // cache lacks room for the next one's blocks; the planner's replay does the same, exactly so
  // when units are uploaded from the host block cache: a unit built in one of the two host
  // slots also waits for that slot's previous unit).
  int in_flight = 2;
  // Range units inside a task (the units of one i) run by k, then j (column order): each new
  // block G_ik of row part i is followed by the units (i, j, k), j > i, that reuse it and upload
  // little, so their kernels hide the next block's upload. Otherwise by j, then k (row order),
  // where the units (i, i, k) upload all of row part i back to back. The planner keeps the one
  // whose estimated copy/compute line ends first (with the device block cache only).
  bool column_order = false;
  // Units of much work and few bytes the planner moved from the head of the order into its
  // upload-bound tail (range orders end with the low row parts: many bytes, little work) so that
  // their kernels hide the tail's uploads; 0 when that would not leave fewer upload seconds
  // exposed by its estimate.
  std::size_t tail_cover_units = 0;
  // The units those became: each is cut into slices (WorkUnit::slices) of a millisecond or more
  // of kernel each, spread through the tail (its blocks stay on the device between them), so
  // that the uploads of the tail's units run beside kernels that upload nothing.
  std::size_t tail_cover_slices = 0;
  PlanRates rates;                    // the balance the in-flight choice and the tail cover assumed
  std::uint64_t slot_bytes = 0;       // max blocks bytes of a unit (staging slot size)
  std::uint64_t per_vertex_rows = 0;  // max rows of the per-vertex arrays of one unit
  std::uint64_t device_bytes = 0;     // two slots + per-vertex arrays
  std::uint64_t host_bytes = 0;       // estimated peak host bytes
  // Host staging: full slots (piece_bytes == 0) or streamed (p = 1 only: staging_buffers
  // buffers of piece_bytes).
  std::uint64_t piece_bytes = 0;
  std::uint32_t staging_buffers = 0;
  bool streamed_staging() const { return piece_bytes > 0; }
  // Host bytes of the staging: the ring of pieces, or the full slots.
  std::uint64_t host_staging_bytes() const {
    return streamed_staging() ? std::uint64_t{staging_buffers} * piece_bytes
                              : static_cast<std::uint64_t>(slots) * slot_bytes;
  }
  std::uint64_t bytes_moved = 0;  // estimated bytes uploaded
  // The device block cache (device_cache.hpp): range and hash plans with p > 1 keep their blocks
  // on the device between units, in a pool of the two slots' bytes; bytes_moved and the units'
  // upload_bytes count only the blocks it does not hold. 0 = no cache (p = 1, vertex).
  std::uint64_t device_cache_bytes = 0;
  // The device bytes the cache may take (the device budget less the per-vertex arrays, at most
  // kDeviceCacheMaxSlots slots; 0 = the slots' bytes only): a pool larger than two slots keeps
  // more blocks between units (pair's grouped order keeps a group's row parts there while the
  // other row parts stream past).
  std::uint64_t device_cache_room = 0;
  // Pair: the row parts whose units run together (pair_group consecutive parts i; for each j,
  // their units (i, j)), so that their R_i stay in the device cache while each R_j is uploaded
  // once per group; 1 = by i, then j.
  std::uint32_t pair_group = 1;
  std::uint64_t bytes_decompressed = 0;  // estimated raw bytes decompressed
  std::uint64_t device_budget = 0, host_budget = 0;
  std::uint32_t window_chunks = 2;       // decompressed chunks held at once
  std::uint64_t chunk_cache_bytes = 0;   // decompressed chunks kept for later units (host budget)
  std::uint64_t block_cache_bytes = 0;   // built blocks kept for later units (range, hash)
  std::uint64_t row_part_max_bytes = 0;  // range, hash: all blocks of the largest row part
  std::uint64_t row_parts_bytes = 0;     // range, hash: all blocks of every row part
  std::vector<std::uint64_t> row_part_bytes;  // range, hash: all blocks of each row part
  std::uint64_t row_part_chunk_bytes = 0;     // raw bytes of the chunks one row part's walk reads
  double total_work = 0;
  double imbalance = 1;  // max unit work / mean
  std::string reason;

  std::string to_json() const;
  std::string summary() const;  // several lines for humans
};

// Streamed staging: the planner's ring of host staging buffers (two: building piece k + 1
// overlaps the upload of piece k; one of twice the size when two would leave pieces of fewer
// chunks than threads) and its smallest and largest piece.
constexpr std::uint32_t kStagingBuffers = 2;
constexpr std::uint64_t kMinStagingPiece = 64ull << 10;
constexpr std::uint64_t kMaxStagingPiece = 128ull << 20;

// Units in flight with the device block cache (at most 31: the cache's owners), except for
// per-vertex counts, whose pinned host arrays are per unit in flight.
constexpr int kDeviceCacheInFlight = 16;
// The most bytes the device block cache takes, in slots: the room it is given (a device budget far
// above the plan's slots, e.g. with --parts) is not all mapped for it, leaving the rest of the
// device to the kernels' scratch and to other processes.
constexpr std::uint64_t kDeviceCacheMaxSlots = 16;

// The bytes a unit needs on the device for a block of `rows` rows and `edges` columns.
std::uint64_t block_bytes(std::uint64_t rows, eid_t edges);
// A range or hash block as it is uploaded and cached on the host: its columns and its offsets,
// packed (packed_rows.hpp) when that is smaller; an upper bound, since at most min(rows, edges)
// rows have columns.
std::uint64_t packed_block_bytes(std::uint64_t rows, eid_t edges);
// Bytes of the graph loaded whole (p = 1): offsets + columns, aligned.
std::uint64_t in_core_bytes(std::uint64_t n, eid_t m, bool per_vertex);

// The device block cache's key of a block of the plan (nonzero), or 0 when the plan does not
// cache blocks on the device (device_cache_bytes == 0).
std::uint64_t device_cache_key(const Plan& plan, const BlockInfo& b);
// For every unit u and role r (0 = A, 1 = B, 2 = C): entry 3u + r is the index of the next unit
// after u that uses the same block (in any role), or kNeverUsed (device_cache.hpp).
std::vector<std::uint64_t> device_cache_next_uses(const Plan& plan);

// The planner. census may be empty when census_needed() said false. Its time is linear in the
// candidates' units plus, for range and hash, the pairs of nonempty blocks of each row part (the
// tasks are never enumerated as all p^3 triples). Throws Error(Usage) when
// nothing fits (naming the largest row and the sizes).
Plan make_plan(std::uint64_t n, eid_t m, const eid_t* offsets,
               const std::vector<tcsr::ChunkInfo>& chunks, const Census& census,
               const PlanOptions& options);
// census_needed + take_census + make_plan.
Plan plan_graph(const GraphSource& g, const PlanOptions& options, Census* census_out = nullptr);

}  // namespace tristream
