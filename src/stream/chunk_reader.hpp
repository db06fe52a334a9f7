// stream/chunk_reader.hpp — rows of the graph from its compressed chunks, with a chunk cache.
//
// Two ways to read rows:
//  - a sequential walk: begin(needed chunks) then row(r) for rows in ascending order; the chunks
//    are decompressed a window at a time (in parallel on the pool), cached when they fit;
//  - pinned: pin(needed) makes every needed chunk resident in the cache (false when they do not
//    fit it); then row_pinned(r) may be called from several threads.
// The cache (common/lru_cache.hpp) holds decompressed chunks up to its capacity in bytes; chunks
// in use are never evicted. decompress()/adopt()/room_for() let the preload decompress the next
// batch on other threads while the current one is pinned. Every decompression records "read" and
// "decompress" spans. A corrupt chunk throws the source's Error(Input). Chunks the source holds
// decoded already (GraphSource::resident_chunk: the in-core image) are read in place: never
// copied, cached or counted against the cache, and decompress() leaves their buffers null.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/lru_cache.hpp"
#include "stream/recorder.hpp"
#include "tristream/host_memory.hpp"
#include "tristream/plan.hpp"

namespace tristream {
class ThreadPool;
}

namespace tristream::stream {

// A decompressed chunk's columns: allocated without zeroing (the decompressor writes them whole
// right after).
using ChunkColumns = std::vector<vid_t, OverwrittenAllocator<vid_t>>;
using ChunkBuffer = std::shared_ptr<ChunkColumns>;

class ChunkReader {
 public:
  // window: chunks decompressed at once by the sequential walk; cache_bytes: the cache's
  // capacity. g, pool and rec outlive the reader.
  ChunkReader(const GraphSource& g, ThreadPool& pool, std::uint32_t window,
              std::uint64_t cache_bytes, Recorder& rec);

  const GraphSource& graph() const { return g_; }
  ThreadPool& pool() { return pool_; }
  // The chunk holding edge e.
  std::uint64_t chunk_of(eid_t e) const;
  // Adds the chunks of row r to a needed list (rows in ascending order; the list stays sorted).
  void need_row(std::uint64_t r, std::vector<std::uint64_t>& needed) const;
  // Bytes of the chunks `needed`, decompressed.
  std::uint64_t chunk_bytes(const std::vector<std::uint64_t>& needed) const;

  // ---- the sequential walk ----
  // Starts a walk over rows whose chunks are `needed` (sorted, unique).
  void begin(std::vector<std::uint64_t> needed, std::int64_t unit);
  // The columns of row r (valid until the next call); deg receives the out-degree.
  const vid_t* row(std::uint64_t r, std::uint64_t& deg);

  // ---- pinned rows ----
  // Makes every chunk of `needed` (sorted) resident, decompressing the missing ones in parallel,
  // when those not resident in the source fit the cache; false (nothing pinned) when they do
  // not.
  bool pin(const std::vector<std::uint64_t>& needed, std::int64_t unit);
  // The columns of row r from pinned chunks (thread-safe); rows across chunks go through tmp.
  // *hint (optional, per thread) is the chunk of the previous row asked for: rows asked for in
  // ascending order then find their chunk by stepping forward instead of a binary search.
  const vid_t* row_pinned(std::uint64_t r, std::uint64_t& deg, std::vector<vid_t>& tmp,
                          std::uint64_t* hint = nullptr) const;

  // ---- the preload's batches ----
  // Decompresses `chunks` into new buffers on `pool`, recording the spans. Touches no cache
  // state, so another thread may call it while rows are read from pinned chunks.
  std::vector<ChunkBuffer> decompress(const std::vector<std::uint64_t>& chunks, ThreadPool& pool,
                                      std::int64_t unit);
  // Adds decompressed chunks to the cache (most recently used); the caller keeps the cache
  // within its capacity (room_for).
  void adopt(const std::vector<std::uint64_t>& chunks, std::vector<ChunkBuffer>& bufs);
  // Makes room for the chunks `next` beside the chunks `now` (both sorted): evicts the least
  // recently used chunks in neither until next's missing chunks fit the capacity. Sets `missing`
  // to next's chunks not cached; false when they do not fit even then.
  bool room_for(const std::vector<std::uint64_t>& now, const std::vector<std::uint64_t>& next,
                std::vector<std::uint64_t>& missing);

  // ---- the cache ----
  std::uint64_t cache_cap() const { return cache_.capacity(); }
  // Sets the cache's capacity (the preload borrows the host budget's spare room).
  void set_cache_cap(std::uint64_t bytes) { cache_.set_capacity(bytes); }
  // The most bytes the cache held at once.
  std::uint64_t peak_bytes() const { return cache_.peak(); }
  // Drops every cached chunk (after the block store has been filled).
  void drop_cache();

  // Decompresses edges [e0, e1) straight into out (the in-core unit's columns).
  void read_range(eid_t e0, eid_t e1, vid_t* out, std::int64_t unit);

 private:
  const vid_t* slot(std::uint64_t c);
  void load_from(std::uint64_t c);

  const GraphSource& g_;
  ThreadPool& pool_;
  std::uint32_t window_;
  LruCache<std::uint64_t, ChunkBuffer> cache_;
  Recorder& rec_;
  std::vector<ChunkBuffer> bufs_;  // the walk's window
  std::vector<const vid_t*> ptr_;  // pinned chunks
  std::vector<std::uint64_t> batch_, needed_, first_edges_;
  std::vector<vid_t> tmp_;
  std::int64_t unit_ = -1;
};

}  // namespace tristream::stream
