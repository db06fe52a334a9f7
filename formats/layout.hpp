// layout.hpp — the byte layout of a .tcsr file (FORMAT.md), shared by the writer, the reader and
// the tests. Internal to formats/. All integers are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "tristream's .tcsr code maps sections straight from the file: a little-endian host is required"
#endif

namespace tristream::tcsr::detail {

// The header: 256 bytes at offset 0.
inline constexpr std::size_t kHeaderSize = 256;
inline constexpr std::size_t kOffMagic = 0;          // 8 bytes: tcsr::kMagic
inline constexpr std::size_t kOffVersion = 8;        // u32
inline constexpr std::size_t kOffFlags = 12;         // u32
inline constexpr std::size_t kOffN = 16;             // u64
inline constexpr std::size_t kOffM = 24;             // u64
inline constexpr std::size_t kOffMaxOutDegree = 32;  // u64
inline constexpr std::size_t kOffMaxDegree = 40;     // u64
inline constexpr std::size_t kOffChunkEdges = 48;    // u64
inline constexpr std::size_t kOffNumChunks = 56;     // u64
inline constexpr std::size_t kOffHeaderSize = 64;    // u32, = kHeaderSize
inline constexpr std::size_t kOffSectionCount = 68;  // u32, = kSectionCount
inline constexpr std::size_t kOffSectionTable = 72;  // kSectionCount entries of kSectionEntrySize
inline constexpr std::size_t kOffReserved = 200;     // zeros up to kOffHeaderChecksum
inline constexpr std::size_t kOffHeaderChecksum = 248;  // u64: XXH64 of bytes [0, 248), seed 0

// A section table entry.
inline constexpr std::size_t kSectionEntrySize = 32;
inline constexpr std::size_t kSecKind = 0;      // u32
inline constexpr std::size_t kSecReserved = 4;  // u32, 0
inline constexpr std::size_t kSecOffset = 8;    // u64, from the start of the file
inline constexpr std::size_t kSecSize = 16;     // u64, bytes
inline constexpr std::size_t kSecChecksum =
    24;  // u64: XXH64 of the section, seed 0 (0 for adjacency)

// Section kinds; the table lists them in this order, each once.
enum SectionKind : std::uint32_t {
  kRowOffsets = 1,
  kChunkIndex = 2,
  kAdjacency = 3,
  kPermutation = 4,
  kNames = 5  // version 2 only
};
inline constexpr std::size_t kSectionCount = 4;       // version 1
inline constexpr std::size_t kSectionCountNames = 5;  // version 2: the names section follows
inline constexpr const char* kSectionNames[kSectionCountNames] = {
    "row offsets", "chunk index", "adjacency", "permutation", "names"};
// Version 2's fifth table entry takes the first 32 reserved bytes.
inline constexpr std::size_t kOffReservedNames = kOffReserved + kSectionEntrySize;
// Version 3 (the census extension): its offset and checksum take the last 16 reserved bytes; its
// size is the rest of the file.
inline constexpr std::size_t kOffCensusOffset = 232;    // u64
inline constexpr std::size_t kOffCensusChecksum = 240;  // u64: XXH64 of the extension, seed 0
// The census extension is one zstd frame; its content may be at most this large (the reader
// allocates it).
inline constexpr std::uint64_t kMaxCensusBytes = std::uint64_t{1} << 28;
// The census extension's bytes for a payload: one zstd frame (level 3, with its content size and
// checksum). Both attach_census and the Writer frame it so (census_extension.cpp).
std::vector<unsigned char> census_frame(const std::vector<unsigned char>& payload);

// A chunk index entry: eight u64 fields.
inline constexpr std::size_t kChunkEntrySize = 64;
inline constexpr std::size_t kChunkFirstRow = 0;
inline constexpr std::size_t kChunkFirstEdge = 8;
inline constexpr std::size_t kChunkRows = 16;
inline constexpr std::size_t kChunkEdges = 24;
inline constexpr std::size_t kChunkFileOffset = 32;
inline constexpr std::size_t kChunkCompressedSize = 40;
inline constexpr std::size_t kChunkRawSize = 48;
inline constexpr std::size_t kChunkFrameChecksum = 56;  // XXH64 of the compressed frame, seed 0

inline constexpr std::uint32_t kKnownFlags = 0x7;  // kFlagDelta | kFlagWideIds | kFlagPlanes

inline std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void put_u32(unsigned char* p, std::uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline void put_u64(unsigned char* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}

}  // namespace tristream::tcsr::detail
