// reader_chunks.cpp — tcsr::Reader's chunks (reader_impl.hpp): a chunk's frame is checked and
// decompressed a piece at a time into the caller's buffer, then its rows are checked (ids above
// the row, strictly ascending, < n). Every problem is Error(Input, "FILE: section NAME: what").
// ZSTD_d_stableOutBuffer (zstd >= 1.4.9, in the experimental section of zstd.h)
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "planes.hpp"
#include "reader_impl.hpp"

namespace tristream::tcsr {
namespace {

using namespace detail;

// A chunk's frame is read and decompressed a piece at a time, so a thread holds one piece of
// it (pread needs a buffer of its own), not the whole frame (3.5 MiB for a chunk of 8 MiB).
inline constexpr std::size_t kFramePiece = Reader::kFramePieceBytes;
unsigned char* thread_frame_piece() {
  thread_local std::vector<unsigned char> buffer(kFramePiece);
  return buffer.data();
}

struct DStreamDeleter {
  void operator()(ZSTD_DStream* d) const { ZSTD_freeDStream(d); }
};

// The streaming context of the thread: it writes straight into the chunk's buffer
// (ZSTD_d_stableOutBuffer), so it holds no window of its own, only a block of input.
// The thread's block of scratch for byte planes (planes.hpp), made when first needed.
unsigned char* thread_plane_scratch() {
  thread_local std::unique_ptr<unsigned char[]> buffer(new unsigned char[kPlaneScratchBytes]);
  return buffer.get();
}

ZSTD_DStream* thread_dstream() {
  thread_local std::unique_ptr<ZSTD_DStream, DStreamDeleter> ds(ZSTD_createDStream());
  if (!ds) throw Error(ErrorKind::Internal, "zstd: cannot create a decompression stream");
  return ds.get();
}

}  // namespace

void Reader::Impl::read_chunk(std::uint64_t k, vid_t* out) const {
  if (k >= chunks.size())
    throw Error(ErrorKind::Internal, path + ": read_chunk(" + std::to_string(k) + ") of " +
                                         std::to_string(chunks.size()) + " chunks");
  const ChunkInfo& c = chunks[k];
  // 1. The frame's checksum, read a piece at a time, before anything is decompressed.
  unsigned char* piece = thread_frame_piece();
  Xxh64 sum;
  for (std::uint64_t at = 0; at < c.compressed_size; at += kFramePiece) {
    const std::size_t len =
        static_cast<std::size_t>(std::min<std::uint64_t>(kFramePiece, c.compressed_size - at));
    file->read(c.file_offset + at, len, piece);
    sum.add(piece, len);
  }
  if (sum.digest() != frame_checksums[k]) {
    if (file->changed()) file->fail_changed();
    fail_chunk("adjacency", k, "frame checksum mismatch (file damaged)");
  }
  // 2. The frame decompressed from the same pieces straight into `out`: exactly one frame
  // (it ends with the last piece) of exactly raw_size bytes.
  ZSTD_DStream* ds = thread_dstream();
  ZSTD_DCtx_reset(ds, ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(ds, ZSTD_d_stableOutBuffer, 1);
  ZSTD_outBuffer dst{out, static_cast<std::size_t>(c.raw_size), 0};
  std::size_t left = 1;  // 0 once the frame is complete
  for (std::uint64_t at = 0; at < c.compressed_size; at += kFramePiece) {
    const std::size_t len =
        static_cast<std::size_t>(std::min<std::uint64_t>(kFramePiece, c.compressed_size - at));
    file->read(c.file_offset + at, len, piece);
    ZSTD_inBuffer src{piece, len, 0};
    while (src.pos < src.size) {
      if (left == 0) fail_chunk("adjacency", k, "not exactly one zstd frame");
      const std::size_t before = src.pos + dst.pos;
      left = ZSTD_decompressStream(ds, &dst, &src);
      if (ZSTD_isError(left))
        fail_chunk("adjacency", k, std::string("zstd: ") + ZSTD_getErrorName(left));
      if (left != 0 && src.pos + dst.pos == before) break;  // wants more input
    }
  }
  if (left != 0) fail_chunk("adjacency", k, "not exactly one zstd frame (it is cut short)");
  const std::size_t got = dst.pos;
  if (got != c.raw_size)
    fail_chunk(
        "adjacency", k,
        "decompressed " + std::to_string(got) + " bytes, expected " + std::to_string(c.raw_size));

  // Byte planes back to ids; decode (delta) and validate: every id < n, above its row, strictly
  // ascending within a row.
  if (header.flags & kFlagPlanes) planes_to_ids(out, c.edges, thread_plane_scratch());
  // The first id of each row segment is stored relative to the row (delta) or as is (plain).
  const bool delta = header.flags & kFlagDelta;
  const eid_t e0 = c.first_edge, e1 = c.first_edge + c.edges;
  for (std::uint64_t r = c.first_row; r < c.first_row + c.rows; ++r) {
    const std::size_t begin = std::max(offsets[r], e0) - e0;  // row r inside the chunk
    const std::size_t end = std::min(offsets[r + 1], e1) - e0;
    std::uint64_t prev = r;  // each id must exceed its predecessor, the first one the row
    bool ok = true;
    if (delta) {
      for (std::size_t i = begin; i < end; ++i) {
        const std::uint64_t v = prev + out[i];  // no wrap: fewer than 2^31 terms below 2^32
        ok &= v > prev;
        out[i] = static_cast<vid_t>(v);
        prev = v;
      }
    } else {
      for (std::size_t i = begin; i < end; ++i) {
        ok &= out[i] > prev;
        prev = out[i];
      }
    }
    if (!ok || prev >= header.n) report_bad_row(k, r, out + begin, out + end);
  }
}

// Names the first bad id of a row segment that failed validation in read_chunk.
void Reader::Impl::report_bad_row(std::uint64_t k, std::uint64_t r, const vid_t* begin,
                                  const vid_t* end) const {
  std::uint64_t prev = r;
  const vid_t* p = begin;
  while (p != end && *p > prev && *p < header.n) prev = *p++;
  const std::string id =
      p == end ? ""
               : " id " + std::to_string(*p) + " at position " + std::to_string(p - begin) + ":";
  fail_chunk("adjacency", k,
             "row " + std::to_string(r) + ":" + id +
                 " ids must be above the row, strictly ascending and < n (damaged data)");
}

}  // namespace tristream::tcsr
