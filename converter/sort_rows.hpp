// sort_rows.hpp — converter internals: the in-memory sorts of the oriented rows of G+, straight
// from edge keys (row << 32 | col, or a << 32 | b oriented by a rank table on the way) into the
// 4-byte columns of the rows in order, each row's length counted, no 8-byte sorted copy kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "sort.hpp"
#include "util.hpp"

namespace tristream::conv {

// Whether the row sorts take m oriented keys up to max_key: at least 2^16 of them, and the sort's
// digit in the row (every bucket holds whole rows).
bool rows_sortable(std::uint64_t max_key, std::size_t m);

// Whether sort_rows_narrow takes oriented keys (row << 32 | col, every col below 2^col_bits) up to
// max_key: the sort's digit lies in the row, and the row's bits below it with the column's fit in
// 32 bits (graphs of up to about 2^22 vertices).
bool rows_fit_narrow(std::uint64_t max_key, int col_bits);

// Told by a sort's worker that the rows [row0, row0 + rows) are in place: their columns in cols
// from first_edge on, sorted, their lengths in fill (rows at or past the graph's last may be
// among them, with no edges). Every row is told once, in any order and from any worker, as soon
// as its bucket is done; concurrent calls happen.
using RowsPlaced =
    std::function<void(std::uint64_t row0, std::uint64_t rows, std::uint64_t first_edge)>;

// Sorts the keys of in.spans, oriented (rows of G+) or already row << 32 | col, straight into the
// columns: the scatter writes each key as 32 bits (the row's bits below the digit, then the
// column) into cols (filled in small pages, so 4 bytes a key), each bucket is sorted on its own
// and its rows counted into fill (zeroed by the caller, an entry per row), leaving cols[0, m) the
// columns of the rows in order. Preconditions: in.max_key given, rows_fit_narrow(in.max_key,
// col_bits), at least 2^16 keys, no repeats (checked), cols.capacity() at least the keys. Returns
// the number of keys.
std::size_t sort_rows_narrow(const SpanSortInput& in, int col_bits, BigBuffer<std::uint32_t>& cols,
                             std::uint32_t* fill, unsigned threads,
                             const RowsPlaced& placed = nullptr);

// The same for graphs of any size: the scatter writes the keys (8 bytes each, into a buffer of
// its own filled in small pages); each bucket (whole rows) is then sorted by column (LSD radix,
// one or two digits) and its columns placed at their rows of cols by a stable counting sort on
// the row, its rows counted into fill, its keys' pages dropped once placed (so about 8 bytes a
// key at the peak, cols' 4 included). Preconditions: in.max_key given with
// sort_shift(in.max_key) >= 32, at least 2^16 keys, no repeats (checked), cols.capacity() at
// least the keys. Returns the number of keys (cols' size).
std::size_t sort_rows_wide(const SpanSortInput& in, BigBuffer<std::uint32_t>& cols,
                           std::uint32_t* fill, unsigned threads,
                           const RowsPlaced& placed = nullptr);

// sort_rows_narrow where the rows fit it (rows_fit_narrow, the columns' bits those of
// in.max_key's low 32 bits), else sort_rows_wide; cols' capacity grown to the keys where it is
// less (its contents then discarded). Preconditions: rows_sortable(in.max_key, keys), no repeats
// (checked once every bucket is done: `placed` may have been told of rows before the check
// throws). Returns the number of keys.
std::size_t sort_rows(const SpanSortInput& in, BigBuffer<std::uint32_t>& cols, std::uint32_t* fill,
                      unsigned threads, const RowsPlaced& placed = nullptr);

}  // namespace tristream::conv
