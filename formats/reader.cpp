// reader.cpp — tcsr::Reader: reads a .tcsr file with pread, validates its structure at open
// before allocating anything the header asks for, decompresses and checks chunks on demand.
// Every problem is Error(Input, "FILE: section NAME: what"); a file that shrinks or is rewritten
// while it is read is "FILE: changed while being read" (no mapping, so never SIGBUS).
// ZSTD_d_stableOutBuffer (zstd >= 1.4.9, in the experimental section of zstd.h)
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/thread_pool.hpp"
#include "input_file.hpp"
#include "layout.hpp"
#include "names.hpp"
#include "reader_impl.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {
namespace {

using namespace detail;

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (!dctx) throw Error(ErrorKind::Internal, "zstd: cannot create a decompression context");
  return dctx.get();
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// zstd's format bounds the expansion of a frame: a block decompresses to at most 128 KiB and
// costs at least 4 bytes (a 3-byte block header and one byte of content), so a frame of C bytes
// holds at most C / 4 * 128 KiB. Checked at open so that no caller allocates a raw_size that the
// frame cannot fill.
inline constexpr std::uint64_t kMaxFrameExpansion = (128u << 10) / 4;

}  // namespace

void Reader::Impl::open_file() {
  file = std::make_unique<InputFile>(path);
  size = file->size();
  if (size < kHeaderSize) {
    unsigned char magic[sizeof kMagic] = {};
    if (size >= sizeof kMagic) file->read(0, sizeof magic, magic);
    if (size < sizeof kMagic || std::memcmp(magic, kMagic, sizeof kMagic) != 0)
      fail("header", "not a .tcsr file (bad magic)");
    fail("header", "file is " + std::to_string(size) + " bytes, shorter than the " +
                       std::to_string(kHeaderSize) + "-byte header (truncated)");
  }
  file->read(0, kHeaderSize, head);
}

void Reader::Impl::parse_header() {
  const unsigned char* h = head;
  if (std::memcmp(h + kOffMagic, kMagic, sizeof kMagic) != 0)
    fail("header", "not a .tcsr file (bad magic)");
  header.version = get_u32(h + kOffVersion);
  if (header.version != kFormatVersion && header.version != kFormatVersionNames &&
      header.version != kFormatVersionCensus)
    fail("header", "unsupported .tcsr version " + std::to_string(header.version) +
                       " (this build reads 1, 2 and 3)");
  if (header.version == kFormatVersionNames) section_count = kSectionCountNames;
  if (get_u64(h + kOffHeaderChecksum) != xxh64(h, kOffHeaderChecksum))
    fail("header", "header checksum mismatch (file damaged)");
  // Version 3 is a version 1 or 2 layout (4 or 5 sections) plus the census extension.
  const bool with_census = header.version == kFormatVersionCensus;
  if (with_census && get_u32(h + kOffSectionCount) == kSectionCountNames)
    section_count = kSectionCountNames;
  // From here on the header is what a writer wrote; the remaining checks catch writer bugs and
  // files crafted by hand.
  if (get_u32(h + kOffHeaderSize) != kHeaderSize)
    fail("header", "header size " + std::to_string(get_u32(h + kOffHeaderSize)) + " (expected " +
                       std::to_string(kHeaderSize) + ")");
  if (get_u32(h + kOffSectionCount) != section_count)
    fail("header", "section count " + std::to_string(get_u32(h + kOffSectionCount)) +
                       " (expected " + std::to_string(section_count) + ")");
  const std::size_t reserved = section_count == kSectionCount ? kOffReserved : kOffReservedNames;
  const std::size_t reserved_end = with_census ? kOffCensusOffset : kOffHeaderChecksum;
  for (std::size_t i = reserved; i < reserved_end; ++i)
    if (h[i] != 0) fail("header", "reserved byte " + std::to_string(i) + " is not zero");
  header.flags = get_u32(h + kOffFlags);
  if (header.flags & ~kKnownFlags) fail("header", "unknown flags " + hex(header.flags));
  if (header.flags & kFlagWideIds)
    fail("header", "8-byte vertex ids (flag kFlagWideIds) are not supported by this build");
  header.n = get_u64(h + kOffN);
  header.m = get_u64(h + kOffM);
  header.max_out_degree = get_u64(h + kOffMaxOutDegree);
  header.max_degree = get_u64(h + kOffMaxDegree);
  header.chunk_edges = get_u64(h + kOffChunkEdges);
  header.num_chunks = get_u64(h + kOffNumChunks);
  if (header.n > kMaxVertices)
    fail("header",
         "n = " + std::to_string(header.n) + " needs 8-byte ids (at most 2^32-1 vertices)");
  check_header_counts();
  for (std::size_t i = 0; i < section_count; ++i) {
    const unsigned char* e = h + kOffSectionTable + i * kSectionEntrySize;
    const std::uint32_t kind = get_u32(e + kSecKind);
    if (kind != i + 1 || get_u32(e + kSecReserved) != 0)
      fail("header", "section table entry " + std::to_string(i) + " has kind " +
                         std::to_string(kind) + " (expected " + std::to_string(i + 1) + ")");
    sections[i] = {get_u64(e + kSecOffset), get_u64(e + kSecSize), get_u64(e + kSecChecksum)};
  }
  if (with_census)
    census_section = {get_u64(h + kOffCensusOffset), 0, get_u64(h + kOffCensusChecksum)};
}

