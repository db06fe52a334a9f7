// stream/chunk_reader.cpp — rows from compressed chunks, with the chunk cache
// (stream/chunk_reader.hpp).
#include "stream/chunk_reader.hpp"

#include <algorithm>
#include <cstring>

#include "common/thread_pool.hpp"
#include "stream/clock.hpp"
#include "tristream/error.hpp"

namespace tristream::stream {

namespace {
bool in(const std::vector<std::uint64_t>& sorted, std::uint64_t c) {
  return std::binary_search(sorted.begin(), sorted.end(), c);
}
}  // namespace

ChunkReader::ChunkReader(const GraphSource& g, ThreadPool& pool, std::uint32_t window,
                         std::uint64_t cache_bytes, Recorder& rec)
    : g_(g),
      pool_(pool),
      window_(std::max<std::uint32_t>(1, window)),
      cache_(cache_bytes),
      rec_(rec),
      bufs_(window_) {
  first_edges_.reserve(g.chunks().size());
  for (const auto& c : g.chunks()) first_edges_.push_back(c.first_edge);
}

std::uint64_t ChunkReader::chunk_of(eid_t e) const {
  return static_cast<std::uint64_t>(std::upper_bound(first_edges_.begin(), first_edges_.end(), e) -
                                    first_edges_.begin() - 1);
}

void ChunkReader::need_row(std::uint64_t r, std::vector<std::uint64_t>& needed) const {
  const eid_t* off = g_.offsets();
  if (off[r] == off[r + 1]) return;
  const std::uint64_t c0 = chunk_of(off[r]), c1 = chunk_of(off[r + 1] - 1);
  for (std::uint64_t c = c0; c <= c1; ++c)
    if (needed.empty() || needed.back() < c) needed.push_back(c);
}

std::uint64_t ChunkReader::chunk_bytes(const std::vector<std::uint64_t>& needed) const {
  std::uint64_t total = 0;
  for (auto c : needed) total += g_.chunks()[c].edges * sizeof(vid_t);
  return total;
}

void ChunkReader::begin(std::vector<std::uint64_t> needed, std::int64_t unit) {
  needed_ = std::move(needed);
  batch_.clear();
  unit_ = unit;
}

const vid_t* ChunkReader::row(std::uint64_t r, std::uint64_t& deg) {
  const eid_t* off = g_.offsets();
  const eid_t s = off[r], e = off[r + 1];
  deg = e - s;
  if (deg == 0) return nullptr;
  const std::uint64_t c0 = chunk_of(s), c1 = chunk_of(e - 1);
  const auto& chunks = g_.chunks();
  if (c0 == c1) return slot(c0) + (s - chunks[c0].first_edge);
  tmp_.resize(deg);
  std::uint64_t w = 0;
  for (std::uint64_t c = c0; c <= c1; ++c) {
    const vid_t* base = slot(c);
    const eid_t cs = std::max(s, chunks[c].first_edge);
    const eid_t ce = std::min(e, chunks[c].first_edge + chunks[c].edges);
    std::memcpy(tmp_.data() + w, base + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
    w += ce - cs;
  }
  return tmp_.data();
}

bool ChunkReader::pin(const std::vector<std::uint64_t>& needed, std::int64_t unit) {
  const auto& chunks = g_.chunks();
  if (ptr_.size() != chunks.size()) ptr_.assign(chunks.size(), nullptr);
  std::fill(ptr_.begin(), ptr_.end(), nullptr);
  // resident chunks are used in place; the others go through the cache
  std::vector<std::uint64_t> cached;
  std::uint64_t total = 0;
  for (auto c : needed) {
    if (const vid_t* r = g_.resident_chunk(c)) {
      ptr_[c] = r;
      continue;
    }
    cached.push_back(c);
    total += chunks[c].edges * sizeof(vid_t);
  }
  if (total > 0 && (cache_.capacity() == 0 || total > cache_.capacity())) {
    std::fill(ptr_.begin(), ptr_.end(), nullptr);
    return false;
  }
  std::vector<std::uint64_t> missing;
  for (auto c : cached)
    if (!cache_.find(c)) missing.push_back(c);
  // evict chunks not needed now, least recently used first
  std::uint64_t add = 0;
  for (auto c : missing) add += chunks[c].edges * sizeof(vid_t);
  cache_.evict_for(add, [&](std::uint64_t c) { return in(cached, c); });
  if (!missing.empty()) {
    auto bufs = decompress(missing, pool_, unit);
    adopt(missing, bufs);
  }
  for (auto c : cached) ptr_[c] = (*cache_.find(c))->data();
  return true;
}

const vid_t* ChunkReader::row_pinned(std::uint64_t r, std::uint64_t& deg, std::vector<vid_t>& tmp,
                                     std::uint64_t* hint) const {
  const eid_t* off = g_.offsets();
  const eid_t s = off[r], e = off[r + 1];
  deg = e - s;
  if (deg == 0) return nullptr;
  const auto& chunks = g_.chunks();
  const std::uint64_t nc = first_edges_.size();
  std::uint64_t c0;
  if (hint && *hint < nc && first_edges_[*hint] <= s) {
    c0 = *hint;
    while (c0 + 1 < nc && first_edges_[c0 + 1] <= s) ++c0;
  } else {
    c0 = chunk_of(s);
  }
  if (hint) *hint = c0;
  if (c0 + 1 == nc || e <= first_edges_[c0 + 1]) return ptr_[c0] + (s - chunks[c0].first_edge);
  const std::uint64_t c1 = chunk_of(e - 1);
  tmp.resize(deg);
  std::uint64_t w = 0;
  for (std::uint64_t c = c0; c <= c1; ++c) {
    const eid_t cs = std::max(s, chunks[c].first_edge);
    const eid_t ce = std::min(e, chunks[c].first_edge + chunks[c].edges);
    std::memcpy(tmp.data() + w, ptr_[c] + (cs - chunks[c].first_edge), (ce - cs) * sizeof(vid_t));
    w += ce - cs;
  }
  return tmp.data();
}

std::vector<ChunkBuffer> ChunkReader::decompress(const std::vector<std::uint64_t>& chunks,
                                                 ThreadPool& pool, std::int64_t unit) {
  const auto& all = g_.chunks();
  std::vector<ChunkBuffer> bufs(chunks.size());
  std::vector<std::size_t> todo;  // (resident chunks keep a null buffer)
  std::uint64_t comp = 0, raw = 0;
  for (std::size_t x = 0; x < chunks.size(); ++x) {
    if (g_.resident_chunk(chunks[x])) continue;
    todo.push_back(x);
    comp += all[chunks[x]].compressed_size;
    raw += all[chunks[x]].edges * sizeof(vid_t);
  }
  if (todo.empty()) return bufs;
  const double t0 = now_s();
  pool.run(todo.size(), [&](std::size_t t) {
    const std::size_t x = todo[t];
    bufs[x] = std::make_shared<ChunkColumns>(all[chunks[x]].edges);
    g_.read_chunk(chunks[x], bufs[x]->data());
  });
  const double t1 = now_s();
  rec_.span("read", unit, t0, t0, comp);
  rec_.span("decompress", unit, t0, t1, raw);
  return bufs;
}

void ChunkReader::adopt(const std::vector<std::uint64_t>& chunks, std::vector<ChunkBuffer>& bufs) {
  TS_CHECK(chunks.size() == bufs.size(), "adopt: a buffer per chunk");
  for (std::size_t x = 0; x < chunks.size(); ++x) {
    if (!bufs[x]) continue;  // resident: used in place
    const std::uint64_t b = bufs[x]->size() * sizeof(vid_t);
    cache_.insert(chunks[x], std::move(bufs[x]), b);
  }
}

bool ChunkReader::room_for(const std::vector<std::uint64_t>& now,
                           const std::vector<std::uint64_t>& next,
                           std::vector<std::uint64_t>& missing) {
  missing.clear();
  std::uint64_t add = 0;
  for (auto c : next)
    if (!cache_.contains(c) && !g_.resident_chunk(c)) {
      missing.push_back(c);
      add += g_.chunks()[c].edges * sizeof(vid_t);
    }
  return cache_.evict_for(add, [&](std::uint64_t c) { return in(now, c) || in(next, c); });
}

void ChunkReader::drop_cache() {
  cache_.clear();
  batch_.clear();
  for (auto& b : bufs_) b.reset();
}

void ChunkReader::read_range(eid_t e0, eid_t e1, vid_t* out, std::int64_t unit) {
  if (e0 >= e1) return;
  const auto& chunks = g_.chunks();
  const std::uint64_t c0 = chunk_of(e0), c1 = chunk_of(e1 - 1);
  const double t0 = now_s();
  std::uint64_t comp = 0, raw = 0;
  for (std::uint64_t c = c0; c <= c1; ++c) {
    comp += chunks[c].compressed_size;
    raw += chunks[c].edges * sizeof(vid_t);
  }
  pool_.run(c1 - c0 + 1, [&](std::size_t t) {
    const std::uint64_t c = c0 + t;
    const auto& ch = chunks[c];
    if (const vid_t* r = g_.resident_chunk(c)) {
      const eid_t cs = std::max(e0, ch.first_edge), ce = std::min(e1, ch.first_edge + ch.edges);
      std::memcpy(out + (cs - e0), r + (cs - ch.first_edge), (ce - cs) * sizeof(vid_t));
    } else if (ch.first_edge >= e0 && ch.first_edge + ch.edges <= e1) {
      g_.read_chunk(c, out + (ch.first_edge - e0));
    } else {
      std::vector<vid_t> b(ch.edges);
      g_.read_chunk(c, b.data());
      const eid_t cs = std::max(e0, ch.first_edge), ce = std::min(e1, ch.first_edge + ch.edges);
      std::memcpy(out + (cs - e0), b.data() + (cs - ch.first_edge), (ce - cs) * sizeof(vid_t));
    }
  });
  const double t1 = now_s();
  rec_.span("read", unit, t0, t0, comp);
  rec_.span("decompress", unit, t0, t1, raw);
}

const vid_t* ChunkReader::slot(std::uint64_t c) {
  if (const vid_t* r = g_.resident_chunk(c)) return r;
  for (std::size_t x = 0; x < batch_.size(); ++x)
    if (batch_[x] == c && bufs_[x]) return bufs_[x]->data();
  load_from(c);
  return bufs_[0] ? bufs_[0]->data() : g_.resident_chunk(c);  // (resident since the check)
}

// Loads the window of needed chunks starting at c: from the cache when there, the rest
// decompressed in parallel (and cached, least recently used evicted, within the capacity).
void ChunkReader::load_from(std::uint64_t c) {
  auto it = std::lower_bound(needed_.begin(), needed_.end(), c);
  TS_CHECK(it != needed_.end() && *it == c, "a row's chunk was not planned for");
  const std::size_t pos = static_cast<std::size_t>(it - needed_.begin());
  const std::size_t cnt = std::min<std::size_t>(window_, needed_.size() - pos);
  batch_.assign(needed_.begin() + pos, needed_.begin() + pos + cnt);
  std::vector<std::size_t> missing;
  for (std::size_t t = 0; t < cnt; ++t) {
    if (const auto* hit = cache_.find(batch_[t]))
      bufs_[t] = *hit;
    else if (!g_.resident_chunk(batch_[t]))
      missing.push_back(t);
    else
      bufs_[t].reset();
  }
  if (missing.empty()) return;
  // The window's previous chunks go before the new ones are decompressed (those in the cache
  // stay there), so the window never holds twice its chunks.
  for (auto t : missing) bufs_[t].reset();
  std::vector<std::uint64_t> ids;
  for (auto t : missing) ids.push_back(batch_[t]);
  auto got = decompress(ids, pool_, unit_);
  for (std::size_t x = 0; x < missing.size(); ++x) bufs_[missing[x]] = std::move(got[x]);
  if (cache_.capacity() == 0) return;
  for (auto t : missing) {
    if (!bufs_[t]) continue;  // (became resident meanwhile: used in place)
    const std::uint64_t b = bufs_[t]->size() * sizeof(vid_t);
    if (b > cache_.capacity()) continue;
    cache_.evict_for(b, [](std::uint64_t) { return false; });
    cache_.insert(batch_[t], bufs_[t], b);
  }
}

}  // namespace tristream::stream
