// count_ids.cpp — partitioned id counting (count_ids.hpp).
#include "count_ids.hpp"

#include <algorithm>

#include "scatter.hpp"
#include "util.hpp"

namespace tristream::conv {

void count_low_ids(const std::vector<KeySpan>& spans, std::uint32_t* counts, std::size_t space,
                   unsigned threads) {
  const unsigned t = std::max(threads, 1u);
  std::size_t total = 0;
  for (const KeySpan& s : spans) total += s.count;
  if (total == 0) return;
  // 1. Partitions of 2^16 ids (256 KiB of counters), at most 4096 of them.
  const int id_bits = space > 1 ? 64 - __builtin_clzll(space - 1) : 1;
  const int part_bits = std::max(std::min(id_bits, 16), id_bits - 12);
  const std::size_t P = std::size_t{1} << (id_bits - part_bits);
  // 2. Pieces of at most `grain` keys, a piece scattered by one worker; waves of pieces that
  //    hold at most `wave` keys.
  const std::size_t wave =
      std::clamp<std::size_t>(total / 8, std::size_t{1} << 20, std::size_t{1} << 26);
  const std::size_t grain = std::max<std::size_t>(wave / (4 * t), 1 << 14);
  std::vector<KeySpan> pieces;
  for (const KeySpan& s : spans)
    for (std::size_t i = 0; i < s.count; i += grain)
      pieces.push_back({s.data + i, std::min(grain, s.count - i)});
  BigBuffer<std::uint32_t> ids(wave + grain);
  ids.resize(wave + grain);
  std::vector<std::size_t> cursor, part_start(P + 1);
  for (std::size_t p0 = 0; p0 < pieces.size();) {
    std::size_t p1 = p0, keys = 0;
    while (p1 < pieces.size() && (p1 == p0 || keys + pieces[p1].count <= wave))
      keys += pieces[p1++].count;
    const std::size_t np = p1 - p0;
    // 3. The histogram of each piece, the places partition by partition.
    cursor.assign(np * P, 0);
    parallel_for(t, np, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t q = lo; q < hi; ++q) {
        std::size_t* h = cursor.data() + q * P;
        const KeySpan& s = pieces[p0 + q];
        for (std::size_t i = 0; i < s.count; ++i) ++h[(s.data[i] & 0xffffffffu) >> part_bits];
      }
    });
    bucket_places(cursor, np, P, part_start.data());
    // 4. The scatter, then each partition counted by one worker.
    parallel_for(t, np, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t q = lo; q < hi; ++q) {
        LineScatter<std::uint32_t> o(ids.data(), cursor.data() + q * P, P);
        const KeySpan& s = pieces[p0 + q];
        for (std::size_t i = 0; i < s.count; ++i) {
          const auto id = static_cast<std::uint32_t>(s.data[i]);
          o.put(id >> part_bits, id);
        }
        o.finish();
      }
    });
    parallel_for(t, P, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t b = lo; b < hi; ++b)
        for (std::size_t i = part_start[b]; i < part_start[b + 1]; ++i) ++counts[ids[i]];
    });
    p0 = p1;
  }
}

}  // namespace tristream::conv
