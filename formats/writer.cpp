// writer.cpp — tcsr::Writer and tcsr::write_file: streams rows into chunks, compresses a batch of
// chunks in parallel while writing their frames in order (chunk_writer.hpp) into a temporary
// file beside the target; the file's end (its sections, the header, fsync and rename) is
// writer_sections.cpp's.
//
// File order: header (written last, at offset 0) | adjacency frames | zero padding to 8 |
// row offsets | chunk index | permutation [| names, version 2] [| zero padding to 8 | census,
// version 3]. See FORMAT.md.
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_estimateCCtxSize_usingCParams
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "chunk_writer.hpp"
#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "layout.hpp"
#include "planes.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "writer_impl.hpp"

namespace tristream::tcsr {
namespace {

using namespace detail;

// Raw bytes of chunks buffered before a batch is compressed (at least two chunks per thread:
// the frames are written in order, and with one per thread every worker waits for the slowest
// chunk before it); as many frames are held at most while a run is compressed where it lies.
constexpr std::uint64_t kBatchBytes = 64ull << 20;
constexpr std::uint64_t kMaxBatchChunks = 4096;

// A worker's own memory for chunks of raw_chunk bytes at `level`: its compression context and
// its block of scratch for byte planes (planes.hpp).
std::uint64_t cctx_bytes(int level, std::uint64_t raw_chunk) {
  return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, raw_chunk, 0)) +
         std::min<std::uint64_t>(kPlaneScratchBytes, raw_chunk);
}

std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace

std::uint64_t writer_floor_bytes(std::uint64_t chunk_bytes, int zstd_level) {
  const std::uint64_t raw_chunk =
      std::max<std::uint64_t>(chunk_bytes / sizeof(vid_t), 1) * sizeof(vid_t);
  return raw_chunk + ZSTD_compressBound(raw_chunk) + cctx_bytes(zstd_level, raw_chunk);
}

void Writer::Impl::flush(bool final) {
  const std::uint64_t count =
      final ? (pending.size() + chunk_edges - 1) / chunk_edges : pending.size() / chunk_edges;
  if (count == 0) return;
  std::vector<ChunkJob> jobs(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t begin = i * chunk_edges;
    jobs[i].ids = jobs[i].own = pending.data() + begin;
    jobs[i].first_edge = pending_first + begin;
    jobs[i].edges = std::min<std::uint64_t>(chunk_edges, pending.size() - begin);
  }
  write_jobs(jobs);
  const std::uint64_t used = std::min<std::uint64_t>(pending.size(), count * chunk_edges);
  pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(used));
  pending_first += used;
}

void Writer::Impl::check_row(std::uint64_t row, const vid_t* cols, std::uint64_t count) const {
  if (count > 0 && cols == nullptr) fail("append_row: row " + std::to_string(row) + ": null ids");
  for (std::uint64_t i = 0; i < count; ++i) {
    const vid_t c = cols[i];
    if (c >= n)
      fail("row " + std::to_string(row) + ": id " + std::to_string(c) +
           " is >= n = " + std::to_string(n));
    if (c <= row)
      fail("row " + std::to_string(row) + ": id " + std::to_string(c) +
           " is not above its row (the graph must be oriented low -> high)");
    if (i > 0 && c <= cols[i - 1])
      fail("row " + std::to_string(row) + ": ids not strictly ascending at position " +
           std::to_string(i));
  }
}

bool Writer::Impl::row_ok(std::uint64_t row, const vid_t* cols, std::uint64_t count) const {
  if (count == 0) return true;
  if (cols == nullptr) return false;
  unsigned bad = (cols[0] <= row) | (cols[count - 1] >= n);
  for (std::uint64_t i = 1; i < count; ++i) bad |= cols[i] <= cols[i - 1];
  return bad == 0;
}

