// reseal.cpp — reseal(): recomputes the checksums of a .tcsr image (FORMAT.md, "Checksums").
#include "reseal.hpp"

#include <cstdint>

#include "layout.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr::detail {
namespace {

// True when [offset, offset + size) lies inside an image of `total` bytes.
bool inside(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace

void reseal(std::vector<unsigned char>& file) {
  const std::uint64_t total = file.size();
  if (total < kHeaderSize) return;
  unsigned char* b = file.data();
  auto entry = [&](SectionKind kind) {
    return b + kOffSectionTable + (kind - 1) * kSectionEntrySize;
  };
  // 1. The frame checksums in the chunk index (before the index's own checksum).
  const std::uint64_t index_offset = get_u64(entry(kChunkIndex) + kSecOffset);
  const std::uint64_t index_size = get_u64(entry(kChunkIndex) + kSecSize);
  if (inside(index_offset, index_size, total)) {
    for (std::uint64_t k = 0; k < index_size / kChunkEntrySize; ++k) {
      unsigned char* e = b + index_offset + k * kChunkEntrySize;
      const std::uint64_t offset = get_u64(e + kChunkFileOffset);
      const std::uint64_t size = get_u64(e + kChunkCompressedSize);
      if (inside(offset, size, total)) put_u64(e + kChunkFrameChecksum, xxh64(b + offset, size));
    }
  }
  // 2. The section checksums (the adjacency's stays as it is: 0 in a valid file).
  const bool named = get_u32(b + kOffSectionCount) == kSectionCountNames;
  for (SectionKind kind : {kRowOffsets, kChunkIndex, kPermutation, kNames}) {
    if (kind == kNames && !named) break;
    unsigned char* e = entry(kind);
    const std::uint64_t offset = get_u64(e + kSecOffset), size = get_u64(e + kSecSize);
    if (inside(offset, size, total)) put_u64(e + kSecChecksum, xxh64(b + offset, size));
  }
  // 3. The census extension (version 3): from its offset to the end of the image.
  if (get_u32(b + kOffVersion) == 3) {
    const std::uint64_t offset = get_u64(b + kOffCensusOffset);
    if (offset <= total) put_u64(b + kOffCensusChecksum, xxh64(b + offset, total - offset));
  }
  // 4. The header, which covers the section table.
  put_u64(b + kOffHeaderChecksum, xxh64(b, kOffHeaderChecksum));
}

}  // namespace tristream::tcsr::detail
