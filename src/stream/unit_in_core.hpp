// stream/unit_in_core.hpp — the in-core unit (p = 1): the whole graph as one block A.
//
// build(): the file's offsets rebased to 0 and the columns decompressed straight into the slot.
// build_streamed(): the same slot image (offsets, columns, zero padding) produced piece by piece
// into the backend's staging buffers (Staging), each piece uploaded to its offset in the device
// slot as soon as it is built, so building piece k + 1 overlaps the copy of piece k. Pieces may
// have any size; the host holds at most the staging buffers and two chunks.
#pragma once

#include <cstdint>

#include "stream/chunk_reader.hpp"
#include "stream/in_core_image.hpp"
#include "stream/row_claims.hpp"
#include "stream/slot_state.hpp"

namespace tristream::stream {

// How the in-core unit travels: the plan's streamed staging, else the full host slot; with
// TRISTREAM_IN_CORE_STAGING=stream, on a device (not the CPU backend's host memory), streamed
// through a ring of `buffers` pinned pieces even when the plan has a full host slot: the first
// upload then starts once the first piece (a chunk per thread) is decompressed, and only the ring
// is pinned. Measured slower than the full slot on the H100 (docs/out-of-core.md), hence not the
// default. piece_bytes 0: the full host slot.
struct InCoreStaging {
  std::uint64_t piece_bytes = 0;
  int buffers = 0;
};
InCoreStaging in_core_staging(const Plan& plan, const GraphSource& g, unsigned threads,
                              bool device_is_host);

// The in-core image streamed in row pieces (build_from_image): whether an image that is not
// registered goes that way on this backend (PipelineOptions::row_pieces_from; the environment's
// TRISTREAM_IN_CORE_PIECES=0 turns it off, =1 on for any size), and the staging ring it takes:
// pieces of
// kRowPieceBytes at most, about 32 per image at least, in kRowPieceBuffers buffers.
constexpr std::uint64_t kRowPieceBytes = 32ull << 20;
constexpr int kRowPieceBuffers = 3;
bool image_in_row_pieces(const InCoreImage& image, StreamingBackend& backend,
                         std::uint64_t from_bytes);
InCoreStaging row_piece_staging(const InCoreImage& image);

class InCoreUnitBuilder {
 public:
  // copy_pool: the offsets' copy. All outlive the builder.
  InCoreUnitBuilder(ChunkReader& reader, ThreadPool& copy_pool, Recorder& rec);
  // Precondition: L's block A is placed (rows, edges, offsets_at, cols_at) in the host slot.
  void build(unsigned char* slot, UnitLayout& L);
  // Returns false when SIGINT stopped the build between two pieces. Precondition as build().
  bool build_streamed(UnitLayout& L, Staging& sg);
  // The in-core image through the staging ring, from its last bytes to its first: the columns
  // piece by piece as the image has them, and the offsets of the rows counted before each count;
  // the rows whose columns are all sent
  // are counted (StreamingBackend::count_rows_async) whenever the device has finished the
  // earlier counts (rows_busy) and they hold 1/kRowCounts of the edges, while the pieces below
  // them decode and upload; the rest at the end. With claims (use_claims) the runs of rows this
  // GPU claims instead, each when its device is idle, after the last piece until every row is
  // claimed (rows_left 0; nothing sent when every row was claimed before it began). Sets
  // L.row_pieces and L.rows_left. Returns false when SIGINT stopped it between two pieces;
  // rethrows the image's failure. Preconditions as build(), the image given (use_image).
  bool build_from_image(UnitLayout& L, Staging& sg);
  // Seconds waited for staging buffers since the last call.
  double take_waited();
  // The in-core image (stream/in_core_image.hpp) that build() is given as its slot: build()
  // then waits for it and uploads it whole as one direct upload instead of building.
  void use_image(InCoreImage* image) { image_ = image; }
  bool has_image() const { return image_ != nullptr; }
  // build_from_image counts only the rows it claims here (several GPUs sharing the unit); null:
  // every row.
  void use_claims(RowClaims* claims) { claims_ = claims; }

 private:
  void rebased_offsets(std::uint64_t r0, std::uint64_t r1, eid_t* o);
  // The staging ring: the next buffer, once its last copy has finished (the wait recorded for
  // `unit`); then its `bytes` sent to byte `at` of the slot.
  int next_buffer(Staging& sg, std::int64_t unit);
  void send_buffer(Staging& sg, int buf, std::uint64_t at, std::uint64_t bytes);
  ChunkReader& reader_;
  const GraphSource& g_;
  ThreadPool& copy_pool_;
  Recorder& rec_;
  double waited_s_ = 0;
  InCoreImage* image_ = nullptr;
  RowClaims* claims_ = nullptr;
};

}  // namespace tristream::stream