void Writer::Impl::take_ids(const vid_t* cols, std::uint64_t count) {
  if (count_in_degrees) {
    if (in_degree.size() != n)
      in_degree.assign(n, 0);  // (at the first row: none after set_max_degree)
    for (std::uint64_t i = 0; i < count; ++i) ++in_degree[cols[i]];
  }
  const std::uint64_t capacity = batch_chunks * chunk_edges;
  if (!in_place || pending.size() + count < capacity) {
    while (count > 0) {
      const std::uint64_t take = std::min<std::uint64_t>(count, capacity - pending.size());
      pending.insert(pending.end(), cols, cols + take);
      cols += take;
      count -= take;
      if (pending.size() == capacity) flush(false);
    }
    return;
  }
  const std::uint64_t top = (chunk_edges - pending.size() % chunk_edges) % chunk_edges;
  pending.insert(pending.end(), cols, cols + top);
  cols += top;
  count -= top;
  std::vector<ChunkJob> jobs;
  eid_t e = pending_first;
  for (std::uint64_t at = 0; at < pending.size(); at += chunk_edges, e += chunk_edges)
    jobs.push_back({pending.data() + at, pending.data() + at, e, chunk_edges});
  for (; count >= chunk_edges; cols += chunk_edges, count -= chunk_edges, e += chunk_edges)
    jobs.push_back({cols, nullptr, e, chunk_edges});
  write_jobs(jobs);
  pending.assign(cols, cols + count);
  pending_first = e;
}

void Writer::Impl::write_jobs(std::vector<ChunkJob>& jobs) {
  cw->file_pos = file_pos;
  cw->write(jobs, offsets, *pool, fd, tmp, batch_chunks);
  file_pos = cw->file_pos;
  jobs.clear();
}

void Writer::Impl::append_row(const vid_t* cols, std::uint64_t count) {
  const std::uint64_t row = offsets.size() - 1;
  if (row >= n) fail("append_row: all " + std::to_string(n) + " rows were already appended");
  check_row(row, cols, count);
  offsets.push_back(offsets.back() + count);
  max_out_degree = std::max(max_out_degree, count);
  take_ids(cols, count);
}

void Writer::Impl::append_rows(const vid_t* cols, const eid_t* row_offsets, std::uint64_t rows) {
  const std::uint64_t row0 = offsets.size() - 1;
  if (rows > n - row0)
    fail("append_rows: " + std::to_string(rows) + " rows after " + std::to_string(row0) + " of " +
         std::to_string(n));
  // 1. Pieces of about equal rows plus edges (rows of any lengths), at most 8 per thread, on the
  //    pool: each checks its rows (row_ok; check_row only for a row that fails it), writes their
  //    offsets (grown without a zero-fill, their pages first touched here) and finds its longest
  //    row.
  const eid_t base = offsets.back(), first = row_offsets[0];
  const std::uint64_t edges = row_offsets[rows] - first;
  const std::uint64_t pieces = std::min<std::uint64_t>(rows, 8 * std::uint64_t{threads});
  std::vector<std::uint64_t> cut(pieces + 1, rows), longest(pieces, 0);
  cut[0] = 0;
  for (std::uint64_t p = 1; p < pieces; ++p) {  // the first k with k + edges before k >= target
    const std::uint64_t target = (rows + edges) * p / pieces;
    std::uint64_t lo = cut[p - 1], hi = rows;
    while (lo < hi) {
      const std::uint64_t k = lo + (hi - lo) / 2;
      if (k + (row_offsets[k] - first) < target)
        lo = k + 1;
      else
        hi = k;
    }
    cut[p] = lo;
  }
  offsets.resize(row0 + 1 + rows);
  eid_t* const out = offsets.data() + row0 + 1;
  std::atomic<std::uint64_t> bad{rows};
  pool->for_each_item(pieces, [&](std::size_t p, unsigned) {
    std::uint64_t top = 0;
    for (std::uint64_t k = cut[p]; k < cut[p + 1] && k < bad.load(std::memory_order_relaxed); ++k) {
      const std::uint64_t count = row_offsets[k + 1] - row_offsets[k];
      const vid_t* const row = cols + (row_offsets[k] - first);
      try {
        if (!row_ok(row0 + k, row, count)) check_row(row0 + k, row, count);
      } catch (const Error&) {
        std::uint64_t seen = bad.load();
        while (k < seen && !bad.compare_exchange_weak(seen, k)) {
        }
        return;
      }
      out[k] = base + (row_offsets[k + 1] - first);
      top = std::max(top, count);
    }
    longest[p] = top;
  });
  // 2. The first bad row checked alone, for its message (the offsets as they were).
  if (const std::uint64_t k = bad.load(); k < rows) {
    offsets.resize(row0 + 1);
    check_row(row0 + k, cols + (row_offsets[k] - first), row_offsets[k + 1] - row_offsets[k]);
  }
  for (std::uint64_t top : longest) max_out_degree = std::max(max_out_degree, top);
  // 3. The ids as one run.
  take_ids(cols, edges);
}

