// dialects.hpp — converter internals: the dialects of an edge list (names, detection by extension
// and content) and the header of each text dialect (Matrix Market banner and size line, METIS
// `n m [fmt [ncon]]`, DIMACS problem line, a column-name line), read into the TextSpec that the
// block parser follows.
#pragma once

#include <cstdint>
#include <string>

#include "parse.hpp"

namespace tristream::conv {

enum class Dialect { Auto, Plain, Tsv, Csv, Mtx, Metis, Dimacs, Adjlist, Bin32, Bin64 };

const char* dialect_name(Dialect d);
// "auto|plain|snap|tsv|csv|mtx|metis|dimacs|adjlist|bin32|bin64" -> Dialect; throws Error(Usage).
Dialect parse_dialect(const std::string& name);
// The dialect suggested by the file name (compression suffix stripped), Auto if none.
Dialect dialect_from_extension(const std::string& path);
// "," ";" "|" "tab" "\t" ... -> the delimiter byte; "" -> 0 (the dialect's default).
// Throws Error(Usage) for anything but one printable byte (or tab, space).
char parse_delimiter(const std::string& text);

// Line caps (bytes, line end excluded): edge-per-line dialects and headers; adjacency dialects
// (one line per vertex) get clamp(memory_limit / 256, 1 MiB, 64 MiB).
constexpr std::size_t kEdgeLineCap = std::size_t{1} << 20;
std::size_t adjacency_line_cap(std::uint64_t memory_limit);

// The header lines of a text input, one at a time (line ends stripped; LF, CRLF or a lone CR).
class HeaderLines {
 public:
  virtual ~HeaderLines() = default;
  // The next line without consuming it; false at the end of the input.
  virtual bool peek(std::string& line) = 0;
  // Consumes the line peek() returned.
  virtual void consume() = 0;
  // Lines consumed so far.
  virtual std::uint64_t consumed() const = 0;
};

// What the header says about the body.
struct TextLayout {
  TextSpec spec;
  // Records (Matrix Market entries, DIMACS arcs or edges, METIS adjacency entries) the header
  // declares; the body must hold exactly this many.
  bool declared = false;
  std::uint64_t declared_records = 0;
  std::uint64_t declared_line = 0;   // the line that declares them
  std::string declared_noun;         // "entries", "arcs", ...
  std::string declared_where;        // "the size line", ...
  std::uint64_t metis_vertices = 0;  // METIS: the header's n (one body line per vertex)
};

// Settings of the caller that shape the header.
struct HeaderOptions {
  bool header = false;          // the first non-comment line names the columns (skip it)
  char delimiter = 0;           // CSV delimiter (0: ',')
  bool from_extension = false;  // the dialect came from the file name (for hints)
  bool names = false;           // --names: a first line of words is data, not column names
};

// Reads the header of a text input whose dialect is `d` (Auto: decided here from the first
// lines — a DIMACS `c`/`p` line, a comma — else plain; `d` is updated). Throws input_error, or
// Error(Usage) for options the dialect does not take (--header, --names).
TextLayout read_header(Dialect& d, const HeaderOptions& options, HeaderLines& in,
                       const std::string& name);

}  // namespace tristream::conv
