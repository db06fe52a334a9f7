// parse.hpp — converter internals: parsing one block of an edge list into canonical records.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "util.hpp"

namespace tristream::conv {

// What a text block parser checks besides the ids themselves.
struct TextSpec {
  bool mtx = false;  // Matrix Market body: indices checked against rows / cols
  std::uint64_t mtx_rows = 0;
  std::uint64_t mtx_cols = 0;
  std::uint64_t entry_limit = UINT64_MAX;  // more entries than this in the block is an error
};

// One parsed block: its edges as canonical records (a < b; self-loops counted, not stored).
struct Block {
  BigBuffer<Edge64> edges;
  std::uint64_t records = 0;  // edge records (entries) read, self-loops included
  std::uint64_t loops = 0;
  std::uint64_t lines = 0;  // newline characters in the block
  std::uint64_t max_id = 0;
  std::uint64_t bytes = 0;  // input bytes of the block
  // The first error in the block, at local line error_line (1-based; 0 for binary blocks).
  bool error = false;
  std::uint64_t error_line = 0;
  std::string error_msg;
  // Sorted unique endpoints of the edges (filled when the block is sorted for spilling).
  BigBuffer<std::uint64_t> ids;
  bool sorted = false;
  std::exception_ptr failure;  // a job that threw (not an input error)
  std::shared_ptr<void> text;  // the raw input, kept until the driver has checked the block
};

// Parses text [p, p + len) (whole lines; the last one may lack its newline).
void parse_text(const char* p, std::size_t len, const TextSpec& spec, Block& out);
// Converts little-endian uint32 (wide = false) or uint64 pairs; len is a multiple of the pair size.
void parse_binary(const char* p, std::size_t len, bool wide, Block& out);
// Sorts the block's edges, removes repeats and fills ids (for the out-of-core path).
void sort_block(Block& b);

}  // namespace tristream::conv
