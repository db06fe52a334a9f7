// tristream/format.hpp — the .tcsr file: a versioned, checksummed, compressed oriented CSR.
// The byte layout is specified in formats/FORMAT.md; this header is the API.
//
// Writing: tcsr::Writer streams rows in order (0..n-1), cuts the adjacency into chunks of about
// WriteOptions::chunk_bytes raw, compresses each chunk as an independent zstd frame (with its
// content checksum) on a thread pool, writes a temporary file beside the target, fsyncs it and
// renames it into place. Nothing is left behind if finish() is not reached.
//
// Reading: tcsr::Reader reads the file with pread, checks magic, version, the section table, the
// counts the header implies and the checksums of the small sections (header, chunk index, row
// offsets), and decompresses any one chunk into a caller's buffer. Every kind of damage is an
// Error(ErrorKind::Input) whose message names the file and the section; a file that shrinks or is
// rewritten while it is read is "FILE: changed while being read".
#pragma once

#include <cstdint>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tristream/csr.hpp"
#include "tristream/types.hpp"

namespace tristream::tcsr {

inline constexpr std::uint32_t kFormatVersion = 1;
// A file with vertex names (the names section) is version 2; version 1 readers refuse it by its
// version. Files without names stay version 1.
inline constexpr std::uint32_t kFormatVersionNames = 2;
// A file with the census extension (a version 1 or 2 layout plus the planner's block census,
// appended by attach_census) is version 3; older readers refuse it by its version.
inline constexpr std::uint32_t kFormatVersionCensus = 3;
// The first 8 bytes of every .tcsr file.
inline constexpr char kMagic[8] = {'\x89', 'T', 'C', 'S', 'R', '\r', '\n', '\x1a'};

// True when the file at `path` starts with kMagic (used to tell .tcsr files from edge lists).
// False for unreadable or short files, and for anything but a regular file (a pipe's bytes would
// be lost to the probe, and a .tcsr file is read by seeks).
bool has_tcsr_magic(const std::string& path);

enum Flag : std::uint32_t {
  kFlagDelta = 1u << 0,    // ids within a row are delta-coded before zstd
  kFlagWideIds = 1u << 1,  // adjacency ids are 8 bytes (n >= 2^32); not supported by readers yet
  kFlagPlanes = 1u << 2,   // a chunk's ids (after delta) go to zstd as byte planes (FORMAT.md)
};

struct Header {
  std::uint32_t version = kFormatVersion;
  std::uint32_t flags = 0;
  std::uint64_t n = 0;               // vertices
  std::uint64_t m = 0;               // directed oriented edges == undirected simple edges
  std::uint64_t max_out_degree = 0;  // in G+
  std::uint64_t max_degree = 0;      // in the undirected graph
  std::uint64_t chunk_edges = 0;     // target edges per chunk (the last may be shorter)
  std::uint64_t num_chunks = 0;
};

// One compressed chunk: edges [first_edge, first_edge + edges) of the adjacency array. A chunk
// may start or end inside a row; first_row is the row holding first_edge, rows the number of
// rows it touches.
struct ChunkInfo {
  std::uint64_t first_row = 0;
  std::uint64_t first_edge = 0;
  std::uint64_t rows = 0;
  std::uint64_t edges = 0;
  std::uint64_t file_offset = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t raw_size = 0;
};

// The longest vertex name (bytes) a file may hold.
inline constexpr std::uint64_t kMaxNameBytes = std::uint64_t{1} << 20;

// Vertex names indexed by original id: name k is bytes[offsets[k], offsets[k + 1]).
struct Names {
  std::vector<std::uint64_t> offsets{0};
  std::string bytes;
  std::uint64_t size() const { return offsets.size() - 1; }
  std::string_view operator[](std::uint64_t k) const {
    return std::string_view(bytes).substr(offsets[k], offsets[k + 1] - offsets[k]);
  }
  void add(std::string_view name) {
    bytes.append(name.data(), name.size());
    offsets.push_back(bytes.size());
  }
};

struct WriteOptions {
  std::uint64_t chunk_bytes = 8ull << 20;  // raw bytes per chunk (about)
  int zstd_level = 1;
  bool delta = true;
  bool planes = true;    // byte planes (kFlagPlanes): faster zstd and smaller frames
  unsigned threads = 0;  // 0 = hardware concurrency
  // Bytes the writer may hold for chunks in flight (raw rows, compressed frames, compression
  // contexts); 0 = a batch of 64 MiB or two chunks per thread, whichever is more. At least
  // writer_floor_bytes(chunk_bytes, zstd_level); the chunks are independent frames, so the batch
  // size never changes the file's bytes.
  std::uint64_t memory_bytes = 0;
};

// The least WriteOptions::memory_bytes a writer with chunks of chunk_bytes can work in: one raw
// chunk, its compressed frame and one compression context at zstd_level.
std::uint64_t writer_floor_bytes(std::uint64_t chunk_bytes, int zstd_level);

class Writer {
 public:
  // Starts writing a graph with n vertices to `path` (through a temporary file beside it).
  Writer(const std::string& path, std::uint64_t n, const WriteOptions& options = {});
  ~Writer();  // removes the temporary file unless finish() succeeded; never throws
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends the next row (rows come in order 0..n-1): its out-neighbours, sorted ascending,
  // each > the row id and < n. Violations throw Error(Internal).
  void append_row(const vid_t* cols, std::uint64_t count);
  // Appends the next `rows` rows at once, checked on all threads: row k's ids are
  // cols[offsets[k] - offsets[0], offsets[k + 1] - offsets[0]) (offsets has rows + 1 entries),
  // under append_row's rules; the file is the same as from append_row row by row.
  void append_rows(const vid_t* cols, const eid_t* offsets, std::uint64_t rows);
  // Sets the permutation (new id -> original id); n entries. Optional: identity if never set.
  void set_permutation(std::vector<orig_id_t> perm);
  // Sets the vertex names (the file becomes version 2): names[k] is the name of the vertex whose
  // original id is k. Preconditions: n names, each 1..2^20 bytes; the permutation (set or the
  // identity) holds exactly the original ids 0..n-1. Violations throw Error(Internal).
  void set_names(Names names);
  // Undirected maximum degree for the header. Called before the first row, the writer trusts it
  // and does not count in-degrees (4 bytes per vertex and a random increment per edge saved;
  // Reader::check() still verifies it); called later, finish() checks it against the rows.
  // Without it the writer computes the maximum itself.
  void set_max_degree(std::uint64_t d);
  // Sets the census extension's payload (the file becomes version 3): the file is then the same,
  // byte for byte, as this writer's file without it after attach_census(path, payload).
  // Precondition: 1..2^28 bytes.
  void set_census(std::vector<unsigned char> payload);
  // After the last row: flushes the last chunk and writes the sections that precede the census
  // (row offsets, chunk index, permutation, names), their writeback started, so that a census
  // taken meanwhile leaves finish() little to wait for. Optional (finish() does it otherwise);
  // rows, the permutation and the names given after it throw Error(Internal).
  void write_sections();
  // Flushes the last chunk, writes the remaining sections and the header, fsyncs, renames.
  void finish();
  // The adjacency's bytes in the file: its compressed frames written so far.
  std::uint64_t adjacency_bytes() const;
  // Seconds its threads spent so far, summed over them: compressing chunks (delta coding,
  // compression, checksums), writing frames to the file, and waiting for a frame's buffer.
  struct Busy {
    double compress_s = 0, write_s = 0, wait_s = 0;
  };
  Busy busy() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Adds (or replaces) the census extension of the valid .tcsr file at `path`: the file is copied
// to a temporary beside it with `payload` appended and a version-3 header, fsynced and renamed
// over `path` (readers see the old file or the new one). Throws Error(Input) for a file that is
// not valid, Error(Internal) on I/O failures (the temporary is removed). Precondition: payload
// is not empty.
void attach_census(const std::string& path, const std::vector<unsigned char>& payload);

// Convenience: writes a whole in-memory oriented graph.
void write_file(const std::string& path, const OrientedGraph& g, const WriteOptions& options = {});

// How a Reader opens a file.
struct OpenOptions {
  // The row offsets' checksum (one thread over 8 bytes a vertex: about 0.2 s at 2^28 vertices)
  // is computed on a thread of its own instead of before the constructor returns, and
  // Reader::verify_offsets() waits for it. The offsets' rules (from 0, never decreasing, each
  // row within the vertices above it, offsets[n] = m, the header's largest out-degree) are
  // checked at open either way, so a damaged section cannot lead a reader out of bounds; what it
  // holds is confirmed by verify_offsets(), which the caller calls before it trusts a result.
  bool offsets_checksum_later = false;
};

class Reader {
 public:
  explicit Reader(const std::string& path, const OpenOptions& options = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const;
  const Header& header() const;
  std::uint64_t n() const { return header().n; }
  eid_t m() const { return header().m; }
  std::uint64_t file_size() const;

  // Row offsets, n + 1 entries (checksum verified at open, or by verify_offsets()).
  const eid_t* offsets() const;
  // Waits for the row offsets' checksum of OpenOptions::offsets_checksum_later and throws
  // Error(Input) on a mismatch, as the open does without it (then this returns at once). Any
  // number of times, from one thread at a time.
  void verify_offsets() const;
  const std::vector<ChunkInfo>& chunks() const;
  // Index of the chunk holding edge e (e < m).
  std::uint64_t chunk_of_edge(eid_t e) const;
  // Asks the operating system to read the adjacency into its page cache in the background (a
  // hint: returns at once, so that a cold file is read while other work runs).
  void prefetch() const;
  // Decompresses chunk k into out[0 .. chunks()[k].edges): the column ids of its edges, decoded.
  // Damage (bad frame, checksum, size mismatch, decoded id out of range or unsorted) throws
  // Error(Input) naming the file, the section and the chunk. The frame is read and decompressed
  // kFramePieceBytes at a time: a thread holds that much of it, not the whole frame, and
  // kPlaneScratchBytes more to turn byte planes back into ids (kFlagPlanes).
  void read_chunk(std::uint64_t k, vid_t* out) const;
  static constexpr std::uint64_t kFramePieceBytes = std::uint64_t{256} << 10;
  static constexpr std::uint64_t kPlaneScratchBytes = std::uint64_t{1} << 20;
  // Reads the columns of edges [first, last) into out (decompressing the chunks involved).
  void read_edges(eid_t first, eid_t last, vid_t* out) const;
  // The permutation section (new id -> original id); checksum verified on each call.
  std::vector<orig_id_t> permutation() const;
  // Whether the file holds vertex names (version 2), read and validated at open.
  bool has_names() const;
  // The name of the vertex whose original id is `original`. Precondition: has_names() and
  // original < n() (otherwise Error(Internal)).
  std::string_view name(orig_id_t original) const;
  // Whether the file carries the census extension (version 3). census(): its payload (the
  // planner's: src/plan/census_store.cpp), or its first `limit` bytes, read on each call (the
  // payload is megabytes; it is kept nowhere): the frame's checksum and zstd's checks verified;
  // damage is Error(Input) naming the section "census". Empty without one.
  bool has_census() const;
  std::vector<unsigned char> census(std::size_t limit = SIZE_MAX) const;
  // Loads the whole graph (chunks decompressed in parallel). with_perm also loads perm.
  OrientedGraph load(bool with_perm = false, unsigned threads = 0) const;
  // Verifies everything: all checksums, every chunk, rows sorted, ids in range, orientation
  // (row < col), offsets consistent with the index, header maxima. Throws on the first problem.
  void check(unsigned threads = 0) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tristream::tcsr
