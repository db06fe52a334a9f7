// parse.cpp — the hand-written text parser (one pass over the bytes, no iostreams) for every line
// kind of the text dialects (the binary records and block helpers are in block.cpp).
#include "parse.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "common/interrupt.hpp"

namespace tristream::conv {

namespace {

inline bool is_sep(char c) {
  return c == ' ' || c == '\t';
}
inline bool is_eol(char c) {
  return c == '\n' || c == '\r';
}

// The end of the token at p: the first separator, delimiter or line end.
inline const char* token_end(const char* p, const char* end, char delim) {
  while (p < end && !is_sep(*p) && !is_eol(*p) && *p != delim) ++p;
  return p;
}

inline bool is_digit(char c) {
  return static_cast<unsigned char>(c - '0') <= 9;
}

bool equals_ci(const char* p, const char* e, const char* word) {
  for (; p < e && *word; ++p, ++word)
    if ((*p | 0x20) != *word) return false;
  return p == e && !*word;
}

// A value column: a decimal integer or real, with sign and exponent, or inf / nan.
bool is_number(const char* p, const char* e) {
  if (p < e && (*p == '+' || *p == '-')) ++p;
  if (equals_ci(p, e, "inf") || equals_ci(p, e, "infinity") || equals_ci(p, e, "nan")) return true;
  bool digits = false;
  while (p < e && is_digit(*p)) ++p, digits = true;
  if (p < e && *p == '.') {
    ++p;
    while (p < e && is_digit(*p)) ++p, digits = true;
  }
  if (!digits) return false;
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) ++p;
    if (p == e || !is_digit(*p)) return false;
    while (p < e && is_digit(*p)) ++p;
  }
  return p == e;
}

enum class Field { Next, LineEnd, Error };

// One pass over a block of text: the line loop, then one reader per line kind. Errors set the
// block's error (first one only) and stop the pass.
class TextParser {
 public:
  TextParser(const char* p, std::size_t len, const TextSpec& spec, Block& out)
      : p_(p),
        end_(p + len),
        spec_(spec),
        out_(out),
        delim_(spec.delimiter ? spec.delimiter : '\n'),
        // An edge line takes at least 4 bytes ("1 2\n"); an adjacency entry at least 2.
        dst_(out, (spec.kind == LineKind::Edge ? len / 4 : len / 2) + 2),
        fast_(spec.kind == LineKind::Edge && !spec.delimiter && !spec.prefix && !spec.names &&
              !spec.ranged && spec.min_values == 0 && spec.entry_limit == UINT64_MAX &&
              !std::strpbrk(spec.comments, "0123456789")) {
    out.bytes = len;
  }

  void run() {
    while (p_ < end_) {
      // 0. SIGINT/SIGTERM every 16 Ki lines (the block's failure: Error(Interrupted)).
      if ((line_ & 0x3fff) == 0) throw_if_interrupted();
      // 1. One line: blank, comment, or the dialect's line.
      const char* const line_start = p_;
      if (!(fast_ && fast_line()) && !general_line()) return;
      // 2. The line cap, then the line end (LF, CRLF or a lone CR).
      if (static_cast<std::size_t>(p_ - line_start) > spec_.max_line) {
        fail("line longer than " + std::to_string(spec_.max_line) + " bytes");
        return;
      }
      if (p_ < end_) {
        p_ += (*p_ == '\r' && p_ + 1 < end_ && p_[1] == '\n') ? 2 : 1;
        ++line_;
      }
    }
    dst_.finish();
    out_.records = records_;
    out_.loops = loops_;
    out_.lines = line_;
    out_.max_id = max_id_;
  }

 private:
  // Blank, comment or the dialect's line, from its first byte; false on an error.
  bool general_line() {
    while (p_ < end_ && is_sep(*p_)) ++p_;
    if (p_ == end_ || is_eol(*p_)) return spec_.kind != LineKind::Metis || metis_line(true);
    if (std::strchr(spec_.comments, *p_) && *p_ != '\0') {
      while (p_ < end_ && !is_eol(*p_)) ++p_;
      return true;
    }
    return line();
  }

