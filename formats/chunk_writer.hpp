// chunk_writer.hpp — tcsr internals: compresses runs of adjacency chunks on a pool's workers
// and appends their frames to the file in chunk order as they finish: the worker that finishes
// the next chunk to write writes it and every finished one after it while the others go on
// compressing, so the writes overlap the compression instead of following it; a window of frame
// buffers bounds the memory instead of a barrier between batches. A chunk in the
// writer's own buffer is delta-coded in place; one in a caller's memory (read where it lies, no
// copy) into the worker's own buffer. The file's bytes depend only on the chunks, never on the
// thread count or the batches. Writeback of the frames is started as they are written
// (sync_file_range where available), so that the final fsync has little left to wait for.
#pragma once

#include <zstd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/no_init_allocator.hpp"
#include "common/thread_pool.hpp"
#include "common/write_behind.hpp"
#include "tristream/format.hpp"

namespace tristream::tcsr::detail {

// Throws Error(Internal) naming path, what failed and errno's text.
[[noreturn]] void sys_fail(const std::string& what, const std::string& path);
// Writes all of data at the file's current position; throws Error(Internal) naming path.
void write_all(int fd, const void* data, std::size_t size, const std::string& path);
// Writes all of data at `offset` (the file's position unchanged); throws Error(Internal) naming
// path (a write of nothing: the disk full).
void pwrite_all(int fd, const void* data, std::size_t size, std::uint64_t offset,
                const std::string& path);
// Throws Error(Internal) for a zstd error code.
void check_zstd(std::size_t code, const char* what);

// The rows' offsets as the writer keeps them (n + 1 of them at most): grown by resize() without
// a zero-fill, then filled on the pool's threads.
using RowOffsets = std::vector<eid_t, NoInitAllocator<eid_t>>;

// One chunk: edges [first_edge, first_edge + edges) of the graph, their ids at `ids`; `own` is
// the same memory when it is the writer's and may be overwritten, else null.
struct ChunkJob {
  const vid_t* ids = nullptr;
  vid_t* own = nullptr;
  eid_t first_edge = 0;
  std::uint64_t edges = 0;
};

class ChunkWriter {
 public:
  // `threads` compression contexts at options.zstd_level, as many buffers of chunk_edges ids
  // (made when first needed: delta coding, or byte planes of ids in a caller's memory), and
  // with options.planes as many scratch blocks (planes.hpp).
  ChunkWriter(unsigned threads, const WriteOptions& options, std::uint64_t chunk_edges);
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Compresses the jobs on the pool (at most `threads` workers) and appends their frames at
  // file_pos, in order, with at most `window` frames held at once (compressed and not yet
  // written): a worker waits for a frame's buffer rather than for the others' chunks, so any
  // number of jobs flows without a barrier. SIGINT/SIGTERM (common/interrupt.hpp) stops it
  // between chunks with Error(Interrupted). Preconditions: the jobs are consecutive chunks of at
  // most chunk_edges edges, offsets holds the row offsets of every row with an edge in them.
  void write(const std::vector<ChunkJob>& jobs, const RowOffsets& offsets, ThreadPool& pool, int fd,
             const std::string& path, std::size_t window);

  std::uint64_t file_pos = 0;  // where the next frame goes (set by the owner first)
  // Nanoseconds the workers spent, summed: compressing, writing frames, waiting for a buffer.
  std::atomic<std::uint64_t> compress_ns{0}, write_ns{0}, wait_ns{0};
  std::vector<ChunkInfo> chunks;
  std::vector<std::uint64_t> frame_checksums;

 private:
  // Steps 1 to 3 for one job: its ids delta-coded (with options.delta), as byte planes (with
  // options.planes), compressed into frame (bound bytes), its info and the frame's checksum
  // filled in.
  void compress_one(const ChunkJob& job, const RowOffsets& offsets, unsigned worker,
                    unsigned char* frame, std::size_t bound, ChunkInfo& c, std::uint64_t& sum);

  struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  bool delta_, planes_;
  std::uint64_t chunk_edges_;
  std::vector<std::unique_ptr<ZSTD_CCtx, CCtxDeleter>> cctx_;  // one per worker
  std::vector<std::vector<vid_t>> coded_;  // one per worker (delta, planes of a caller's ids)
  std::vector<std::unique_ptr<unsigned char[]>> scratch_;  // one per worker (planes)
  std::vector<std::unique_ptr<unsigned char[]>> frames_;   // the window's ring of frames
  std::optional<WriteBehind> behind_;  // the frames' writeback (made at the first write)
};

}  // namespace tristream::tcsr::detail
