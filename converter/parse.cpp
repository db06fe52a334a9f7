// parse.cpp — the hand-written edge-list parser (one pass over the bytes, no iostreams) and the
// binary record converter.
#include "parse.hpp"

#include <algorithm>
#include <cstring>

namespace tristream::conv {

namespace {

inline bool is_sep(char c) {
  return c == ' ' || c == '\t';
}
inline bool is_eol(char c) {
  return c == '\n' || c == '\r';
}

std::string token_at(const char* p, const char* end) {
  const char* q = p;
  while (q < end && !is_sep(*q) && !is_eol(*q) && q - p < 40) ++q;
  return std::string(p, q);
}

// Parses an unsigned decimal id at p (advanced past it). Returns nullptr on success, else a
// message describing the offending token.
inline bool parse_id(const char*& p, const char* end, std::uint64_t& out, std::string& msg) {
  const char* start = p;
  std::uint64_t v = 0;
  int significant = 0;
  bool overflow = false;
  while (p < end) {
    const unsigned d = static_cast<unsigned char>(*p) - static_cast<unsigned>('0');
    if (d > 9) break;
    if (significant < 19) {
      v = v * 10 + d;
    } else if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
      overflow = true;
    }
    significant += (v != 0);
    ++p;
  }
  if (p > start && (p == end || is_sep(*p) || is_eol(*p))) {
    if (overflow) {
      msg = "vertex id '" + token_at(start, end) + "' exceeds 2^64-1";
      return false;
    }
    out = v;
    return true;
  }
  if (p > start && (*p == '.' || *p == 'e' || *p == 'E')) {
    msg = "non-integer vertex id '" + token_at(start, end) + "'";
  } else if (p == start && *p == '-' && p + 1 < end &&
             static_cast<unsigned char>(p[1] - '0') <= 9) {
    msg = "negative vertex id '" + token_at(start, end) + "'";
  } else {
    msg = "unparsable token '" + token_at(start, end) + "' (expected a vertex id)";
  }
  return false;
}

}  // namespace

void parse_text(const char* p, std::size_t len, const TextSpec& spec, Block& out) {
  const char* const end = p + len;
  out.bytes = len;
  out.edges.reserve(len / 4 + 2);
  Edge64* dst = out.edges.data();
  std::uint64_t line = 0, records = 0, loops = 0, max_id = 0;
  std::string msg;
  auto fail = [&](std::string what) {
    out.error = true;
    out.error_line = line + 1;
    out.error_msg = std::move(what);
  };
  while (p < end) {
    while (p < end && is_sep(*p)) ++p;
    if (p == end) break;
    const char c = *p;
    if (c == '\n') {
      ++line;
      ++p;
      continue;
    }
    if (c == '\r') {
      ++p;
      continue;
    }
    if (c == '#' || c == '%') {
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (!nl) break;
      p = static_cast<const char*>(nl) + 1;
      ++line;
      continue;
    }
    std::uint64_t a, b;
    if (!parse_id(p, end, a, msg)) return fail(msg);
    while (p < end && is_sep(*p)) ++p;
    if (p == end || is_eol(*p))
      return fail("only one column ('" + std::to_string(a) + "'); an edge needs two vertex ids");
    if (!parse_id(p, end, b, msg)) return fail(msg);
    ++records;
    if (spec.mtx) {
      if (records > spec.entry_limit) return fail("more entries than the size line declares");
      if (a < 1 || a > spec.mtx_rows)
        return fail("row index " + std::to_string(a) + " outside 1.." +
                    std::to_string(spec.mtx_rows));
      if (b < 1 || b > spec.mtx_cols)
        return fail("column index " + std::to_string(b) + " outside 1.." +
                    std::to_string(spec.mtx_cols));
    }
    if (a == b) {
      ++loops;
    } else {
      if (a > b) std::swap(a, b);
      *dst++ = Edge64{a, b};
      if (b > max_id) max_id = b;
    }
    // The rest of the line (weights, values, extra columns) is ignored.
    if (p < end && *p != '\n') {
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (!nl) {
        p = end;
        break;
      }
      p = static_cast<const char*>(nl);
    }
    if (p < end) {
      ++line;
      ++p;
    }
  }
  out.edges.resize(static_cast<std::size_t>(dst - out.edges.data()));
  out.records = records;
  out.loops = loops;
  out.lines = line;
  out.max_id = max_id;
}

void parse_binary(const char* p, std::size_t len, bool wide, Block& out) {
  const std::size_t rec = wide ? 16 : 8;
  const std::size_t n = len / rec;
  out.bytes = len;
  out.edges.reserve(n + 1);
  Edge64* dst = out.edges.data();
  std::uint64_t loops = 0, max_id = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t a, b;
    if (wide) {
      std::memcpy(&a, p + 16 * i, 8);
      std::memcpy(&b, p + 16 * i + 8, 8);
    } else {
      std::uint32_t x, y;
      std::memcpy(&x, p + 8 * i, 4);
      std::memcpy(&y, p + 8 * i + 4, 4);
      a = x;
      b = y;
    }
    if (a == b) {
      ++loops;
      continue;
    }
    if (a > b) std::swap(a, b);
    *dst++ = Edge64{a, b};
    if (b > max_id) max_id = b;
  }
  out.edges.resize(static_cast<std::size_t>(dst - out.edges.data()));
  out.records = n;
  out.loops = loops;
  out.max_id = max_id;
}

void sort_block(Block& b) {
  std::sort(b.edges.begin(), b.edges.end());
  b.edges.resize(
      static_cast<std::size_t>(std::unique(b.edges.begin(), b.edges.end()) - b.edges.begin()));
  b.edges.trim();
  BigBuffer<std::uint64_t> ids(2 * b.edges.size() + 1);
  std::uint64_t* w = ids.data();
  for (const Edge64& e : b.edges) *w++ = e.b;
  std::sort(ids.data(), w);
  // Merge in the (already sorted) first endpoints.
  std::uint64_t* firsts = w;
  for (const Edge64& e : b.edges) *w++ = e.a;
  std::inplace_merge(ids.data(), firsts, w);
  ids.resize(static_cast<std::size_t>(std::unique(ids.data(), w) - ids.data()));
  ids.trim();
  b.ids = std::move(ids);
}

}  // namespace tristream::conv
