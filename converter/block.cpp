// block.cpp — a parsed block's edges (parse.hpp): packed keys or records (EdgeWriter, widen),
// the thread's spare key buffer (take_spare_keys, give_back_keys),
// the binary record converter, and the sort of a block for out-of-core conversion.
#include <algorithm>
#include <cstring>
#include <vector>

#include "parse.hpp"

namespace tristream::conv {

void parse_binary(const char* p, std::size_t len, bool wide, Block& out) {
  const std::size_t rec = wide ? 16 : 8;
  const std::size_t n = len / rec;
  out.bytes = len;
  EdgeWriter dst(out, n + 1);
  auto load = [&](std::size_t i, std::uint64_t& a, std::uint64_t& b) {
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
  };
  // 1. While both ids are below 2^32, without a branch on the data: every pair's key is written
  // and kept unless it is a self-loop (the next one then overwrites it); the larger id of each
  // kept pair raises max_id. (The order of the two ids is random: a branch on it mispredicted
  // every other pair.)
  std::uint64_t max_id = 0;
  std::size_t i = 0;
  std::uint64_t* const k0 = dst.key_cursor();
  std::uint64_t* k = k0;
  for (; i < n; ++i) {
    std::uint64_t a, b;
    load(i, a, b);
    if ((a | b) >> 32) break;
    const std::uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    const std::uint64_t keep = a != b;
    *k = lo << 32 | hi;
    k += keep;
    const std::uint64_t m = hi & (0 - keep);
    max_id = m > max_id ? m : max_id;
  }
  std::uint64_t loops = i - static_cast<std::uint64_t>(k - k0);
  dst.set_key_cursor(k);
  // 2. From the first id of 2^32 or more, one pair at a time (the block becomes records).
  for (; i < n; ++i) {
    std::uint64_t a, b;
    load(i, a, b);
    if (a == b) {
      ++loops;
      continue;
    }
    if (a > b) std::swap(a, b);
    dst.add(a, b);
    if (b > max_id) max_id = b;
  }
  dst.finish();
  out.records = n;
  out.loops = loops;
  out.max_id = max_id;
}

namespace {
thread_local BigBuffer<std::uint64_t> spare_keys;
}  // namespace

void take_spare_keys(BigBuffer<std::uint64_t>& keys, std::size_t capacity) {
  BigBuffer<std::uint64_t>& spare = spare_keys;
  if (spare.capacity() >= capacity && spare.capacity() / 2 <= capacity) {
    keys.release();
    keys.swap(spare);
    keys.clear();
    return;
  }
  keys.reserve(capacity);
}

void give_back_keys(BigBuffer<std::uint64_t>& keys) noexcept {
  BigBuffer<std::uint64_t>& spare = spare_keys;
  if (keys.capacity() > spare.capacity()) spare.swap(keys);
  keys.release();
}

void EdgeWriter::finish() {
  if (kdst_)
    b_.keys.resize(static_cast<std::size_t>(kdst_ - b_.keys.data()));
  else
    b_.edges.resize(static_cast<std::size_t>(edst_ - b_.edges.data()));
}

void EdgeWriter::add_wide(std::uint64_t a, std::uint64_t b) {
  if (kdst_) {
    // The first id of 2^32 or more: the keys so far become records.
    b_.keys.resize(static_cast<std::size_t>(kdst_ - b_.keys.data()));
    b_.edges.reserve(cap_);
    edst_ = b_.edges.data();
    for (const std::uint64_t k : b_.keys) *edst_++ = Edge64{k >> 32, k & 0xffffffffu};
    b_.keys.release();
    b_.wide = true;
    kdst_ = nullptr;
  }
  *edst_++ = Edge64{a, b};
}

void widen(Block& b) {
  if (b.wide) return;
  BigBuffer<Edge64> edges(b.keys.size() + 1);
  edges.resize(b.keys.size());
  for (std::size_t i = 0; i < b.keys.size(); ++i)
    edges[i] = Edge64{b.keys[i] >> 32, b.keys[i] & 0xffffffffu};
  b.keys.release();
  b.edges = std::move(edges);
  b.wide = true;
}

void sort_block(Block& b) {
  // 1. The edges sorted, repeats removed: packed keys sort as numbers (a, then b) by radix.
  std::vector<std::uint64_t> scratch;
  if (!b.wide) {
    radix_sort_u64(b.keys.data(), b.keys.size(), scratch);
    b.keys.resize(
        static_cast<std::size_t>(std::unique(b.keys.begin(), b.keys.end()) - b.keys.begin()));
    widen(b);
  } else {
    std::sort(b.edges.begin(), b.edges.end());
    b.edges.resize(
        static_cast<std::size_t>(std::unique(b.edges.begin(), b.edges.end()) - b.edges.begin()));
  }
  b.edges.trim();
  // 2. The sorted unique endpoints: the second ones sorted, the (already sorted) first ones
  //    merged in.
  BigBuffer<std::uint64_t> ids(2 * b.edges.size() + 1);
  std::uint64_t* w = ids.data();
  for (const Edge64& e : b.edges) *w++ = e.b;
  radix_sort_u64(ids.data(), static_cast<std::size_t>(w - ids.data()), scratch);
  std::uint64_t* firsts = w;
  for (const Edge64& e : b.edges) *w++ = e.a;
  std::inplace_merge(ids.data(), firsts, w);
  ids.resize(static_cast<std::size_t>(std::unique(ids.data(), w) - ids.data()));
  ids.trim();
  b.ids = std::move(ids);
}

}  // namespace tristream::conv
