// writer.cpp — tcsr::Writer and tcsr::write_file: streams rows into chunks, compresses a batch of
// chunks in parallel while writing their frames in order (chunk_writer.hpp), writes a temporary
// file beside the target, fsyncs and renames it.
//
// File order: header (written last, at offset 0) | adjacency frames | zero padding to 8 |
// row offsets | chunk index | permutation [| names, version 2] [| zero padding to 8 | census,
// version 3]. See FORMAT.md.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_estimateCCtxSize_usingCParams
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <thread>

#include "chunk_writer.hpp"
#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "layout.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {
namespace {

using namespace detail;

// Raw bytes of chunks buffered before a batch is compressed (at least one chunk per thread); as
// many frames are held at most while a run is compressed where it lies.
constexpr std::uint64_t kBatchBytes = 64ull << 20;
constexpr std::uint64_t kMaxBatchChunks = 4096;

[[noreturn]] void sys_fail(const std::string& what, const std::string& path) {
  const int e = errno;
  throw Error(ErrorKind::Internal, path + ": " + what + ": " + std::strerror(e));
}

// A compression context's memory for chunks of raw_chunk bytes at `level`.
std::uint64_t cctx_bytes(int level, std::uint64_t raw_chunk) {
  return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, raw_chunk, 0));
}

std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::uint64_t writer_floor_bytes(std::uint64_t chunk_bytes, int zstd_level) {
  const std::uint64_t raw_chunk =
      std::max<std::uint64_t>(chunk_bytes / sizeof(vid_t), 1) * sizeof(vid_t);
  return raw_chunk + ZSTD_compressBound(raw_chunk) + cctx_bytes(zstd_level, raw_chunk);
}

struct Writer::Impl {
  std::string path;
  std::string tmp;
  int fd = -1;
  bool finished = false;
  bool failed = false;

  std::uint64_t n = 0;
  WriteOptions options;
  unsigned threads = 1;              // compressing workers (fewer than asked in a tight budget)
  std::unique_ptr<ThreadPool> pool;  // `threads` threads, for compressing a batch of chunks
  std::uint64_t chunk_edges = 0;
  std::uint64_t batch_chunks = 1;
  bool in_place = true;  // runs of a batch or more are compressed where they lie (take_ids)

  std::vector<eid_t> offsets{0};  // rows appended so far + 1
  std::vector<vid_t> in_degree;   // for the header's undirected maximum degree
  std::uint64_t max_out_degree = 0;
  bool max_degree_given = false;
  bool count_in_degrees = true;  // false once set_max_degree() came before the first row
  std::uint64_t max_degree_given_value = 0;
  std::vector<orig_id_t> perm;
  bool perm_given = false;
  Names names;
  bool names_given = false;
  std::vector<unsigned char> census;  // the census extension's payload (empty: none)

