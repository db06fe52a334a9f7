// writer_sections.cpp — tcsr::Writer's end (writer_impl.hpp): the sections after the adjacency
// (row offsets, chunk index, permutation, names), the census extension, the header at offset 0,
// the fsyncs and the rename over the target.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "writer_impl.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {

using namespace detail;

namespace {

// Bytes of a section written by one task (the large sections written on all the writer's threads).
constexpr std::uint64_t kSectionPiece = std::uint64_t{64} << 20;

}  // namespace

void Writer::Impl::write_names() {
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

void Writer::Impl::section(std::size_t index, SectionKind kind, std::uint64_t offset,
                           std::uint64_t size, std::uint64_t checksum) {
  unsigned char* e = header + kOffSectionTable + index * kSectionEntrySize;
  put_u32(e + kSecKind, kind);
  put_u64(e + kSecOffset, offset);
  put_u64(e + kSecSize, size);
  put_u64(e + kSecChecksum, checksum);
}

void Writer::Impl::write_sections() {
  const std::uint64_t rows = offsets.size() - 1;
  if (rows != n)
    fail("sections written after " + std::to_string(rows) + " of " + std::to_string(n) + " rows");
  flush(true);
  throw_if_interrupted();

  if (count_in_degrees) {
    for (std::uint64_t v = 0; v < n; ++v)
      max_degree = std::max<std::uint64_t>(max_degree, offsets[v + 1] - offsets[v] + in_degree[v]);
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
  // (the three sections' checksums on three of the writer's threads while their bytes are
  // written at their places in pieces of kSectionPiece on the others)
  struct Piece {
    const unsigned char* data;
    std::uint64_t size, at;
  };
  std::vector<Piece> pieces;
  auto cut = [&pieces](const void* data, std::uint64_t size, std::uint64_t at) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::uint64_t o = 0; o < size; o += kSectionPiece)
      pieces.push_back({p + o, std::min(kSectionPiece, size - o), at + o});
  };
  cut(offsets.data(), offsets_bytes, offsets_at);
  cut(index.data(), index.size(), index_at);
  cut(perm.data(), perm_bytes, perm_at);
  std::uint64_t sums[3] = {};
  pool->for_each_item(3 + pieces.size(), [&](std::size_t i, unsigned) {
    if (i == 0)
      sums[0] = xxh64(offsets.data(), offsets_bytes);
    else if (i == 1)
      sums[1] = xxh64(index.data(), index.size());
    else if (i == 2)
      sums[2] = xxh64(perm.data(), perm_bytes);
    else
      pwrite_all(fd, pieces[i - 3].data, pieces[i - 3].size, pieces[i - 3].at, tmp);
  });
  section(0, kRowOffsets, offsets_at, offsets_bytes, sums[0]);
  section(1, kChunkIndex, index_at, index.size(), sums[1]);
  section(3, kPermutation, perm_at, perm_bytes, sums[2]);
  file_pos = perm_at + perm_bytes;
  if (::lseek(fd, static_cast<off_t>(file_pos), SEEK_SET) < 0) sys_fail("seek failed", tmp);
  if (names_given) write_names();
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // (advisory: fsync waits for it)
#endif
  sections_written = true;
}

void Writer::Impl::finish() {
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
  put_u32(header + kOffFlags,
          (options.delta ? kFlagDelta : 0u) | (options.planes ? kFlagPlanes : 0u));
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
  rename_over_and_sync_dir(tmp, path);
  finished = true;
}

}  // namespace tristream::tcsr
