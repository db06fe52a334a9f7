// spill_file.cpp — random access into sorted runs on disk (spill_file.hpp).
#include "spill_file.hpp"

#include <cstring>

namespace tristream::conv {

std::size_t io_records(std::uint64_t limit, std::size_t streams, std::size_t record_bytes) {
  const std::uint64_t per = limit / 16 / std::max<std::size_t>(streams, 1) / record_bytes;
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(per, 4096 / record_bytes, (4u << 20) / record_bytes));
}

void Run::read(std::uint64_t first, std::size_t count, void* dst) const {
  const std::size_t rb = record_bytes();
  if (files.empty()) {
    TS_CHECK(first + count <= keys.capacity(), "run read out of range");
    std::memcpy(dst, keys.data() + first, count * 8);
    return;
  }
  // the file holding record `first`, then the next ones while the records go on
  std::size_t f = static_cast<std::size_t>(
      std::upper_bound(files.begin(), files.end(), first,
                       [](std::uint64_t x, const RunFile& r) { return x < r.first; }) -
      files.begin());
  TS_CHECK(f > 0, "run read before its first file");
  auto* out = static_cast<char*>(dst);
  for (--f; count > 0; ++f) {
    const std::uint64_t end = f + 1 < files.size() ? files[f + 1].first : first + count;
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(count, end - first));
    TS_CHECK(take > 0 &&
                 files[f].file->read_at((first - files[f].first) * rb, out, take * rb) == take * rb,
             "spill file shorter than written");
    out += take * rb;
    first += take;
    count -= take;
  }
}

Edge64 Run::at(std::uint64_t i) const {
  for (const Segment& g : segments) {
    if (i < g.count) {
      if (packed) {
        std::uint64_t k = 0;
        read(g.first + i, 1, &k);
        return Edge64{k >> 32, k & 0xffffffffu};
      }
      Edge64 e;
      read(g.first + i, 1, &e);
      return e;
    }
    i -= g.count;
  }
  TS_CHECK(false, "run index out of range");
  return Edge64{};
}

std::uint64_t Run::lower_bound(const Edge64& key) const {
  std::uint64_t lo = 0, hi = edges;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (at(mid) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::vector<Segment> Run::slice(std::uint64_t lo, std::uint64_t hi) const {
  std::vector<Segment> out;
  std::uint64_t base = 0;
  for (const Segment& g : segments) {
    const std::uint64_t a = std::max(lo, base), b = std::min(hi, base + g.count);
    if (a < b) out.push_back(Segment{g.first + (a - base), b - a});
    base += g.count;
  }
  return out;
}

}  // namespace tristream::conv
