// chunk_writer.cpp — compressing chunks in parallel, writing their frames in order
// (chunk_writer.hpp).
#include "chunk_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "common/host_memory_policy.hpp"
#include "common/interrupt.hpp"
#include "planes.hpp"
#include "tristream/error.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t nanos_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

}  // namespace

void write_all(int fd, const void* data, std::size_t size, const std::string& path) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::size_t>(size, 1u << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      throw Error(ErrorKind::Internal, path + ": write failed: " + std::strerror(e));
    }
    p += w;
    size -= static_cast<std::size_t>(w);
  }
}

[[noreturn]] void sys_fail(const std::string& what, const std::string& path) {
  const int e = errno;
  throw Error(ErrorKind::Internal, path + ": " + what + ": " + std::strerror(e));
}

void pwrite_all(int fd, const void* data, std::size_t size, std::uint64_t offset,
                const std::string& path) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t w =
        ::pwrite(fd, p, std::min<std::size_t>(size, 1u << 30), static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : ENOSPC;
      throw Error(ErrorKind::Internal, path + ": write failed: " + std::strerror(e));
    }
    p += w;
    size -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
}

void check_zstd(std::size_t code, const char* what) {
  if (ZSTD_isError(code))
    throw Error(ErrorKind::Internal, std::string("zstd ") + what + ": " + ZSTD_getErrorName(code));
}

ChunkWriter::ChunkWriter(unsigned threads, const WriteOptions& options, std::uint64_t chunk_edges)
    : delta_(options.delta), planes_(options.planes), chunk_edges_(chunk_edges) {
  for (unsigned t = 0; t < threads; ++t) {
    cctx_.emplace_back(ZSTD_createCCtx());
    if (!cctx_.back())
      throw Error(ErrorKind::Internal, "zstd: cannot create a compression context");
    check_zstd(
        ZSTD_CCtx_setParameter(cctx_.back().get(), ZSTD_c_compressionLevel, options.zstd_level),
        "compression level");
    check_zstd(ZSTD_CCtx_setParameter(cctx_.back().get(), ZSTD_c_checksumFlag, 1), "checksum flag");
    check_zstd(ZSTD_CCtx_setParameter(cctx_.back().get(), ZSTD_c_contentSizeFlag, 1),
               "content size flag");
  }
  coded_.resize(threads);
  if (planes_) {
    const std::size_t scratch =
        std::min<std::size_t>(kPlaneScratchBytes, chunk_edges * sizeof(vid_t));
    for (unsigned t = 0; t < threads; ++t) scratch_.emplace_back(new unsigned char[scratch]);
  }
}

ChunkWriter::~ChunkWriter() = default;

void ChunkWriter::compress_one(const ChunkJob& job, const RowOffsets& offsets, unsigned worker,
                               unsigned char* frame, std::size_t bound, ChunkInfo& c,
                               std::uint64_t& sum) {
  auto row_of = [&](eid_t e) {
    return static_cast<std::uint64_t>(std::upper_bound(offsets.begin(), offsets.end(), e) -
                                      offsets.begin()) -
           1;
  };
  // 1. The chunk's rows, its ids delta-coded: the first id of a row (or of the chunk) as
  //    col - row, then differences within the row.
  const eid_t e0 = job.first_edge, e1 = e0 + job.edges;
  c.first_edge = e0;
  c.edges = job.edges;
  c.first_row = row_of(e0);
  c.rows = row_of(e1 - 1) - c.first_row + 1;
  c.raw_size = job.edges * sizeof(vid_t);
  const vid_t* src = job.ids;
  vid_t* coded_ids = nullptr;  // the chunk's ids where this worker may overwrite them
  if (delta_ && job.own) {
    // In place, from the chunk's end, so each difference still sees its original left
    // neighbour (the raw ids are not needed once the chunk is compressed).
    vid_t* ids = job.own;
    coded_ids = ids;
    std::uint64_t r = c.first_row + c.rows - 1;
    for (eid_t e = e1; e-- > e0;) {
      while (offsets[r] > e) --r;
      const vid_t col = ids[e - e0];
      ids[e - e0] =
          (e == e0 || e == offsets[r]) ? col - static_cast<vid_t>(r) : col - ids[e - e0 - 1];
    }
  } else if (delta_) {
    std::vector<vid_t>& coded = coded_[worker];
    if (coded.size() < job.edges) coded.resize(std::max<std::uint64_t>(job.edges, chunk_edges_));
    std::uint64_t r = c.first_row;
    eid_t row_end = offsets[r + 1];
    for (eid_t e = e0; e < e1; ++e) {
      const bool first = e == e0 || e == offsets[r];
      const vid_t col = src[e - e0];
      coded[e - e0] = first ? col - static_cast<vid_t>(r) : col - src[e - e0 - 1];
      if (e + 1 == row_end && e + 1 < e1) {
        do ++r;
        while (offsets[r + 1] == offsets[r]);  // rows without edges
        row_end = offsets[r + 1];
      }
    }
    src = coded_ids = coded.data();
  }
  // 2. With planes: the ids as byte planes, in place where they may be overwritten (else into
  //    the worker's buffer).
  if (planes_) {
    if (!coded_ids) coded_ids = job.own;
    if (!coded_ids) {
      std::vector<vid_t>& coded = coded_[worker];
      if (coded.size() < job.edges) coded.resize(std::max<std::uint64_t>(job.edges, chunk_edges_));
      coded_ids = coded.data();
    }
    ids_to_planes(src, coded_ids, job.edges, scratch_[worker].get());
    src = coded_ids;
  }
  // 3. The frame and its checksum.
  const std::size_t size = ZSTD_compress2(cctx_[worker].get(), frame, bound, src, c.raw_size);
  check_zstd(size, "compression failed");
  c.compressed_size = size;
  sum = xxh64(frame, size);
}

