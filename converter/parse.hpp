// parse.hpp — converter internals: parsing one block of an edge list into canonical records.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "tristream/format.hpp"
#include "util.hpp"

namespace tristream::conv {

// How the lines of a text block are read.
enum class LineKind : std::uint8_t {
  Edge,     // one edge per line: [prefix] u v [values]
  Metis,    // one line per vertex: [vertex values] neighbour [edge weight] ...
  Adjlist,  // u v1 v2 ...: edges u-v1, u-v2, ...
};

// What a text block parser checks besides the ids themselves.
struct TextSpec {
  LineKind kind = LineKind::Edge;
  char delimiter = 0;           // field delimiter; 0: runs of spaces and tabs
  const char* comments = "#%";  // a line whose first non-blank byte is one of these
  char prefix = 0;              // DIMACS: every edge line starts with this letter
  std::uint8_t min_values = 0;  // value columns after the two ids (weights, timestamps)
  std::uint8_t max_values = 2;
  bool numeric_values = false;  // value columns must be numbers (else any token)
  bool attribute_dict = false;  // a value column starting with '{' runs to the line end
  std::string shape;            // "a plain edge list line has ..." (for column errors)
  std::size_t max_line = std::size_t{1} << 20;  // bytes per line, line end excluded
  bool mtx = false;                             // range errors name Matrix Market rows and columns
  bool ranged = false;                          // ids checked against 1..rows (u) and 1..cols (v)
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint64_t entry_limit = UINT64_MAX;  // more records than this in the block is an error
  // METIS: the vertex of the block's first non-comment line (1-based), the numbers before the
  // neighbours (vertex size and weights) and whether an edge weight follows each neighbour.
  std::uint64_t first_vertex = 1;
  std::uint8_t vertex_values = 0;
  bool edge_weights = false;
  // --names: the id columns hold names (any token; in CSV any field, quoted or not), numbered in
  // the block's Block::names in order of first appearance in an edge that is not a self-loop.
  bool names = false;
};

// One parsed block: its edges canonical (a < b; self-loops counted, not stored). While every id
// is below 2^32 they are packed as keys a << 32 | b (8 bytes an edge); a larger id makes the
// block wide: records (16 bytes an edge). EdgeWriter fills a block, widen() converts one.
struct Block {
  BigBuffer<std::uint64_t> keys;  // the edges while !wide
  BigBuffer<Edge64> edges;        // the edges once wide
  bool wide = false;
  std::size_t size() const { return wide ? edges.size() : keys.size(); }
  std::uint64_t edge_bytes() const { return wide ? edges.size() * 16 : keys.size() * 8; }
  std::uint64_t records = 0;  // edge records (entries) read, self-loops included
  std::uint64_t loops = 0;
  std::uint64_t lines = 0;  // newline characters in the block
  std::uint64_t max_id = 0;
  std::uint64_t bytes = 0;  // input bytes of the block
  // The first error in the block, at local line error_line (1-based; 0 for binary blocks).
  bool error = false;
  std::uint64_t error_line = 0;
  std::string error_msg;
  // Sorted unique endpoints of the edges (filled when the block is sorted for spilling).
  BigBuffer<std::uint64_t> ids;
  bool sorted = false;
  // The keys went to the converter's EdgeSorter on the worker's thread (and left the block), or
  // wait for it to be ready (device_later).
  std::uint64_t device_keys = 0;
  bool on_device = false, device_later = false;
  std::exception_ptr failure;  // a job that threw (not an input error)
  std::shared_ptr<void> text;  // the raw input, kept until the driver has checked the block
  // --names: the names of the block's local ids 0..k-1 (the edges hold local ids until the
  // driver maps them to ids of the whole input).
  tcsr::Names names;
};

// A thread's spare key buffer, so that a parse worker whose blocks' keys leave them (to the
// device) does not map and zero fresh pages for every block. take_spare_keys makes `keys` an empty
// buffer of at least `capacity` keys: the thread's spare when it fits (at most twice the
// capacity), else a new mapping. give_back_keys keeps `keys` as the spare when it is the larger
// buffer and leaves `keys` empty.
void take_spare_keys(BigBuffer<std::uint64_t>& keys, std::size_t capacity);
void give_back_keys(BigBuffer<std::uint64_t>& keys) noexcept;

// Fills a block's edges: packed keys while both ids are below 2^32, then records. At most
// `capacity` edges; finish() sets the block's edge count.
class EdgeWriter {
 public:
  EdgeWriter(Block& b, std::size_t capacity) : b_(b), cap_(capacity) {
    b.wide = false;
    take_spare_keys(b.keys, capacity);
    kdst_ = b.keys.data();
  }
  // Precondition: a < b, fewer than `capacity` edges so far.
  void add(std::uint64_t a, std::uint64_t b) {
    if (kdst_ && (b >> 32) == 0) {
      *kdst_++ = (a << 32) | b;
      return;
    }
    add_wide(a, b);
  }
  void finish();
  // The next key's place while the edges are packed keys (null once wide), and the end of the
  // keys written there directly (a caller's fast path for ids below 2^32).
  std::uint64_t* key_cursor() const { return kdst_; }
  void set_key_cursor(std::uint64_t* end) { kdst_ = end; }

 private:
  void add_wide(std::uint64_t a, std::uint64_t b);
  Block& b_;
  std::size_t cap_;
  std::uint64_t* kdst_ = nullptr;  // null once wide
  Edge64* edst_ = nullptr;
};

// Converts a block's packed keys into records (no-op for a wide block).
void widen(Block& b);

// Calls fn(a, b) for every edge of the block, in order.
template <typename Fn>
void for_each_edge(const Block& blk, Fn&& fn) {
  if (blk.wide) {
    for (const Edge64& e : blk.edges) fn(e.a, e.b);
  } else {
    for (const std::uint64_t k : blk.keys) fn(k >> 32, k & 0xffffffffu);
  }
}

// Parses text [p, p + len): whole lines, each ended by LF, CRLF or a lone CR (the last one may
// lack its line end).
void parse_text(const char* p, std::size_t len, const TextSpec& spec, Block& out);
// METIS: the vertex lines (every line but comments, blank ones included) of [p, p + len), cut as
// parse_text cuts it.
std::uint64_t count_vertex_lines(const char* p, std::size_t len, const TextSpec& spec);
// The token for an error message: at most 40 bytes, control bytes escaped (\f, \x01).
std::string printable_token(const char* p, std::size_t len);
// Converts little-endian uint32 (wide = false) or uint64 pairs; len is a multiple of the pair size.
void parse_binary(const char* p, std::size_t len, bool wide, Block& out);
// Sorts the block's edges, removes repeats and fills ids (for the out-of-core path).
void sort_block(Block& b);

}  // namespace tristream::conv