// What the counts in the header imply, checked before any of them sizes an allocation: a simple
// graph on n vertices has at most n(n-1)/2 edges and degrees below n; the chunks are exactly
// ceil(m / chunk_edges) (all full but the last).
void Reader::Impl::check_header_counts() {
  const std::uint64_t n = header.n, m = header.m;
  const std::uint64_t max_edges = n > 0 ? n * (n - 1) / 2 : 0;  // n < 2^32: no overflow
  if (m > max_edges)
    fail("header", "m = " + std::to_string(m) + " edges, but " + std::to_string(n) +
                       " vertices allow at most n(n-1)/2 = " + std::to_string(max_edges));
  const std::uint64_t max_deg = n > 0 ? n - 1 : 0;
  if (header.max_degree > max_deg)
    fail("header", "max degree " + std::to_string(header.max_degree) +
                       " exceeds n - 1 = " + std::to_string(max_deg));
  if (header.max_out_degree > header.max_degree)
    fail("header", "max out-degree " + std::to_string(header.max_out_degree) +
                       " exceeds max degree " + std::to_string(header.max_degree));
  // The degrees sum to 2m: no vertex has more than m, and some vertex has at least 2m / n.
  if (header.max_degree > m || header.max_degree * n < 2 * m)  // both < 2^64 (n < 2^32)
    fail("header", "max degree " + std::to_string(header.max_degree) +
                       " is impossible for m = " + std::to_string(m) +
                       " edges on n = " + std::to_string(n) + " vertices (it lies in [2m/n, m])");
  if (m > 0 && header.chunk_edges == 0) fail("header", "chunk_edges is 0 but m > 0");
  const std::uint64_t expected_chunks =
      m == 0 ? 0 : m / header.chunk_edges + (m % header.chunk_edges != 0 ? 1 : 0);
  if (header.num_chunks != expected_chunks)
    fail("header", std::to_string(header.num_chunks) + " chunks, but m = " + std::to_string(m) +
                       " edges in chunks of " + std::to_string(header.chunk_edges) + " make " +
                       std::to_string(expected_chunks));
}