Writer::Writer(const std::string& path, std::uint64_t n, const WriteOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.path = path;
  if (n > kMaxVertices)
    throw Error(ErrorKind::Input, path + ": graph has " + std::to_string(n) +
                                      " vertices; at most 2^32-1 are supported");
  if (options.chunk_bytes < sizeof(vid_t))
    throw Error(ErrorKind::Usage, "chunk size must be at least " + std::to_string(sizeof(vid_t)) +
                                      " bytes (got " + std::to_string(options.chunk_bytes) + ")");
  w.n = n;
  w.options = options;
  w.threads = resolve_threads(options.threads);
  w.chunk_edges = options.chunk_bytes / sizeof(vid_t);
  const std::uint64_t raw_chunk = w.chunk_edges * sizeof(vid_t);
  const std::uint64_t default_batch = std::clamp<std::uint64_t>(
      kBatchBytes / raw_chunk, 2 * std::uint64_t{w.threads},
      std::max<std::uint64_t>(2 * std::uint64_t{w.threads}, kMaxBatchChunks));
  if (options.memory_bytes == 0) {
    w.batch_chunks = default_batch;
  } else {
    // 1. As many workers as the budget holds a chunk, its frame and a context for (at least
    //    one), 2. the rest of the budget as more chunks of the batch, up to the default batch.
    const std::uint64_t per_chunk = raw_chunk + ZSTD_compressBound(raw_chunk);
    const std::uint64_t ctx = cctx_bytes(options.zstd_level, raw_chunk);
    if (options.memory_bytes < per_chunk + ctx)
      throw Error(ErrorKind::Usage, "the .tcsr writer needs " + mib(per_chunk + ctx) +
                                        " for chunks of " + mib(raw_chunk) + "; " +
                                        mib(options.memory_bytes) + " given");
    w.threads = static_cast<unsigned>(
        std::clamp<std::uint64_t>(options.memory_bytes / (per_chunk + ctx), 1, w.threads));
    const std::uint64_t chunks = (options.memory_bytes - w.threads * ctx) / per_chunk;
    w.batch_chunks = std::clamp<std::uint64_t>(chunks, w.threads, default_batch);
    // 3. Runs read in place need a chunk buffer per worker: only when the budget holds those
    //    beside a batch of at least one chunk per worker (the batch then smaller by them).
    const std::uint64_t own = w.threads * (ctx + raw_chunk);
    w.in_place = options.memory_bytes >= own + w.threads * per_chunk;
    if (w.in_place)
      w.batch_chunks = std::clamp<std::uint64_t>((options.memory_bytes - own) / per_chunk,
                                                 w.threads, default_batch);
  }
  w.pool = std::make_unique<ThreadPool>(w.threads);
  w.pending.reserve(w.batch_chunks * w.chunk_edges);  // no growth past the batch
  w.offsets.reserve(n + 1);
  w.cw = std::make_unique<ChunkWriter>(w.threads, options, w.chunk_edges);
  TempFile t = create_temp_beside(path);  // exclusive, unpredictable name
  w.tmp = t.path;
  w.fd = t.fd;
  const unsigned char placeholder[kHeaderSize] = {};
  write_all(w.fd, placeholder, kHeaderSize, w.tmp);
}

Writer::~Writer() {
  if (!impl_) return;
  if (impl_->fd >= 0) ::close(impl_->fd);
  if (!impl_->finished) ::unlink(impl_->tmp.c_str());
}

