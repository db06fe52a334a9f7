// reader_offsets.cpp — the row offsets of an open tcsr::Reader (reader_impl.hpp): read at open
// (a large section in pieces on several threads), their rules checked, their checksum verified
// at open or, with OpenOptions::offsets_checksum_later, on a thread of its own until
// Reader::verify_offsets().
#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "common/thread_pool.hpp"
#include "reader_impl.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {

namespace {

// Sections of at least this many bytes are read and checked on several threads.
constexpr std::uint64_t kParallelSection = std::uint64_t{64} << 20;
constexpr std::uint64_t kSectionPiece = std::uint64_t{16} << 20;

// The largest out-degree of rows [r0, r1), or ~0 when a row breaks a rule parse_offsets checks.
std::uint64_t max_out_or_bad(const eid_t* off, std::uint64_t n, std::uint64_t r0,
                             std::uint64_t r1) {
  std::uint64_t max_out = 0;
  bool bad = false;
  for (std::uint64_t r = r0; r < r1; ++r) {
    const eid_t d = off[r + 1] - off[r];
    bad |= off[r + 1] < off[r] || d > n - 1 - r;
    max_out = std::max<std::uint64_t>(max_out, d);
  }
  return bad ? ~std::uint64_t{0} : max_out;
}

}  // namespace

void Reader::Impl::parse_offsets() {
  const std::uint64_t n = header.n;
  // (n + 1) * 8 bytes lie inside the file (place_sections); left uninitialised, the read fills
  // them (zeroing gigabytes first would cost as much as the read).
  offset_store.reset(new eid_t[n + 1]);
  offsets = offset_store.get();
  const Section& s = sec(kRowOffsets);
  std::uint64_t max_out = 0;
  bool bad = false;
  auto* bytes = reinterpret_cast<unsigned char*>(offset_store.get());
  // (OpenOptions::offsets_checksum_later: the digest on a thread of its own, once read)
  auto digest_later = [this, bytes, size = s.size] {
    offsets_digest = std::async(std::launch::async, [bytes, size] { return xxh64(bytes, size); });
  };
  if (s.size < kParallelSection) {
    if (offsets_checksum_later) {
      file->read(s.offset, s.size, bytes);
      digest_later();
    } else {
      read_section(kRowOffsets, offset_store.get());
    }
    max_out = max_out_or_bad(offsets, n, 0, n);
    bad = max_out == ~std::uint64_t{0};
  } else {
    // 1. A large section (hundreds of millions of rows): read in pieces on several threads, then
    //    its checksum on one thread (or later, on its own) beside the rows' checks on the others.
    const std::uint64_t pieces = (s.size + kSectionPiece - 1) / kSectionPiece;
    ThreadPool pool(std::min<unsigned>(8, resolve_threads(0)));
    pool.for_each_item(pieces, [&](std::size_t i, unsigned) {
      const std::uint64_t at = i * kSectionPiece;
      file->read(s.offset + at, std::min(kSectionPiece, s.size - at), bytes + at);
    });
    const std::uint64_t row_pieces = (n + kSectionPiece / 8 - 1) / (kSectionPiece / 8);
    std::vector<std::uint64_t> piece_max(row_pieces, 0);
    std::uint64_t digest = 0;
    if (offsets_checksum_later) digest_later();
    pool.for_each_item(row_pieces + 1, [&](std::size_t i, unsigned) {
      if (i == 0) {
        if (!offsets_checksum_later) digest = xxh64(bytes, s.size);
        return;
      }
      const std::uint64_t r0 = (i - 1) * (kSectionPiece / 8);
      piece_max[i - 1] = max_out_or_bad(offsets, n, r0, std::min(n, r0 + kSectionPiece / 8));
    });
    if (!offsets_checksum_later) check_section_digest(kRowOffsets, digest);
    for (std::uint64_t x : piece_max) {
      bad |= x == ~std::uint64_t{0};
      if (x != ~std::uint64_t{0}) max_out = std::max(max_out, x);
    }
  }
  // 2. The rules, in row order: the first row that breaks one is named.
  if (offsets[0] != 0)
    fail("row offsets", "offsets[0] = " + std::to_string(offsets[0]) + ", not 0");
  for (std::uint64_t r = 0; bad && r < n; ++r) {
    if (offsets[r + 1] < offsets[r])
      fail("row offsets", "offsets decrease at row " + std::to_string(r));
    if (offsets[r + 1] - offsets[r] > n - 1 - r)  // row r's neighbours are among r+1..n-1
      fail("row offsets",
           "row " + std::to_string(r) + " has " + std::to_string(offsets[r + 1] - offsets[r]) +
               " edges, more than the " + std::to_string(n - 1 - r) + " vertices above it");
  }
  if (offsets[n] != header.m)
    fail("row offsets", "offsets[n] = " + std::to_string(offsets[n]) +
                            " but the header says m = " + std::to_string(header.m));
  if (max_out != header.max_out_degree)
    fail("row offsets", "rows have maximum out-degree " + std::to_string(max_out) +
                            " but the header says " + std::to_string(header.max_out_degree));
}

void Reader::verify_offsets() const {
  if (impl_->offsets_digest.valid())
    impl_->check_section_digest(kRowOffsets, impl_->offsets_digest.get());
}

}  // namespace tristream::tcsr