  // The plain edge line "u v" (ids of at most 19 digits, one run of blanks between them, LF
  // or the end of the block right after): parsed without the general reader. Any other line
  // (comments, value columns, CR, long ids, errors) returns false with p_ unmoved, for the
  // general reader.
  bool fast_line() {
    const char* q = p_;
    std::uint64_t a = 0, b = 0;
    if (!fast_id(q, a) || q == end_ || !is_sep(*q)) return false;
    do ++q;
    while (q < end_ && is_sep(*q));
    if (!fast_id(q, b) || (q != end_ && *q != '\n')) return false;
    p_ = q;
    return record(a, b);  // (no entry limit on this path: never fails)
  }
  bool fast_id(const char*& q, std::uint64_t& v) const {
    // Up to 8 digits from one 8-byte load: the digits found by their high nibbles, then combined
    // pairwise by multiplications; after 8 digits (or near the block's end) the rest, up to 19 in
    // all, one by one.
    const char* const s = q;
    v = 0;
    if (end_ - q >= 8) {
      std::uint64_t w;
      std::memcpy(&w, q, 8);
      const std::uint64_t hi = 0xF0F0F0F0F0F0F0F0ull, zeros = 0x3030303030303030ull;
      // A byte is a digit when it is 0x30..0x39: its high nibble 3, also after adding 6 (a carry
      // out of a non-digit byte only disturbs the bytes after it).
      const std::uint64_t non_digit =
          ((w & hi) ^ zeros) | (((w + 0x0606060606060606ull) & hi) ^ zeros);
      const unsigned len = non_digit ? static_cast<unsigned>(__builtin_ctzll(non_digit)) / 8 : 8;
      if (len == 0) return false;
      std::uint64_t x = (w - zeros) << (8 * (8 - len));  // leading zero digits below
      x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
      x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
      v = (x * 10000 + (x >> 32)) & 0xFFFFFFFFull;
      q += len;
      if (len < 8) return true;  // (the byte after them, a non-digit, was in the load)
    }
    while (q < end_ && is_digit(*q)) v = v * 10 + static_cast<unsigned>(*q++ - '0');
    return q > s && q - s <= 19;
  }

  bool line() {
    switch (spec_.kind) {
      case LineKind::Metis:
        return metis_line(false);
      case LineKind::Adjlist:
        return adjlist_line();
      default:
        return edge_line();
    }
  }

  bool fail(std::string what) {
    out_.error = true;
    out_.error_line = line_ + 1;
    out_.error_msg = std::move(what);
    return false;
  }

  std::string token() const {
    return printable_token(p_, static_cast<std::size_t>(field_end(p_) - p_));
  }