// Every section lies inside the file, at its alignment, in file order header | adjacency |
// row offsets | chunk index | permutation, with only zero padding up to the alignment between
// them and nothing after the last: every byte of the file is under some check.
void Reader::Impl::place_sections() {
  const std::uint64_t n = header.n;
  auto expect_size = [&](SectionKind kind, std::uint64_t expected, const std::string& why) {
    if (sec(kind).size != expected)
      fail(kSectionNames[kind - 1], "size " + std::to_string(sec(kind).size) + " bytes, expected " +
                                        std::to_string(expected) + " (" + why + ")");
  };
  expect_size(kRowOffsets, (n + 1) * sizeof(eid_t), "n + 1 offsets");
  expect_size(kPermutation, n * sizeof(orig_id_t), "n ids");
  if (header.num_chunks > size / kChunkEntrySize)
    fail("chunk index", std::to_string(header.num_chunks) + " chunks cannot fit in the file");
  expect_size(kChunkIndex, header.num_chunks * kChunkEntrySize, "num_chunks entries");
  if (sec(kAdjacency).checksum != 0)
    fail("adjacency", "section checksum field must be 0 (frames are checked via the index)");

  static constexpr SectionKind order[] = {kAdjacency, kRowOffsets, kChunkIndex, kPermutation,
                                          kNames};
  std::uint64_t cursor = kHeaderSize;
  for (SectionKind kind : order) {
    if (kind == kNames && section_count == kSectionCount) break;
    const Section& s = sec(kind);
    const char* name = kSectionNames[kind - 1];
    const std::uint64_t align = kind == kAdjacency ? 1 : 8;
    const std::uint64_t expected = (cursor + align - 1) / align * align;
    if (s.offset != expected)
      fail(name, "starts at byte " + std::to_string(s.offset) + ", expected " +
                     std::to_string(expected) + " (sections overlap, leave gaps or are misplaced)");
    if (s.offset > size || s.size > size - s.offset)
      fail(name, "bytes [" + std::to_string(s.offset) + ", " + std::to_string(s.offset) + " + " +
                     std::to_string(s.size) + ") lie outside the " + std::to_string(size) +
                     "-byte file (truncated?)");
    unsigned char padding[8] = {};  // fewer than `align` bytes
    file->read(cursor, s.offset - cursor, padding);
    for (std::uint64_t i = cursor; i < s.offset; ++i)
      if (padding[i - cursor] != 0)
        fail(name, "padding byte " + std::to_string(i) + " before it is not zero");
    cursor = s.offset + s.size;
  }
  if (header.version == kFormatVersionCensus) {
    // The census extension: 8-byte aligned after the last section, to the end of the file.
    Section& c = census_section;
    const std::uint64_t expected = (cursor + 7) / 8 * 8;
    if (c.offset != expected)
      fail("census", "starts at byte " + std::to_string(c.offset) + ", expected " +
                         std::to_string(expected) + " (misplaced)");
    if (c.offset >= size)
      fail("census", "starts at byte " + std::to_string(c.offset) +
                         ", at or after the end of the " + std::to_string(size) +
                         "-byte file (truncated?)");
    unsigned char padding[8] = {};
    file->read(cursor, c.offset - cursor, padding);
    for (std::uint64_t i = cursor; i < c.offset; ++i)
      if (padding[i - cursor] != 0)
        fail("census", "padding byte " + std::to_string(i) + " before it is not zero");
    c.size = size - c.offset;
    cursor = size;
  }
  if (cursor != size)
    fail(
        section_count == kSectionCount ? "permutation" : "names",
        std::to_string(size - cursor) + " unexpected bytes after the last section (trailing data)");
}

// The census extension's payload, or its first `limit` bytes: the frame's checksum verified,
// then decompressed (whole: exactly its content size, zstd's content checksum verified).
std::vector<unsigned char> Reader::Impl::read_census(std::size_t limit) const {
  const Section& c = census_section;
  std::vector<unsigned char> frame(c.size);  // inside the file (place_sections)
  file->read(c.offset, c.size, frame.data());
  if (xxh64(frame.data(), c.size) != c.checksum) {
    if (file->changed()) file->fail_changed();
    fail("census", "checksum mismatch (file damaged)");
  }
  // One zstd frame with its content size, at most kMaxCensusBytes.
  const unsigned long long raw = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN || raw == 0 ||
      raw > kMaxCensusBytes || raw > c.size * kMaxFrameExpansion)
    fail("census", "not a zstd frame with a content size of 1 to " +
                       std::to_string(kMaxCensusBytes) + " bytes");
  if (ZSTD_findFrameCompressedSize(frame.data(), frame.size()) != frame.size())
    fail("census", "not exactly one zstd frame");
  std::vector<unsigned char> out(
      static_cast<std::size_t>(std::min<unsigned long long>(raw, limit)));
  if (out.size() == raw) {
    const std::size_t got =
        ZSTD_decompressDCtx(thread_dctx(), out.data(), out.size(), frame.data(), frame.size());
    if (ZSTD_isError(got) || got != raw) fail("census", "the zstd frame does not decompress");
    return out;
  }
  // A prefix: streamed until the output is full.
  ZSTD_DCtx* d = thread_dctx();
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  while (o.pos < o.size) {
    const std::size_t r = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(r)) fail("census", "the zstd frame does not decompress");
    if (r == 0 && o.pos < o.size) fail("census", "the zstd frame ends early");
  }
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  return out;
}

