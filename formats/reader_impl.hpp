// reader_impl.hpp — formats internals: the state of an open tcsr::Reader (Reader::Impl), shared
// by reader.cpp (opening and validating a file, the census, loading), reader_offsets.cpp (the
// row offsets) and reader_chunks.cpp (decompressing and checking one chunk).
#pragma once

#include <algorithm>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "input_file.hpp"
#include "layout.hpp"
#include "names.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {

using namespace detail;  // the layout constants (a private header of formats/)

struct Section {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t checksum = 0;
};

struct Reader::Impl {
  std::string path;
  Header header;
  std::unique_ptr<InputFile> file;
  std::uint64_t size = 0;
  unsigned char head[kHeaderSize] = {};
  Section sections[kSectionCountNames];
  std::size_t section_count = kSectionCount;  // kSectionCountNames in version 2
  Names names;                                // version 2: read and validated at open
  Section census_section;                     // version 3: the census extension (read on demand)
  std::vector<ChunkInfo> chunks;
  std::vector<std::uint64_t> frame_checksums;
  std::unique_ptr<eid_t[]> offset_store;  // n + 1 row offsets, read at open
  // OpenOptions::offsets_checksum_later: the offsets' digest, computed on a thread of its own
  // (declared after offset_store: destroyed first, it waits for the thread before they go).
  bool offsets_checksum_later = false;
  std::shared_future<std::uint64_t> offsets_digest;
  const eid_t* offsets = nullptr;

  [[noreturn]] void fail(const std::string& section, const std::string& what) const {
    throw Error(ErrorKind::Input, path + ": section " + section + ": " + what);
  }
  [[noreturn]] void fail_chunk(const char* section, std::uint64_t k,
                               const std::string& what) const {
    fail(section, "chunk " + std::to_string(k) + ": " + what);
  }
  const Section& sec(SectionKind kind) const { return sections[kind - 1]; }
  // Reads a whole section (placed inside the file at open) into dst and verifies its checksum.
  void read_section(SectionKind kind, void* dst) const {
    const Section& s = sec(kind);
    file->read(s.offset, s.size, dst);
    check_section_digest(kind, xxh64(dst, s.size));
  }
  // A section's digest (of the bytes read) against the section table's checksum.
  void check_section_digest(SectionKind kind, std::uint64_t digest) const {
    if (digest != sec(kind).checksum) {
      if (file->changed()) file->fail_changed();
      fail(kSectionNames[kind - 1], "checksum mismatch (file damaged)");
    }
  }

  std::uint64_t row_of(eid_t e) const {
    return static_cast<std::uint64_t>(std::upper_bound(offsets, offsets + header.n + 1, e) -
                                      offsets) -
           1;
  }

  void open_file();
  void parse_header();
  void check_header_counts();
  void place_sections();
  void parse_offsets();
  void parse_index();
  void parse_names();
  std::vector<unsigned char> read_census(std::size_t limit) const;
  void read_chunk(std::uint64_t k, vid_t* out) const;
  [[noreturn]] void report_bad_row(std::uint64_t k, std::uint64_t r, const vid_t* begin,
                                   const vid_t* end) const;
};

}  // namespace tristream::tcsr