  // Parses an unsigned decimal id at p_ (advanced past it); in CSV, "12" too.
  bool id(std::uint64_t& out) {
    if (spec_.delimiter && p_ < end_ && *p_ == '"') return quoted_id(out);
    const char* const start = p_;
    std::uint64_t v = 0;
    int significant = 0;
    bool overflow = false;
    while (p_ < end_ && is_digit(*p_)) {
      const unsigned d = static_cast<unsigned>(*p_ - '0');
      if (significant < 19) {
        v = v * 10 + d;
      } else if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
        overflow = true;
      }
      significant += (v != 0);
      ++p_;
    }
    if (p_ > start && (p_ == end_ || is_sep(*p_) || is_eol(*p_) || *p_ == delim_)) {
      out = v;
      if (!overflow) return true;
      p_ = start;
      return fail("vertex id '" + token() + "' exceeds 2^64-1");
    }
    const bool digits = p_ > start;
    const char c = p_ < end_ ? *p_ : '\0';
    p_ = start;
    if (digits && (c == '.' || c == 'e' || c == 'E'))
      return fail("non-integer vertex id '" + token() + "'");
    if (!digits && c == '-' && p_ + 1 < end_ && is_digit(p_[1]))
      return fail("negative vertex id '" + token() + "'");
    return fail("unparsable token '" + token() +
                "' (expected a vertex id; --names reads vertex names)");
  }

  bool quoted_id(std::uint64_t& out) {
    const char* const start = p_;
    const char* q = p_ + 1;
    std::uint64_t v = 0;
    bool overflow = false;
    for (; q < end_ && is_digit(*q); ++q)
      overflow |= __builtin_mul_overflow(v, 10u, &v) ||
                  __builtin_add_overflow(v, static_cast<unsigned>(*q - '0'), &v);
    const bool closed = q > p_ + 1 && q < end_ && *q == '"';
    p_ = closed ? q + 1 : field_end(start);
    if (closed && !overflow && (p_ == end_ || is_sep(*p_) || is_eol(*p_) || *p_ == delim_)) {
      out = v;
      return true;
    }
    if (closed) p_ = token_end(p_, end_, delim_);  // "12"x: the whole token
    const std::string t = printable_token(start, static_cast<std::size_t>(p_ - start));
    p_ = start;
    if (closed && overflow) return fail("vertex id '" + t + "' exceeds 2^64-1");
    return fail("unparsable token '" + t + "' (expected a vertex id)");
  }

  // The end of the field at p: a token, or in CSV a "quoted field" ("" is a quote inside).
  const char* field_end(const char* p) const {
    if (!spec_.delimiter || p == end_ || *p != '"') return token_end(p, end_, delim_);
    for (++p; p < end_ && !is_eol(*p); ++p) {
      if (*p != '"') continue;
      if (p + 1 < end_ && p[1] == '"') {
        ++p;
        continue;
      }
      return p + 1;
    }
    return p;  // unterminated: up to the line end
  }

  // Moves p_ from the end of a field to the start of the next one on the line.
  Field next_field() {
    while (p_ < end_ && is_sep(*p_)) ++p_;
    if (p_ == end_ || is_eol(*p_)) return Field::LineEnd;
    if (spec_.delimiter) {
      if (*p_ != delim_) {
        fail(std::string("expected the delimiter '") + printable_token(&delim_, 1) +
             "' between columns, got '" + token() + "'");
        return Field::Error;
      }
      ++p_;
      while (p_ < end_ && is_sep(*p_)) ++p_;
      if (p_ == end_ || is_eol(*p_) || *p_ == delim_) {
        fail(std::string("empty column after the delimiter '") + printable_token(&delim_, 1) + "'");
        return Field::Error;
      }
    }
    return Field::Next;
  }

  bool record(std::uint64_t a, std::uint64_t b) {
    if (++records_ > spec_.entry_limit) return fail("more entries than the header declares");
    if (a == b) {
      ++loops_;
      return true;
    }
    // (a, b) ordered without a branch: in a shuffled edge list either order is as likely.
    const std::uint64_t flip = (a ^ b) & (std::uint64_t{0} - static_cast<std::uint64_t>(a > b));
    a ^= flip;
    b ^= flip;
    dst_.add(a, b);
    max_id_ = b > max_id_ ? b : max_id_;
    return true;
  }

  bool in_range(std::uint64_t v, std::uint64_t hi, const char* what) {
    if (v >= 1 && v <= hi) return true;
    return fail(std::string(what) + " " + std::to_string(v) + " outside 1.." + std::to_string(hi));
  }

  // [prefix] u v [values]
  bool edge_line() {
    std::size_t columns = 2;
    if (spec_.prefix) {
      if (*p_ != spec_.prefix || (p_ + 1 < end_ && !is_sep(p_[1]) && !is_eol(p_[1])))
        return fail("unexpected line '" + token() + "' (expected '" + spec_.shape + "')");
      ++p_;
      ++columns;
      if (next_field() != Field::Next)
        return fail("only one column; expected '" + spec_.shape + "'");
    }
    std::uint64_t a = 0, b = 0;
    if (!(spec_.names ? name(name_a_) : id(a))) return false;
    const Field f = next_field();
    if (f == Field::Error) return false;
    if (f == Field::LineEnd)
      return fail(
          "only one column ('" +
          (spec_.names ? printable_token(name_a_.data(), name_a_.size()) : std::to_string(a)) +
          "'); an edge needs two vertex " + (spec_.names ? "names" : "ids"));
    if (!(spec_.names ? name(name_b_) : id(b))) return false;
    std::size_t values = 0;
    for (Field g; (g = next_field()) != Field::LineEnd; ++values) {
      if (g == Field::Error) return false;
      if (spec_.attribute_dict && *p_ == '{') {
        // networkx write_edgelist: "u v {'weight': 3, 'label': 'x y'}"
        while (p_ < end_ && !is_eol(*p_)) ++p_;
        ++values;
        break;
      }
      const char* e = field_end(p_);
      if (spec_.numeric_values && !is_number(p_, e))
        return fail("column " + std::to_string(columns + values + 1) + " '" + token() +
                    "' is not a number (" + spec_.shape + ")");
      p_ = e;
    }
    if (values < spec_.min_values || values > spec_.max_values)
      return fail(std::to_string(columns + values) + " columns, but " + spec_.shape);
    if (spec_.ranged) {
      if (!in_range(a, spec_.rows, spec_.mtx ? "row index" : "vertex id")) return false;
      if (!in_range(b, spec_.cols, spec_.mtx ? "column index" : "vertex id")) return false;
    }
    return spec_.names ? named_record() : record(a, b);
  }

  // --names: the field at p_ (advanced past it) into `out`. A CSV field runs to the delimiter
  // (trailing blanks dropped) or is quoted ("" is a quote inside); otherwise a token.
  bool name(std::string& out) {
    const char* const start = p_;
    out.clear();
    if (spec_.delimiter && p_ < end_ && *p_ == '"') {
      const char* q = p_ + 1;
      for (;; ++q) {
        if (q == end_ || is_eol(*q)) return fail("unterminated quoted name '" + token() + "'");
        if (*q != '"') {
          out += *q;
        } else if (q + 1 < end_ && q[1] == '"') {
          out += *q++;
        } else {
          break;
        }
      }
      p_ = q + 1;
      if (p_ < end_ && !is_sep(*p_) && !is_eol(*p_) && *p_ != delim_) {
        p_ = start;
        return fail("text after the quoted name '" + token() + "'");
      }
    } else if (spec_.delimiter) {
      while (p_ < end_ && !is_eol(*p_) && *p_ != delim_) ++p_;
      const char* e = p_;
      while (e > start && is_sep(e[-1])) --e;
      p_ = e;
      out.assign(start, e);
    } else {
      p_ = token_end(p_, end_, delim_);
      out.assign(start, p_);
    }
    if (out.empty()) return fail("empty vertex name");
    if (out.size() > tcsr::kMaxNameBytes)
      return fail("vertex name longer than " + std::to_string(tcsr::kMaxNameBytes) + " bytes");
    return true;
  }

  // --names: the local id of a name, numbered in order of first appearance.
  std::uint64_t intern(const std::string& s) {
    const auto ins = local_.emplace(s, out_.names.size());
    if (ins.second) out_.names.add(s);
    return ins.first->second;
  }

  // --names: the edge name_a_ - name_b_. Names get ids only in edges that are not self-loops, so
  // every named vertex has an edge.
  bool named_record() {
    if (name_a_ == name_b_) return record(0, 0);
    const std::uint64_t a = intern(name_a_);
    return record(a, intern(name_b_));
  }

  // u v1 v2 ...
  bool adjlist_line() {
    std::uint64_t u, v;
    if (spec_.names) {
      if (!name(name_a_)) return false;
      for (Field f; (f = next_field()) != Field::LineEnd;)
        if (f == Field::Error || !name(name_b_) || !named_record()) return false;
      return true;
    }
    if (!id(u)) return false;
    for (Field f; (f = next_field()) != Field::LineEnd;)
      if (f == Field::Error || !id(v) || !record(u, v)) return false;
    return true;
  }

  // [vertex values] neighbour [edge weight] ... (the vertex is the line's rank in the file)
  bool metis_line(bool blank) {
    const std::uint64_t v = spec_.first_vertex + vertex_lines_++;
    const std::uint64_t n = spec_.rows;
    if (v > n) {
      if (blank) return true;  // trailing blank lines
      return fail("more vertex lines than the " + std::to_string(n) +
                  " vertices the header declares");
    }
    auto vs = [v] { return std::to_string(v); };  // for messages only
    bool first = true;
    auto field = [&] {
      if (!first) return next_field();
      first = false;
      return blank ? Field::LineEnd : Field::Next;
    };
    for (unsigned k = 0; k < spec_.vertex_values; ++k) {
      if (field() != Field::Next || !is_number(p_, token_end(p_, end_, delim_)))
        return fail("vertex " + vs() + ": expected " + std::to_string(spec_.vertex_values) +
                    " vertex size/weight numbers before the neighbours (the header's fmt)");
      p_ = token_end(p_, end_, delim_);
    }
    for (;;) {
      std::uint64_t u;
      if (field() != Field::Next) return true;
      if (!id(u) || !in_range(u, n, "neighbour")) return false;
      if (spec_.edge_weights) {
        if (next_field() != Field::Next || !is_number(p_, token_end(p_, end_, delim_)))
          return fail("vertex " + vs() + ": neighbour " + std::to_string(u) +
                      " has no edge weight (the header's fmt says each neighbour has one)");
        p_ = token_end(p_, end_, delim_);
      }
      if (!record(v, u)) return false;
    }
  }

  const char* p_;
  const char* const end_;
  const TextSpec& spec_;
  Block& out_;
  const char delim_;  // the delimiter; '\n' (a line end anyway) when columns are blank-separated
  EdgeWriter dst_;
  const bool fast_;  // plain edge lines may take fast_line
  std::uint64_t line_ = 0, records_ = 0, loops_ = 0, max_id_ = 0, vertex_lines_ = 0;
  std::string name_a_, name_b_;                           // --names: the line's two names
  std::unordered_map<std::string, std::uint64_t> local_;  // --names: name -> local id
};

}  // namespace

std::string printable_token(const char* p, std::size_t len) {
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(len, 40); ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    static const char hex[] = "0123456789abcdef";
    switch (c) {
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void parse_text(const char* p, std::size_t len, const TextSpec& spec, Block& out) {
  TextParser(p, len, spec, out).run();
}

std::uint64_t count_vertex_lines(const char* p, std::size_t len, const TextSpec& spec) {
  const char* const end = p + len;
  std::uint64_t n = 0;
  while (p < end) {
    const char* const line_start = p;
    while (p < end && is_sep(*p)) ++p;
    if (p == end) {
      n += p > line_start;
      break;
    }
    const bool comment = !is_eol(*p) && *p != '\0' && std::strchr(spec.comments, *p);
    while (p < end && !is_eol(*p)) ++p;
    n += !comment;
    if (p < end) p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
  }
  return n;
}

}  // namespace tristream::conv