  std::vector<vid_t> pending;  // edges [pending_first, pending_first + pending.size())
  eid_t pending_first = 0;
  std::uint64_t file_pos = kHeaderSize;
  std::unique_ptr<ChunkWriter> cw;  // compresses and writes the frames; their index entries

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::Internal, "tcsr::Writer " + path + ": " + what);
  }

  std::uint64_t row_of(eid_t e) const {
    return static_cast<std::uint64_t>(std::upper_bound(offsets.begin(), offsets.end(), e) -
                                      offsets.begin()) -
           1;
  }

  // Compresses and writes the first `count` chunk-sized pieces of `pending` (the last may be
  // shorter when `final`).
  void flush(bool final) {
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

  // Throws for a row that breaks append_row's rules.
  void check_row(std::uint64_t row, const vid_t* cols, std::uint64_t count) const {
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

  // The ids of checked rows: counted for the header, then into the batch, which is compressed
  // whenever it fills. With in_place, a run that fills the batch is compressed where it lies: the
  // pending ids topped up to whole chunks, then the run's whole chunks read in place (no copy,
  // each delta-coded into its worker's own chunk buffer), the pending chunks first, all handed
  // to the chunk writer at once (its window of a batch of frames bounds the memory, with no
  // barrier between batches); the rest is kept.
  void take_ids(const vid_t* cols, std::uint64_t count) {
    if (count_in_degrees)
      for (std::uint64_t i = 0; i < count; ++i) ++in_degree[cols[i]];
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

  void write_jobs(std::vector<ChunkJob>& jobs) {
    cw->file_pos = file_pos;
    cw->write(jobs, offsets, *pool, fd, tmp, batch_chunks);
    file_pos = cw->file_pos;
    jobs.clear();
  }

  void append_row(const vid_t* cols, std::uint64_t count) {
    const std::uint64_t row = offsets.size() - 1;
    if (row >= n) fail("append_row: all " + std::to_string(n) + " rows were already appended");
    check_row(row, cols, count);
    offsets.push_back(offsets.back() + count);
    max_out_degree = std::max(max_out_degree, count);
    take_ids(cols, count);
  }

  // 1. The rows are checked on all threads (the first bad row is then checked alone for its
  //    message), 2. their offsets appended, 3. their ids taken as one run.
  void append_rows(const vid_t* cols, const eid_t* row_offsets, std::uint64_t rows) {
    const std::uint64_t row0 = offsets.size() - 1;
    if (rows > n - row0)
      fail("append_rows: " + std::to_string(rows) + " rows after " + std::to_string(row0) + " of " +
           std::to_string(n));
    std::atomic<std::uint64_t> bad{rows};
    pool->parallel_for(rows, 1 << 12, [&](std::uint64_t lo, std::uint64_t hi) {
      for (std::uint64_t k = lo; k < hi && k < bad.load(std::memory_order_relaxed); ++k) {
        try {
          check_row(row0 + k, cols + (row_offsets[k] - row_offsets[0]),
                    row_offsets[k + 1] - row_offsets[k]);
        } catch (const Error&) {
          std::uint64_t seen = bad.load();
          while (k < seen && !bad.compare_exchange_weak(seen, k)) {
          }
          return;
        }
      }
    });
    if (const std::uint64_t k = bad.load(); k < rows)
      check_row(row0 + k, cols + (row_offsets[k] - row_offsets[0]),
                row_offsets[k + 1] - row_offsets[k]);
    for (std::uint64_t k = 0; k < rows; ++k) {
      const std::uint64_t count = row_offsets[k + 1] - row_offsets[k];
      offsets.push_back(offsets.back() + count);
      max_out_degree = std::max(max_out_degree, count);
    }
    take_ids(cols, row_offsets[rows] - row_offsets[0]);
  }

  // The names section (after the permutation, which ends 8-byte aligned): n + 1 u64 offsets,
  // then the bytes. Names are indexed by original id, so the permutation must hold 0..n-1.
  void write_names() {
    std::vector<bool> seen(n);
    for (orig_id_t x : perm) {
      if (x >= n || seen[x]) fail("set_names: the permutation is not a permutation of 0..n-1");
      seen[x] = true;
    }
    const std::uint64_t offsets_bytes = names.offsets.size() * 8;
    std::string body(offsets_bytes + names.bytes.size(), '\0');
    std::memcpy(&body[0], names.offsets.data(), offsets_bytes);
    std::memcpy(&body[offsets_bytes], names.bytes.data(), names.bytes.size());
    section(4, kNames, file_pos, body.size(), xxh64(body.data(), body.size()));
    write_all(fd, body.data(), body.size(), tmp);
    file_pos += body.size();
  }

  // The sections' entries of the header, filled by write_sections.
  unsigned char header[kHeaderSize] = {};
  bool sections_written = false;
  std::uint64_t max_degree = 0;

  void section(std::size_t index, SectionKind kind, std::uint64_t offset, std::uint64_t size,
               std::uint64_t checksum) {
    unsigned char* e = header + kOffSectionTable + index * kSectionEntrySize;
    put_u32(e + kSecKind, kind);
    put_u64(e + kSecOffset, offset);
    put_u64(e + kSecSize, size);
    put_u64(e + kSecChecksum, checksum);
  }

  // Everything but the census and the header: the last chunk, then the row offsets, the chunk
  // index and the permutation (the two large ones checksummed and written on two threads at
  // their places) and the names; their writeback started.
  void write_sections() {
    const std::uint64_t rows = offsets.size() - 1;
    if (rows != n)
      fail("sections written after " + std::to_string(rows) + " of " + std::to_string(n) + " rows");
    flush(true);
    throw_if_interrupted();

    if (count_in_degrees) {
      for (std::uint64_t v = 0; v < n; ++v)
        max_degree =
            std::max<std::uint64_t>(max_degree, offsets[v + 1] - offsets[v] + in_degree[v]);
    } else {
      // Trusted from set_max_degree() (Reader::check() verifies it); it cannot be below the
      // largest out-degree.
      max_degree = max_degree_given_value;
      if (max_degree < max_out_degree)
        fail("set_max_degree(" + std::to_string(max_degree) + ") is below the largest out-degree " +
             std::to_string(max_out_degree));
      if (max_degree > (n > 0 ? n - 1 : 0))  // readers refuse such a header
        fail("set_max_degree(" + std::to_string(max_degree) +
             ") exceeds n - 1 for n = " + std::to_string(n));
    }
    if (count_in_degrees && max_degree_given && max_degree_given_value != max_degree)
      fail("set_max_degree(" + std::to_string(max_degree_given_value) +
           ") disagrees with the rows written (maximum degree " + std::to_string(max_degree) + ")");
    if (!perm_given) {
      perm.resize(n);
      std::iota(perm.begin(), perm.end(), orig_id_t{0});
    }

    // Adjacency: the frames written so far (each checked by its own index entry).
    section(2, kAdjacency, kHeaderSize, file_pos - kHeaderSize, 0);
    const unsigned char zeros[8] = {};
    const std::uint64_t pad = (8 - file_pos % 8) % 8;
    write_all(fd, zeros, pad, tmp);
    file_pos += pad;

    const std::vector<ChunkInfo>& chunks = cw->chunks;
    std::vector<unsigned char> index(chunks.size() * kChunkEntrySize);
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      unsigned char* e = index.data() + k * kChunkEntrySize;
      const ChunkInfo& c = chunks[k];
      put_u64(e + kChunkFirstRow, c.first_row);
      put_u64(e + kChunkFirstEdge, c.first_edge);
      put_u64(e + kChunkRows, c.rows);
      put_u64(e + kChunkEdges, c.edges);
      put_u64(e + kChunkFileOffset, c.file_offset);
      put_u64(e + kChunkCompressedSize, c.compressed_size);
      put_u64(e + kChunkRawSize, c.raw_size);
      put_u64(e + kChunkFrameChecksum, cw->frame_checksums[k]);
    }
    const std::uint64_t offsets_bytes = offsets.size() * sizeof(eid_t);
    const std::uint64_t perm_bytes = perm.size() * sizeof(orig_id_t);
    const std::uint64_t offsets_at = file_pos, index_at = offsets_at + offsets_bytes,
                        perm_at = index_at + index.size();
    std::uint64_t perm_checksum = 0;
    std::exception_ptr perm_error;
    std::thread perm_writer([&] {
      try {
        perm_checksum = xxh64(perm.data(), perm_bytes);
        pwrite_all(fd, perm.data(), perm_bytes, perm_at, tmp);
      } catch (...) {
        perm_error = std::current_exception();
      }
    });
    try {
      section(0, kRowOffsets, offsets_at, offsets_bytes, xxh64(offsets.data(), offsets_bytes));
      pwrite_all(fd, offsets.data(), offsets_bytes, offsets_at, tmp);
      section(1, kChunkIndex, index_at, index.size(), xxh64(index.data(), index.size()));
      pwrite_all(fd, index.data(), index.size(), index_at, tmp);
    } catch (...) {
      perm_writer.join();
      throw;
    }
    perm_writer.join();
    if (perm_error) std::rethrow_exception(perm_error);
    section(3, kPermutation, perm_at, perm_bytes, perm_checksum);
    file_pos = perm_at + perm_bytes;
    if (::lseek(fd, static_cast<off_t>(file_pos), SEEK_SET) < 0) sys_fail("seek failed", tmp);
    if (names_given) write_names();
#ifdef SYNC_FILE_RANGE_WRITE
    (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // (advisory: fsync waits for it)
#endif
    sections_written = true;
  }

  void finish() {
    if (!sections_written) write_sections();
    // The census extension where attach_census puts it: after the sections, 8-byte aligned.
    const unsigned char zeros[8] = {};
    std::uint64_t census_offset = 0, census_checksum = 0;
    if (!census.empty()) {
      const std::vector<unsigned char> frame = census_frame(census);
      write_all(fd, zeros, (8 - file_pos % 8) % 8, tmp);
      census_offset = (file_pos + 7) / 8 * 8;
      census_checksum = xxh64(frame.data(), frame.size());
      write_all(fd, frame.data(), frame.size(), tmp);
      file_pos = census_offset + frame.size();
    }

    std::memcpy(header + kOffMagic, kMagic, sizeof kMagic);
    put_u32(header + kOffVersion, !census.empty() ? kFormatVersionCensus
                                  : names_given   ? kFormatVersionNames
                                                  : kFormatVersion);
    put_u32(header + kOffFlags, options.delta ? kFlagDelta : 0u);
    put_u64(header + kOffN, n);
    put_u64(header + kOffM, offsets.back());
    put_u64(header + kOffMaxOutDegree, max_out_degree);
    put_u64(header + kOffMaxDegree, max_degree);
    put_u64(header + kOffChunkEdges, chunk_edges);
    put_u64(header + kOffNumChunks, cw->chunks.size());
    put_u32(header + kOffHeaderSize, kHeaderSize);
    put_u32(header + kOffSectionCount, names_given ? kSectionCountNames : kSectionCount);
    if (!census.empty()) {
      put_u64(header + kOffCensusOffset, census_offset);
      put_u64(header + kOffCensusChecksum, census_checksum);
    }
    put_u64(header + kOffHeaderChecksum, xxh64(header, kOffHeaderChecksum));
    pwrite_all(fd, header, kHeaderSize, 0, tmp);

    if (::fsync(fd) != 0) sys_fail("fsync failed", tmp);
    throw_if_interrupted();  // SIGINT/SIGTERM: no output (the destructor removes the temporary)
    const int closing = fd;
    fd = -1;
    if (::close(closing) != 0) sys_fail("close failed", tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) sys_fail("cannot rename " + tmp + " to", path);
    finished = true;
    const std::string dir = parent_dir(path);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) sys_fail("cannot open directory to fsync it", dir);
    const int rc = ::fsync(dfd);
    const int saved = errno;
    ::close(dfd);
    errno = saved;
    if (rc != 0) sys_fail("fsync of the directory failed", dir);
  }
};

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
      kBatchBytes / raw_chunk, w.threads, std::max<std::uint64_t>(w.threads, kMaxBatchChunks));
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
  w.in_degree.assign(n, 0);
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

void write_file(const std::string& path, const OrientedGraph& g, const WriteOptions& options) {
  const Csr& csr = g.csr;
  Writer w(path, csr.rows(), options);
  w.append_rows(csr.cols.data(), csr.offsets.data(), csr.rows());
  if (!g.perm.empty()) w.set_permutation(g.perm);
  w.finish();
}

}  // namespace tristream::tcsr