void ChunkWriter::write(const std::vector<ChunkJob>& jobs, const RowOffsets& offsets,
                        ThreadPool& pool, int fd, const std::string& path, std::size_t window) {
  const std::size_t count = jobs.size();
  if (count == 0) return;
  // The frames' buffers, a ring of `window` kept from call to call and never zero-filled (only
  // the bytes zstd writes are touched): chunk i compresses into frames_[i % W] once chunk i - W
  // is written.
  const std::size_t W = std::clamp<std::size_t>(window, 1, count);
  const std::size_t bound = ZSTD_compressBound(chunk_edges_ * sizeof(vid_t));
  while (frames_.size() < W) frames_.emplace_back(new unsigned char[bound]);
  std::vector<ChunkInfo> infos(count);
  std::vector<std::uint64_t> sums(count);
  // The frames finished and not yet written; `next` is the first not written, `writing` whether
  // a worker is writing now (only one at a time, in order); `failed` once a worker has thrown
  // (the workers waiting for a frame's buffer then give up).
  std::mutex mu;
  std::condition_variable written;
  std::vector<char> done(count, 0);
  std::size_t next = 0;
  bool writing = false, failed = false;
  pool.for_each_item(count, [&](std::size_t i, unsigned worker) {
    // 0. The frame's buffer free: chunk i - W written. (The items come in order, so the worker
    //    with chunk `next` never waits here: the chunks are written without a barrier.)
    if (i >= W) {
      const auto t0 = Clock::now();
      std::unique_lock<std::mutex> lk(mu);
      written.wait(lk, [&] { return next + W > i || failed; });
      wait_ns += nanos_since(t0);
      if (failed) return;
    }
    try {
      throw_if_interrupted();  // (SIGINT/SIGTERM: between chunks, however long the run)
      const auto t0 = Clock::now();
      compress_one(jobs[i], offsets, worker, frames_[i % W].get(), bound, infos[i], sums[i]);
      compress_ns += nanos_since(t0);
      // 4. Written in order: the worker that finds the next frame finished writes it and every
      //    finished one after it, outside the lock.
      std::unique_lock<std::mutex> lk(mu);
      done[i] = 1;
      if (writing) return;
      writing = true;
      while (next < count && done[next]) {
        const std::size_t k = next;
        lk.unlock();
        const auto w0 = Clock::now();
        infos[k].file_offset = file_pos;
        write_all(fd, frames_[k % W].get(), infos[k].compressed_size, path);
        file_pos += infos[k].compressed_size;
        // (their writeback started at once; in a tight memory group they leave the page cache:
        // WriteBehind)
        if (!behind_) behind_.emplace(fd, WriteBehind::Use::Output, cgroup_memory_limit());
        behind_->wrote(infos[k].compressed_size);
        write_ns += nanos_since(w0);
        lk.lock();
        ++next;
        written.notify_all();
      }
      writing = false;
    } catch (...) {
      {
        const std::lock_guard<std::mutex> lk(mu);
        failed = true;
      }
      written.notify_all();
      throw;
    }
  });
  TS_CHECK(next == count, "chunk frames left unwritten");
  for (std::size_t i = 0; i < count; ++i) {
    chunks.push_back(infos[i]);
    frame_checksums.push_back(sums[i]);
  }
}

}  // namespace tristream::tcsr::detail