void Reader::Impl::parse_index() {
  std::vector<unsigned char> index(sec(kChunkIndex).size);  // inside the file
  read_section(kChunkIndex, index.data());
  const unsigned char* p = index.data();
  const Section& adj = sec(kAdjacency);
  chunks.resize(header.num_chunks);
  frame_checksums.resize(header.num_chunks);
  eid_t next_edge = 0;
  std::uint64_t next_offset = adj.offset;
  for (std::uint64_t k = 0; k < header.num_chunks; ++k) {
    const unsigned char* e = p + k * kChunkEntrySize;
    ChunkInfo& c = chunks[k];
    c.first_row = get_u64(e + kChunkFirstRow);
    c.first_edge = get_u64(e + kChunkFirstEdge);
    c.rows = get_u64(e + kChunkRows);
    c.edges = get_u64(e + kChunkEdges);
    c.file_offset = get_u64(e + kChunkFileOffset);
    c.compressed_size = get_u64(e + kChunkCompressedSize);
    c.raw_size = get_u64(e + kChunkRawSize);
    frame_checksums[k] = get_u64(e + kChunkFrameChecksum);
    auto bad = [&](const std::string& what) { fail_chunk("chunk index", k, what); };
    if (c.first_edge != next_edge)
      bad("first edge " + std::to_string(c.first_edge) + ", expected " + std::to_string(next_edge) +
          " (chunks must cover [0, m) in order)");
    if (c.edges == 0 || c.edges > header.chunk_edges || c.edges > header.m - c.first_edge)
      bad(std::to_string(c.edges) + " edges (chunk_edges " + std::to_string(header.chunk_edges) +
          ", m " + std::to_string(header.m) + ")");
    if (c.raw_size != c.edges * sizeof(vid_t))
      bad("raw size " + std::to_string(c.raw_size) + " != 4 * " + std::to_string(c.edges) +
          " edges");
    if (c.file_offset != next_offset)
      bad("file offset " + std::to_string(c.file_offset) + ", expected " +
          std::to_string(next_offset) + " (frames must be contiguous in the adjacency section)");
    if (c.compressed_size == 0 || c.compressed_size > adj.offset + adj.size - c.file_offset)
      bad("frame [" + std::to_string(c.file_offset) + ", +" + std::to_string(c.compressed_size) +
          ") runs past the adjacency section");
    if (c.raw_size / kMaxFrameExpansion > c.compressed_size)
      bad("raw size " + std::to_string(c.raw_size) + " cannot come from a " +
          std::to_string(c.compressed_size) + "-byte zstd frame");
    const std::uint64_t first_row = row_of(c.first_edge);
    const std::uint64_t rows = row_of(c.first_edge + c.edges - 1) - first_row + 1;
    if (c.first_row != first_row || c.rows != rows)
      bad("rows [" + std::to_string(c.first_row) + ", +" + std::to_string(c.rows) +
          ") disagree with the row offsets ([" + std::to_string(first_row) + ", +" +
          std::to_string(rows) + "))");
    next_edge += c.edges;
    next_offset += c.compressed_size;
  }
  if (next_edge != header.m)
    fail("chunk index",
         "chunks cover " + std::to_string(next_edge) + " edges, m = " + std::to_string(header.m));
  if (next_offset != adj.offset + adj.size)
    fail("chunk index", "frames end at byte " + std::to_string(next_offset) +
                            " but the adjacency section ends at " +
                            std::to_string(adj.offset + adj.size));
}

void Reader::Impl::parse_names() {
  if (section_count == kSectionCount) return;
  std::vector<unsigned char> data(sec(kNames).size);  // inside the file (place_sections)
  read_section(kNames, data.data());
  const std::string bad = decode_names(data.data(), data.size(), header.n, names);
  if (!bad.empty()) fail("names", bad);
}

Reader::Reader(const std::string& path, const OpenOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->offsets_checksum_later = options.offsets_checksum_later;
  impl_->open_file();
  impl_->parse_header();
  impl_->place_sections();
  impl_->parse_offsets();
  impl_->parse_index();
  impl_->parse_names();
}

Reader::~Reader() = default;

const std::string& Reader::path() const {
  return impl_->path;
}
const Header& Reader::header() const {
  return impl_->header;
}
std::uint64_t Reader::file_size() const {
  return impl_->size;
}
const eid_t* Reader::offsets() const {
  return impl_->offsets;
}
const std::vector<ChunkInfo>& Reader::chunks() const {
  return impl_->chunks;
}

std::uint64_t Reader::chunk_of_edge(eid_t e) const {
  if (e >= m())
    throw Error(ErrorKind::Internal, path() + ": chunk_of_edge(" + std::to_string(e) +
                                         ") with m = " + std::to_string(m()));
  const auto& cs = impl_->chunks;
  const auto it = std::upper_bound(cs.begin(), cs.end(), e,
                                   [](eid_t x, const ChunkInfo& c) { return x < c.first_edge; });
  return static_cast<std::uint64_t>(it - cs.begin()) - 1;
}

void Reader::prefetch() const {
  const Section& a = impl_->sec(kAdjacency);
  impl_->file->will_need(a.offset, a.size);
}

void Reader::read_chunk(std::uint64_t k, vid_t* out) const {
  impl_->read_chunk(k, out);
}