void Writer::append_row(const vid_t* cols, std::uint64_t count) {
  Impl& w = *impl_;
  if (w.finished || w.failed || w.sections_written)
    w.fail("append_row after write_sections(), finish() or an error");
  try {
    w.append_row(cols, count);
  } catch (...) {
    w.failed = true;
    throw;
  }
}

void Writer::append_rows(const vid_t* cols, const eid_t* offsets, std::uint64_t rows) {
  Impl& w = *impl_;
  if (w.finished || w.failed || w.sections_written)
    w.fail("append_rows after write_sections(), finish() or an error");
  try {
    w.append_rows(cols, offsets, rows);
  } catch (...) {
    w.failed = true;
    throw;
  }
}

void Writer::set_permutation(std::vector<orig_id_t> perm) {
  Impl& w = *impl_;
  if (w.finished || w.failed || w.sections_written)
    w.fail("set_permutation after write_sections(), finish() or an error");
  if (perm.size() != w.n)
    w.fail("set_permutation: " + std::to_string(perm.size()) + " entries for " +
           std::to_string(w.n) + " vertices");
  w.perm = std::move(perm);
  w.perm_given = true;
}

void Writer::set_max_degree(std::uint64_t d) {
  impl_->max_degree_given = true;
  impl_->max_degree_given_value = d;
  if (impl_->offsets.size() == 1) {  // before the first row: skip counting in-degrees
    impl_->count_in_degrees = false;
    std::vector<vid_t>().swap(impl_->in_degree);
  }
}

void Writer::set_census(std::vector<unsigned char> payload) {
  Impl& w = *impl_;
  if (w.finished || w.failed) w.fail("set_census after finish() or after an error");
  if (payload.empty() || payload.size() > kMaxCensusBytes)
    w.fail("set_census: a payload of " + std::to_string(payload.size()) + " bytes");
  w.census = std::move(payload);
}

void Writer::set_names(Names names) {
  Impl& w = *impl_;
  if (w.finished || w.failed || w.sections_written)
    w.fail("set_names after write_sections(), finish() or an error");
  if (names.size() != w.n || names.offsets[0] != 0 || names.offsets.back() != names.bytes.size())
    w.fail("set_names: " + std::to_string(names.size()) + " names for " + std::to_string(w.n) +
           " vertices (or inconsistent offsets)");
  for (std::uint64_t k = 0; k < w.n; ++k)
    if (names.offsets[k + 1] <= names.offsets[k] ||
        names.offsets[k + 1] - names.offsets[k] > kMaxNameBytes)
      w.fail("set_names: name " + std::to_string(k) + " is empty or longer than 2^20 bytes");
  w.names = std::move(names);
  w.names_given = true;
}

void Writer::write_sections() {
  Impl& w = *impl_;
  if (w.finished || w.failed || w.sections_written)
    w.fail("write_sections() after finish(), twice or after an error");
  try {
    w.write_sections();
  } catch (...) {
    w.failed = true;
    throw;
  }
}

void Writer::finish() {
  Impl& w = *impl_;
  if (w.finished || w.failed) w.fail("finish() called twice or after an error");
  try {
    w.finish();
  } catch (...) {
    w.failed = true;
    throw;
  }
}

std::uint64_t Writer::adjacency_bytes() const {
  const std::vector<ChunkInfo>& c = impl_->cw->chunks;  // (the frames lie one after another)
  return c.empty() ? 0 : c.back().file_offset + c.back().compressed_size - kHeaderSize;
}

Writer::Busy Writer::busy() const {
  const ChunkWriter& c = *impl_->cw;
  Busy b;
  b.compress_s = static_cast<double>(c.compress_ns.load()) * 1e-9;
  b.write_s = static_cast<double>(c.write_ns.load()) * 1e-9;
  b.wait_s = static_cast<double>(c.wait_ns.load()) * 1e-9;
  return b;
}

void write_file(const std::string& path, const OrientedGraph& g, const WriteOptions& options) {
  const Csr& csr = g.csr;
  Writer w(path, csr.rows(), options);
  w.append_rows(csr.cols.data(), csr.offsets.data(), csr.rows());
  if (!g.perm.empty()) w.set_permutation(g.perm);
  w.finish();
}

}  // namespace tristream::tcsr
