// stream/unit_in_core.cpp — the in-core unit, whole or streamed in pieces
// (stream/unit_in_core.hpp).
#include "stream/unit_in_core.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "stream/clock.hpp"
#include "stream/column_cursor.hpp"
#include "stream/parallel_copy.hpp"

namespace tristream::stream {

InCoreStaging in_core_staging(const Plan& plan, const GraphSource& g, unsigned threads,
                              bool device_is_host) {
  InCoreStaging s;
  if (plan.streamed_staging()) {
    s.piece_bytes = plan.piece_bytes;
    s.buffers = static_cast<int>(plan.staging_buffers);
    return s;
  }
  // The full slot by default: on the H100 the pieces were slower (docs/out-of-core.md).
  const char* env = std::getenv("TRISTREAM_IN_CORE_STAGING");
  if (device_is_host || plan.partition.p > 1 || plan.units.size() != 1 ||
      !(env && std::string(env) == "stream"))
    return s;
  // Pieces of a chunk per thread (every core decompresses), 16 MiB to kMaxStagingPiece, in the
  // device's alignment; a unit of one piece or less keeps its full slot.
  std::uint64_t max_chunk = 0;
  for (const auto& c : g.chunks()) max_chunk = std::max<std::uint64_t>(max_chunk, c.edges * 4);
  std::uint64_t piece = std::min<std::uint64_t>(
      kMaxStagingPiece, std::max<std::uint64_t>(16ull << 20, std::uint64_t{threads} * max_chunk));
  piece = piece / 256 * 256;
  if (piece == 0 || plan.slot_bytes <= piece) return s;
  s.piece_bytes = piece;
  s.buffers = static_cast<int>(kStagingBuffers);
  return s;
}

bool image_in_row_pieces(const InCoreImage& image, StreamingBackend& backend,
                         std::uint64_t from_bytes) {
  const char* env = std::getenv("TRISTREAM_IN_CORE_PIECES");
  if (env && std::string(env) == "1") from_bytes = 0;
  if ((env && std::string(env) == "0") || backend.device_is_host() || image.registered() ||
      image.bytes() < from_bytes)
    return false;
  return backend.counts_row_pieces(image.source_offsets(), image.n());
}

InCoreStaging row_piece_staging(const InCoreImage& image) {
  InCoreStaging s;
  const std::uint64_t piece =
      std::min(kRowPieceBytes, image.bytes() / 32) / kSlotAlign * kSlotAlign;
  s.piece_bytes = std::max<std::uint64_t>(kSlotAlign, piece);
  s.buffers = kRowPieceBuffers;
  return s;
}

InCoreUnitBuilder::InCoreUnitBuilder(ChunkReader& reader, ThreadPool& copy_pool, Recorder& rec)
    : reader_(reader), g_(reader.graph()), copy_pool_(copy_pool), rec_(rec) {}

double InCoreUnitBuilder::take_waited() {
  const double w = waited_s_;
  waited_s_ = 0;
  return w;
}

// p = 1: offsets copied, columns decompressed straight into the slot.
void InCoreUnitBuilder::build(unsigned char* slot, UnitLayout& L) {
  SlotBlock& b = L.blocks[L.a];
  if (image_ && slot == image_->data()) {
    // The image holds the slot's bytes already (the same layout): waited for, sent whole.
    TS_CHECK(L.bytes <= image_->bytes() && b.rows == image_->n() && b.edges == image_->m(),
             "the in-core image does not match the unit");
    const double w0 = now_s();
    image_->wait();
    waited_s_ += now_s() - w0;
    L.direct.push_back({slot, 0, L.bytes});
    L.upload_from = L.bytes;
    return;
  }
  const eid_t* off = g_.offsets();
  rebased_offsets(0, b.rows + 1, reinterpret_cast<eid_t*>(slot + b.offsets_at));
  reader_.read_range(off[0], off[b.rows], reinterpret_cast<vid_t*>(slot + b.cols_at), L.unit);
}

bool InCoreUnitBuilder::build_streamed(UnitLayout& L, Staging& sg) {
  const SlotBlock& b = L.blocks[L.a];
  const eid_t* off = g_.offsets();
  const eid_t base = off[0];
  const std::uint64_t off_lo = b.offsets_at, off_hi = off_lo + (b.rows + 1) * sizeof(eid_t);
  const std::uint64_t col_lo = b.cols_at, col_hi = col_lo + b.edges * sizeof(vid_t);
  TS_CHECK(sg.piece_bytes > 0 && sg.buffers > 0, "streamed staging needs pieces");
  ColumnCursor cursor(g_, reader_.pool(), rec_, L.unit);
  std::vector<eid_t> otmp;
  std::vector<vid_t> ctmp;
  // Writes bytes [lo, hi) of an array region starting at byte `at` whose elements (of type T)
  // `make(i0, i1, T* out)` produces: straight into dst when element-aligned, else through tmp.
  auto region = [](std::uint64_t lo, std::uint64_t hi, std::uint64_t at, unsigned char* dst,
                   auto* tmp, auto&& make) {
    using T = typename std::remove_pointer_t<decltype(tmp)>::value_type;
    const std::uint64_t i0 = (lo - at) / sizeof(T), i1 = (hi - at + sizeof(T) - 1) / sizeof(T);
    const bool aligned = (lo - at) % sizeof(T) == 0 && (hi - at) % sizeof(T) == 0 &&
                         reinterpret_cast<std::uintptr_t>(dst) % alignof(T) == 0;
    if (aligned) {
      make(i0, i1, reinterpret_cast<T*>(dst));
    } else {
      tmp->resize(i1 - i0);
      make(i0, i1, tmp->data());
      std::memcpy(
          dst, reinterpret_cast<const unsigned char*>(tmp->data()) + ((lo - at) - i0 * sizeof(T)),
          hi - lo);
    }
  };
  for (std::uint64_t lo = L.upload_from; lo < L.bytes; lo += sg.piece_bytes) {
    if (interrupt_requested()) return false;
    const std::uint64_t hi = std::min(L.bytes, lo + sg.piece_bytes);
    const int buf = next_buffer(sg, L.unit);
    unsigned char* dst = sg.backend->staging_buffer(buf);
    // the parts of [lo, hi): zero padding, offsets, columns
    auto part = [&](std::uint64_t a, std::uint64_t z, auto&& fn) {
      a = std::max(a, lo);
      z = std::min(z, hi);
      if (a < z) fn(a, z, dst + (a - lo));
    };
    auto zero = [](std::uint64_t a, std::uint64_t z, unsigned char* d) {
      std::memset(d, 0, z - a);
    };
    part(0, off_lo, zero);
    part(off_lo, off_hi, [&](std::uint64_t a, std::uint64_t z, unsigned char* d) {
      region(a, z, off_lo, d, &otmp,
             [&](std::uint64_t i0, std::uint64_t i1, eid_t* o) { rebased_offsets(i0, i1, o); });
    });
    part(off_hi, col_lo, zero);
    part(col_lo, col_hi, [&](std::uint64_t a, std::uint64_t z, unsigned char* d) {
      region(a, z, col_lo, d, &ctmp, [&](std::uint64_t i0, std::uint64_t i1, vid_t* o) {
        cursor.read(base + i0, base + i1, o);
      });
    });
    part(col_hi, L.bytes, zero);
    send_buffer(sg, buf, lo, hi - lo);
  }
  return true;
}

bool InCoreUnitBuilder::build_from_image(UnitLayout& L, Staging& sg) {
  const SlotBlock& b = L.blocks[L.a];
  TS_CHECK(image_ && L.upload_from == 0 && L.bytes <= image_->bytes() && b.offsets_at == 0 &&
               b.rows == image_->n() && b.edges == image_->m() &&
               b.cols_at == image_->column_offset(),
           "the in-core image does not match the unit");
  TS_CHECK(sg.piece_bytes > 0 && sg.buffers > 0, "row pieces need staging pieces");
  L.row_pieces = true;
  L.rows_left = 0;
  if (claims_ && claims_->exhausted()) return true;  // (another GPU claimed every row)
  const eid_t* off = image_->source_offsets();       // (the image's own: the file's, from 0)
  const unsigned char* img = image_->data();
  double waited = 0;  // for the image (the staging buffers' waits: next_buffer)
  // Sends bytes [lo, hi) of the image (which it holds already) through the staging buffers.
  auto send = [&](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t at = lo; at < hi; at += sg.piece_bytes) {
      const std::uint64_t bytes = std::min(sg.piece_bytes, hi - at);
      const int buf = next_buffer(sg, L.unit);
      par_copy(copy_pool_, {CopyJob{sg.backend->staging_buffer(buf), img + at, bytes}});
      send_buffer(sg, buf, at, bytes);
    }
  };
  auto waiting = [&](bool ready) {
    if (ready) return;
    image_->wait();  // rethrows why the image ended without them
    throw Error(ErrorKind::Internal, "the in-core image ended without all its rows");
  };
  // 1. The offsets as the counts need them: a count of rows from r on reads the offsets of rows
  //    r to n only (its columns and theirs lie above r), so they are sent from the end too, each
  //    part before the first count that reads it (the padding after them with the first).
  double w0 = now_s();
  waiting(image_->wait_offsets());
  waited += now_s() - w0;
  std::uint64_t offsets_sent = b.cols_at;  // bytes [offsets_sent, cols_at) are on the device
  auto send_offsets_from = [&](std::uint64_t r) {
    const std::uint64_t at = b.offsets_at + r * sizeof(eid_t);
    if (at < offsets_sent) send(at, offsets_sent);
    offsets_sent = std::min(offsets_sent, at);
  };
  // Several GPUs (claims_): a run of rows claimed, its offsets sent and its count enqueued.
  auto count_claimed = [&](std::uint64_t avail, bool last) {
    std::uint64_t r0 = 0, r1 = 0;
    if (!claims_->claim(avail, last, &r0, &r1)) return false;
    send_offsets_from(r0);
    sg.backend->count_rows_async(sg.slot, L, r0, r1);
    return true;
  };
  // 2. The columns from the end, a piece at a time; rows [r, counted) are counted once every
  //    column of row r and above is sent, they hold a share of the edges and the device has
  //    finished the earlier counts (all of them at the end: queued behind those). With claims,
  //    the rows this GPU claims whenever its device is idle.
  const std::uint64_t share = std::max<std::uint64_t>(1, b.edges / kRowCounts);
  std::uint64_t counted = b.rows;
  const std::uint64_t span = L.bytes - b.cols_at;
  std::uint64_t pieces = (span + sg.piece_bytes - 1) / sg.piece_bytes;
  while (pieces-- > 0) {
    if (interrupt_requested()) return false;
    const std::uint64_t lo = b.cols_at + pieces * sg.piece_bytes;
    const std::uint64_t hi = std::min(L.bytes, lo + sg.piece_bytes);
    const eid_t e0 = (lo - b.cols_at) / sizeof(vid_t);
    const eid_t e1 = (hi - b.cols_at + sizeof(vid_t) - 1) / sizeof(vid_t);
    w0 = now_s();
    waiting(image_->wait_edges(e0, e1));
    waited += now_s() - w0;
    send(lo, hi);
    // the rows whose columns all lie at or above edge e0
    const std::uint64_t r =
        pieces == 0 ? 0
                    : static_cast<std::uint64_t>(std::lower_bound(off, off + b.rows + 1, e0) - off);
    if (claims_) {
      if (!sg.backend->rows_busy(sg.slot)) (void)count_claimed(r, pieces == 0);
      continue;
    }
    if (r < counted &&
        (pieces == 0 || (off[counted] - off[r] >= share && !sg.backend->rows_busy(sg.slot)))) {
      send_offsets_from(r);
      sg.backend->count_rows_async(sg.slot, L, r, counted);
      counted = r;
    }
  }
  waited_s_ += waited;
  if (claims_) {
    // 3. Every column is on the device: the runs left, each claimed once the device has
    //    finished this GPU's earlier counts (then the last runs go to the GPU that is free).
    for (;;) {
      if (interrupt_requested()) return false;
      if (sg.backend->rows_busy(sg.slot)) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      if (!count_claimed(0, true)) return true;
    }
  }
  send_offsets_from(0);
  L.rows_left = counted;
  return true;
}

int InCoreUnitBuilder::next_buffer(Staging& sg, std::int64_t unit) {
  const int buf = static_cast<int>(sg.next % static_cast<std::uint64_t>(sg.buffers));
  const double w0 = now_s();
  sg.backend->wait_staging(buf);
  const double w1 = now_s();
  if (sg.next >= static_cast<std::uint64_t>(sg.buffers)) {  // (the first round waits for none)
    rec_.span("wait", unit, w0, w1, 0);
    waited_s_ += w1 - w0;
  }
  return buf;
}

void InCoreUnitBuilder::send_buffer(Staging& sg, int buf, std::uint64_t at, std::uint64_t bytes) {
  sg.backend->upload_piece_async(sg.slot, at, buf, bytes);
  ++sg.next;
}

void InCoreUnitBuilder::rebased_offsets(std::uint64_t r0, std::uint64_t r1, eid_t* o) {
  const eid_t* off = g_.offsets();
  const eid_t base = off[0];
  const std::uint64_t rows = r1 - r0;
  copy_pool_.parallel_for(rows, 65536, [&](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t r = r0 + lo; r < r0 + hi; ++r) o[r - r0] = off[r] - base;
  });
}

}  // namespace tristream::stream
