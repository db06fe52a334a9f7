// writer_impl.hpp — tcsr internals: tcsr::Writer's state and steps, shared by writer.cpp (the
// writer's making, its rows and their chunks) and writer_sections.cpp (the file's end: the
// sections after the adjacency, the census, the header, the fsyncs and the rename).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chunk_writer.hpp"
#include "common/thread_pool.hpp"
#include "layout.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::tcsr {

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

  detail::RowOffsets offsets{0};  // rows appended so far + 1
  std::vector<vid_t> in_degree;   // for the header's maximum degree (made at the first row)
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
  std::uint64_t file_pos = detail::kHeaderSize;
  std::unique_ptr<detail::ChunkWriter> cw;  // compresses and writes the frames; their index entries

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
  void flush(bool final);

  // Throws for a row that breaks append_row's rules.
  void check_row(std::uint64_t row, const vid_t* cols, std::uint64_t count) const;
  // check_row's rules without a branch per id (ids strictly ascending, the first above the row,
  // the last below n): whether they hold; check_row then says which one does not.
  bool row_ok(std::uint64_t row, const vid_t* cols, std::uint64_t count) const;

  // The ids of checked rows: counted for the header, then into the batch, which is compressed
  // whenever it fills. With in_place, a run that fills the batch is compressed where it lies: the
  // pending ids topped up to whole chunks, then the run's whole chunks read in place (no copy,
  // each delta-coded into its worker's own chunk buffer), the pending chunks first, all handed
  // to the chunk writer at once (its window of a batch of frames bounds the memory, with no
  // barrier between batches); the rest is kept.
  void take_ids(const vid_t* cols, std::uint64_t count);

  void write_jobs(std::vector<detail::ChunkJob>& jobs);

  void append_row(const vid_t* cols, std::uint64_t count);

  // 1. The rows are checked and their offsets appended on all threads, in pieces of about equal
  //    rows plus edges (the first bad row is then checked alone for its message, the offsets as
  //    they were), 2. their ids taken as one run.
  void append_rows(const vid_t* cols, const eid_t* row_offsets, std::uint64_t rows);

  // The names section (after the permutation, which ends 8-byte aligned): n + 1 u64 offsets,
  // then the bytes. Names are indexed by original id, so the permutation must hold 0..n-1.
  void write_names();

  // The sections' entries of the header, filled by write_sections.
  unsigned char header[detail::kHeaderSize] = {};
  bool sections_written = false;
  std::uint64_t max_degree = 0;

  void section(std::size_t index, detail::SectionKind kind, std::uint64_t offset,
               std::uint64_t size, std::uint64_t checksum);

  // Everything but the census and the header: the last chunk, then the row offsets, the chunk
  // index and the permutation (checksummed and written at their places on the writer's threads)
  // and the names; their writeback started.
  void write_sections();

  void finish();
};

}  // namespace tristream::tcsr