void Reader::read_edges(eid_t first, eid_t last, vid_t* out) const {
  if (first > last || last > m())
    throw Error(ErrorKind::Internal, path() + ": read_edges [" + std::to_string(first) + ", " +
                                         std::to_string(last) +
                                         ") with m = " + std::to_string(m()));
  if (first == last) return;
  std::vector<vid_t> buffer;
  for (std::uint64_t k = chunk_of_edge(first); k < impl_->chunks.size(); ++k) {
    const ChunkInfo& c = impl_->chunks[k];
    if (c.first_edge >= last) break;
    if (c.first_edge >= first && c.first_edge + c.edges <= last) {
      read_chunk(k, out + (c.first_edge - first));
      continue;
    }
    buffer.resize(c.edges);
    read_chunk(k, buffer.data());
    const eid_t lo = std::max(first, c.first_edge), hi = std::min(last, c.first_edge + c.edges);
    std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(lo - c.first_edge),
              buffer.begin() + static_cast<std::ptrdiff_t>(hi - c.first_edge), out + (lo - first));
  }
}

std::vector<orig_id_t> Reader::permutation() const {
  std::vector<orig_id_t> perm(n());  // n * 8 bytes lie inside the file (checked at open)
  impl_->read_section(kPermutation, perm.data());
  return perm;
}

bool Reader::has_names() const {
  return impl_->section_count == kSectionCountNames;
}

bool Reader::has_census() const {
  return impl_->header.version == kFormatVersionCensus;
}

std::vector<unsigned char> Reader::census(std::size_t limit) const {
  if (!has_census()) return {};
  return impl_->read_census(limit);
}

std::string_view Reader::name(orig_id_t original) const {
  if (!has_names() || original >= n())
    throw Error(ErrorKind::Internal, impl_->path + ": name(" + std::to_string(original) +
                                         ") of a file with " +
                                         (has_names() ? std::to_string(n()) : "no") + " names");
  return impl_->names[original];
}

OrientedGraph Reader::load(bool with_perm, unsigned threads) const {
  OrientedGraph g;
  g.csr.offsets.assign(offsets(), offsets() + n() + 1);
  g.csr.cols.resize(m());
  g.csr.col_space = n();
  for_each_item(resolve_threads(threads), impl_->chunks.size(), [&](std::size_t k, unsigned) {
    read_chunk(k, g.csr.cols.data() + impl_->chunks[k].first_edge);
  });
  if (with_perm) g.perm = permutation();
  return g;
}

void Reader::check(unsigned threads) const {
  const std::uint64_t count = n();
  if (has_census()) (void)census();  // its checksum and frame
  {
    std::vector<orig_id_t> perm = permutation();
    std::sort(perm.begin(), perm.end());
    if (std::adjacent_find(perm.begin(), perm.end()) != perm.end())
      impl_->fail("permutation", "two vertices have the same original id");
    if (has_names() && !perm.empty() && perm.back() >= n())
      impl_->fail("permutation", "original id " + std::to_string(perm.back()) +
                                     " has no name (a named file's ids are 0..n-1)");
  }
  // Every chunk decodes and validates (ids in range, above their row, ascending); in-degrees
  // give the undirected maximum degree; a row split between chunks must ascend across the cut.
  const auto& chunks = impl_->chunks;
  std::vector<std::atomic<vid_t>> in_degree(count);
  for (auto& d : in_degree) d.store(0, std::memory_order_relaxed);
  std::vector<vid_t> first_id(chunks.size()), last_id(chunks.size());
  const unsigned workers = resolve_threads(threads);
  std::vector<std::vector<vid_t>> buffers(workers);
  for_each_item(workers, chunks.size(), [&](std::size_t k, unsigned worker) {
    auto& buffer = buffers[worker];
    buffer.resize(chunks[k].edges);
    read_chunk(k, buffer.data());
    for (vid_t v : buffer) in_degree[v].fetch_add(1, std::memory_order_relaxed);
    first_id[k] = buffer.front();
    last_id[k] = buffer.back();
  });
  for (std::size_t k = 1; k < chunks.size(); ++k)
    if (offsets()[chunks[k].first_row] < chunks[k].first_edge && first_id[k] <= last_id[k - 1])
      impl_->fail_chunk("adjacency", k,
                        "row " + std::to_string(chunks[k].first_row) + " continues from chunk " +
                            std::to_string(k - 1) + " but its ids do not ascend across the cut");
  std::uint64_t max_degree = 0;
  for (std::uint64_t v = 0; v < count; ++v)
    max_degree = std::max<std::uint64_t>(
        max_degree, offsets()[v + 1] - offsets()[v] + in_degree[v].load(std::memory_order_relaxed));
  if (max_degree != header().max_degree)
    impl_->fail("header", "maximum degree is " + std::to_string(max_degree) +
                              " but the header says " + std::to_string(header().max_degree));
}

}  // namespace tristream::tcsr
