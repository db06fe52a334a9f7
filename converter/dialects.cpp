// dialects.cpp — dialect names and detection, and the header reader of every text dialect: what
// the header declares becomes the TextSpec of the body (columns, id ranges, record counts).
#include "dialects.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "tristream/error.hpp"
#include "util.hpp"

namespace tristream::conv {

namespace {

bool starts_with_ci(const std::string& s, const char* prefix) {
  const std::size_t n = std::strlen(prefix);
  if (s.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An unsigned decimal of at most 19 digits.
bool small_uint(const std::string& t, std::uint64_t& out) {
  if (t.empty() || t.size() > 19 || t.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoull(t);
  return true;
}

std::string excerpt(const std::string& line) {
  return printable_token(line.data(), std::min<std::size_t>(line.size(), 40));
}

// The first non-blank byte of a line, or '\0'.
char first_byte(const std::string& line) {
  const auto i = line.find_first_not_of(" \t");
  return i == std::string::npos ? '\0' : line[i];
}

// Consumes blank lines and lines starting with one of `comments`; false at the end of input.
bool skip_comments(HeaderLines& in, const char* comments, std::string& line) {
  while (in.peek(line)) {
    const char c = first_byte(line);
    if (c != '\0' && !std::strchr(comments, c)) return true;
    in.consume();
  }
  return false;
}

// A column-name line: the first column is not a number (or --header says so).
bool is_column_names(const std::string& line, char delimiter) {
  const auto i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  std::size_t j = i;
  while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != delimiter) ++j;
  std::size_t k = i + (line[i] == '"' && delimiter);  // a quoted CSV field
  k += k < j && (line[k] == '+' || line[k] == '-');
  if (k < j && line[k] == '.') ++k;
  return !(k < j && std::isdigit(static_cast<unsigned char>(line[k])));
}

void read_mtx(TextLayout& out, HeaderLines& in, const std::string& name) {
  std::string line;
  if (!in.peek(line) || !starts_with_ci(line, "%%MatrixMarket"))
    throw input_error(name, 1, "missing the '%%MatrixMarket matrix coordinate ...' banner");
  in.consume();
  const auto w = split_words(line);
  if (w.size() < 5 || lower(w[1]) != "matrix")
    throw input_error(name, 1,
                      "bad Matrix Market banner (expected '%%MatrixMarket matrix "
                      "coordinate FIELD SYMMETRY')");
  if (lower(w[2]) != "coordinate")
    throw input_error(name, 1,
                      "only Matrix Market 'coordinate' files hold graphs, not '" + w[2] + "'");
  const std::string field = lower(w[3]), sym = lower(w[4]);
  const int values = field == "pattern" ? 0 : field == "complex" ? 2 : 1;
  if (field != "pattern" && field != "integer" && field != "real" && field != "complex")
    throw input_error(
        name, 1,
        "unknown Matrix Market field '" + w[3] + "' (expected pattern, integer, real or complex)");
  if (sym != "general" && sym != "symmetric" && sym != "skew-symmetric" && sym != "hermitian")
    throw input_error(name, 1,
                      "unknown Matrix Market symmetry '" + w[4] +
                          "' (expected general, symmetric, skew-symmetric or hermitian)");
  if (!skip_comments(in, "%", line))
    throw input_error(name, in.consumed() + 1, "missing the size line 'rows columns entries'");
  in.consume();
  const std::uint64_t size_line = in.consumed();
  const auto v = split_words(line);
  std::uint64_t num[3] = {0, 0, 0};
  bool ok = v.size() == 3;
  for (std::size_t i = 0; ok && i < 3; ++i) ok = small_uint(v[i], num[i]);
  if (!ok)
    throw input_error(name, size_line,
                      "bad size line '" + excerpt(line) + "' (expected 'rows columns entries')");
  if (num[0] != num[1])
    throw input_error(name, size_line,
                      "a " + std::to_string(num[0]) + " x " + std::to_string(num[1]) +
                          " matrix is not square; a graph's adjacency matrix is (rows = columns)");
  TextSpec& s = out.spec;
  s.comments = "%";
  s.mtx = s.ranged = true;
  s.rows = num[0];
  s.cols = num[1];
  s.min_values = s.max_values = static_cast<std::uint8_t>(values);
  s.numeric_values = true;
  s.shape = "a '" + field + "' Matrix Market entry has " + std::to_string(2 + values) +
            (values == 0   ? " (row column)"
             : values == 1 ? " (row column value)"
                           : " (row column real imaginary)");
  out.declared = true;
  out.declared_records = num[2];
  out.declared_line = size_line;
  out.declared_noun = "entries";
  out.declared_where = "the size line";
}

void read_metis(TextLayout& out, const HeaderOptions& o, HeaderLines& in, const std::string& name) {
  const std::string hint =
      o.from_extension ? " (METIS, from the .graph extension; give --format for another dialect)"
                       : " (METIS)";
  std::string line;
  if (!skip_comments(in, "%", line))
    throw input_error(name, in.consumed() + 1, "missing the header 'n m [fmt [ncon]]'" + hint);
  in.consume();
  const std::uint64_t at = in.consumed();
  const auto w = split_words(line);
  std::uint64_t n = 0, m = 0, ncon = 1;
  bool ok = w.size() >= 2 && w.size() <= 4 && small_uint(w[0], n) && small_uint(w[1], m);
  std::string fmt = w.size() >= 3 ? w[2] : "0";
  ok = ok && fmt.size() <= 3 && fmt.find_first_not_of("01") == std::string::npos;
  if (!ok)
    throw input_error(name, at,
                      "bad header '" + excerpt(line) + "': expected 'n m [fmt [ncon]]'" + hint);
  fmt.insert(0, 3 - fmt.size(), '0');
  const bool sizes = fmt[0] == '1', weights = fmt[1] == '1', edge_weights = fmt[2] == '1';
  if (w.size() == 4 && (!weights || !small_uint(w[3], ncon) || ncon == 0 || ncon > 64))
    throw input_error(name, at,
                      "bad header '" + excerpt(line) +
                          "': ncon (the 4th number) needs vertex weights in fmt and is 1..64");
  if (n < (std::uint64_t{1} << 32) && m > n * (n - 1) / 2)
    throw input_error(name, at,
                      "header declares " + std::to_string(m) + " edges, more than a simple " +
                          "graph on " + std::to_string(n) + " vertices has" + hint);
  TextSpec& s = out.spec;
  s.kind = LineKind::Metis;
  s.comments = "%";
  s.ranged = true;
  s.rows = s.cols = n;
  s.vertex_values = static_cast<std::uint8_t>((sizes ? 1 : 0) + (weights ? ncon : 0));
  s.edge_weights = edge_weights;
  out.metis_vertices = n;
  out.declared = true;
  out.declared_records = 2 * m;
  out.declared_line = at;
  out.declared_noun = "adjacency entries (each of the m = " + std::to_string(m) +
                      " edges is listed by both endpoints)";
  out.declared_where = "the header";
}

void read_dimacs(TextLayout& out, HeaderLines& in, const std::string& name) {
  std::string line;
  if (!skip_comments(in, "c", line) || first_byte(line) != 'p')
    throw input_error(name, in.consumed() + 1,
                      "expected the DIMACS problem line ('p sp n m', 'p edge n m' or 'p tw n m') "
                      "before the edges");
  in.consume();
  const std::uint64_t at = in.consumed();
  const auto w = split_words(line);
  std::uint64_t n = 0, m = 0;
  const std::string kind = w.size() == 4 ? lower(w[1]) : "";
  if (w.size() != 4 || w[0] != "p" || !small_uint(w[2], n) || !small_uint(w[3], m) ||
      (kind != "sp" && kind != "edge" && kind != "col" && kind != "tw"))
    throw input_error(name, at,
                      "bad problem line '" + excerpt(line) +
                          "' (expected 'p sp n m', 'p edge n m' or 'p tw n m')");
  TextSpec& s = out.spec;
  s.comments = "c";
  s.ranged = true;
  s.rows = s.cols = n;
  s.numeric_values = true;
  if (kind == "sp") {
    s.prefix = 'a';
    s.min_values = s.max_values = 1;
    s.shape = "a DIMACS arc line is 'a u v weight'";
  } else if (kind == "tw") {
    s.min_values = s.max_values = 0;  // PACE: bare 'u v' lines
    s.shape = "a PACE edge line is 'u v'";
  } else {
    s.prefix = 'e';
    s.min_values = s.max_values = 0;
    s.shape = "a DIMACS edge line is 'e u v'";
  }
  const bool sp = kind == "sp";
  out.declared = true;
  out.declared_records = m;
  out.declared_line = at;
  out.declared_noun = sp ? "arcs" : "edges";
  out.declared_where = "the problem line";
}

// Plain, TSV, CSV and adjacency lists: comments, then an optional column-name line.
void read_columns(Dialect d, TextLayout& out, const HeaderOptions& o, HeaderLines& in) {
  TextSpec& s = out.spec;
  switch (d) {
    case Dialect::Tsv:
      s.max_values = 1;
      s.numeric_values = true;
      s.shape = "a TSV edge line has 2 vertex ids and at most 1 weight";
      break;
    case Dialect::Csv:
      s.delimiter = o.delimiter ? o.delimiter : ',';
      s.shape = "a CSV edge line has 2 vertex ids and at most 2 further columns (weight, time)";
      break;
    case Dialect::Adjlist:
      s.kind = LineKind::Adjlist;
      s.comments = "#";
      break;
    default:
      s.attribute_dict = true;
      s.shape =
          "a plain edge line has 2 vertex ids and at most 2 further columns (weight, time); "
          "for adjacency lists give --format adjlist or metis";
  }
  std::string line;
  if (!skip_comments(in, s.comments, line)) return;
  if (o.header || (!o.names && is_column_names(line, s.delimiter))) in.consume();
}

}  // namespace

const char* dialect_name(Dialect d) {
  switch (d) {
    case Dialect::Plain:
      return "plain";
    case Dialect::Tsv:
      return "tsv";
    case Dialect::Csv:
      return "csv";
    case Dialect::Mtx:
      return "mtx";
    case Dialect::Metis:
      return "metis";
    case Dialect::Dimacs:
      return "dimacs";
    case Dialect::Adjlist:
      return "adjlist";
    case Dialect::Bin32:
      return "bin32";
    case Dialect::Bin64:
      return "bin64";
    default:
      return "auto";
  }
}

Dialect parse_dialect(const std::string& name) {
  if (name == "auto" || name.empty()) return Dialect::Auto;
  if (name == "snap") return Dialect::Plain;
  for (Dialect d : {Dialect::Plain, Dialect::Tsv, Dialect::Csv, Dialect::Mtx, Dialect::Metis,
                    Dialect::Dimacs, Dialect::Adjlist, Dialect::Bin32, Dialect::Bin64})
    if (name == dialect_name(d)) return d;
  throw Error(ErrorKind::Usage,
              "--format: expected auto, plain, snap, tsv, csv, mtx, metis, dimacs, adjlist, "
              "bin32 or bin64, got '" +
                  name + "'");
}

Dialect dialect_from_extension(const std::string& path) {
  std::string p = path;
  for (const char* z : {".gz", ".bz2", ".xz", ".zst", ".zstd"})
    if (has_suffix(p, z)) {
      p.resize(p.size() - std::strlen(z));
      break;
    }
  struct Ext {
    const char* ext;
    Dialect d;
  };
  static const Ext table[] = {
      {".mtx", Dialect::Mtx},         {".mm", Dialect::Mtx},        {".tsv", Dialect::Tsv},
      {".csv", Dialect::Csv},         {".graph", Dialect::Metis},   {".metis", Dialect::Metis},
      {".gr", Dialect::Dimacs},       {".dimacs", Dialect::Dimacs}, {".col", Dialect::Dimacs},
      {".adjlist", Dialect::Adjlist}, {".bin32", Dialect::Bin32},   {".bin", Dialect::Bin64},
      {".bin64", Dialect::Bin64}};
  for (const Ext& e : table)
    if (has_suffix(p, e.ext)) return e.d;
  return Dialect::Auto;
}

char parse_delimiter(const std::string& text) {
  if (text.empty()) return 0;
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  if (text == "space") return ' ';
  const unsigned char c = static_cast<unsigned char>(text[0]);
  if (text.size() != 1 || c < 0x20 || c >= 0x7f || std::isdigit(c) || c == '-' || c == '+' ||
      c == '.' || c == '#' || c == '%')
    throw Error(ErrorKind::Usage,
                "--delimiter: expected one punctuation character (',', ';', '|'), 'tab' or "
                "'space', got '" +
                    text + "'");
  return static_cast<char>(c);
}

std::size_t adjacency_line_cap(std::uint64_t memory_limit) {
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(memory_limit / 256, kEdgeLineCap, std::uint64_t{64} << 20));
}

TextLayout read_header(Dialect& d, const HeaderOptions& options, HeaderLines& in,
                       const std::string& name) {
  TextLayout out;
  if (d == Dialect::Auto) {
    // A DIMACS comment or problem line, or a comma in the first word of the first line that is
    // not a comment.
    std::string line;
    d = Dialect::Plain;
    if (skip_comments(in, "#%", line)) {
      const auto w = split_words(line);
      if (!w.empty() && (w[0] == "c" || (w[0] == "p" && w.size() == 4)))
        d = Dialect::Dimacs;
      else if (!w.empty() && w[0].find(',') != std::string::npos)
        d = Dialect::Csv;  // (a comma further on may be inside a plain file's third column)
    }
  }
  if (options.header && (d == Dialect::Mtx || d == Dialect::Metis || d == Dialect::Dimacs))
    throw Error(ErrorKind::Usage, std::string("--header: ") + dialect_name(d) +
                                      " input has its own header; --header is for plain, csv, "
                                      "tsv and adjlist input");
  if (options.names && d != Dialect::Plain && d != Dialect::Tsv && d != Dialect::Csv &&
      d != Dialect::Adjlist)
    throw Error(ErrorKind::Usage, std::string("--names: ") + dialect_name(d) +
                                      " input numbers its vertices; --names is for plain, snap, "
                                      "tsv, csv and adjlist input");
  switch (d) {
    case Dialect::Mtx:
      read_mtx(out, in, name);
      break;
    case Dialect::Metis:
      read_metis(out, options, in, name);
      break;
    case Dialect::Dimacs:
      read_dimacs(out, in, name);
      break;
    default:
      read_columns(d, out, options, in);
  }
  out.spec.names = options.names;
  return out;
}

}  // namespace tristream::conv
