// host_model.cpp — the host memory of a candidate plan (plan/host_model.hpp).
#include "plan/host_model.hpp"

#include <algorithm>
#include <cmath>

#include "common/thread_pool.hpp"
#include "plan/sizes.hpp"
#include "tristream/error.hpp"
#include "tristream/stats.hpp"
#include "units.hpp"

namespace tristream::plan_internal {
namespace {

// The host bytes of a plan: row offsets, staging (`staging` bytes: the full slots or the ring of
// streamed staging), the decompression window, per-vertex arrays, the vertex scheme's sets.
std::uint64_t host_need(const HostModel& h, const Plan& plan, bool per_vertex, bool vertex_scheme,
                        std::uint64_t max_proxies, std::uint32_t window, std::uint64_t staging) {
  std::uint64_t b = (h.n + 1) * sizeof(eid_t);                // the file's row offsets
  b += staging;                                               // staging slots or pieces
  b += static_cast<std::uint64_t>(window) * h.max_chunk_raw;  // decompressed chunks
  if (per_vertex) b += h.n * sizeof(count_t) + plan.slots * plan.per_vertex_rows * sizeof(count_t);
  if (vertex_scheme)  // per slot: bitmap + rank of X, the X list
    b += plan.slots * ((h.n + 63) / 64 * 12 + max_proxies * sizeof(vid_t));
  return b;
}

// Streamed staging for a candidate whose full host slots do not fit the host budget: the
// in-core plan (p = 1, one unit) with a device (not the CPU backend's host memory) may build and
// upload its unit in pieces through a ring of kStagingBuffers host buffers. The pieces take what
// the budget leaves after the offsets and a window of two chunks (the columns are decompressed
// straight into the pieces), up to max(threads x largest chunk, 16 MiB) so a piece's chunks keep
// every core busy, at most kMaxStagingPiece and never more than the slot; at least
// kMinStagingPiece (or the whole slot when it is smaller). When two buffers would leave pieces
// of fewer chunks than threads, one buffer of twice the size is used instead: a piece's chunks
// are decompressed in parallel and the next piece waits for its upload, which is far shorter
// than building it (Kronecker 25 under a cgroup: 41 MiB pieces held 5 chunks of 8 MiB for 16
// threads). On success sets the plan's staging fields, *window (2) and *host; otherwise leaves
// everything as it was.
void streamed_staging(const HostModel& hm, Plan& plan, const PlanOptions& o, bool vs,
                      std::uint64_t max_prox, std::uint32_t* window, std::uint64_t* host) {
  if (o.device_is_host || o.host_budget == 0 || plan.partition.p > 1 || plan.units.size() != 1)
    return;
  const std::uint64_t fixed = host_need(hm, plan, o.per_vertex, vs, max_prox, 2, 0);
  if (fixed >= o.host_budget) return;
  const std::uint64_t width = static_cast<std::uint64_t>(hm.threads) * hm.max_chunk_raw;
  const std::uint32_t buffers =
      (o.host_budget - fixed) / kStagingBuffers < width ? 1 : kStagingBuffers;
  const std::uint64_t room = (o.host_budget - fixed) / buffers;
  const std::uint64_t target =
      std::min<std::uint64_t>(kMaxStagingPiece, std::max<std::uint64_t>(16ull << 20, width));
  std::uint64_t piece = std::min({room, target, align_up(plan.slot_bytes)});
  piece = piece / kAlign * kAlign;
  if (piece == 0 || piece < std::min(kMinStagingPiece, align_up(plan.slot_bytes))) return;
  const std::uint64_t ring = static_cast<std::uint64_t>(buffers) * piece;
  if (fixed + ring >= *host) return;  // no saving (a slot smaller than the ring)
  plan.piece_bytes = piece;
  plan.staging_buffers = buffers;
  *window = 2;
  *host = fixed + ring;
}

}  // namespace

HostModel host_model(std::uint64_t n, const std::vector<tcsr::ChunkInfo>& chunks,
                     const PlanOptions& o) {
  HostModel hm;
  hm.n = n;
  hm.threads = resolve_threads(o.threads);
  for (const auto& c : chunks)
    hm.max_chunk_raw = std::max<std::uint64_t>(hm.max_chunk_raw, c.edges * sizeof(vid_t));
  return hm;
}

std::uint32_t census_fine_cap(std::uint64_t host_budget) {
  if (host_budget < (std::uint64_t{4} << 20)) return UINT32_MAX;
  std::uint64_t cap = 64;
  while (2 * (2 * cap) * (2 * cap) * sizeof(eid_t) <= host_budget / 8) cap *= 2;
  return static_cast<std::uint32_t>(cap);
}

// The run's record of a plan: its work units and the pipeline's spans (PipelineStats::spans):
// a transform, an upload and a kernel span per unit and now and then a wait, allowed four, twice
// their bytes while their vector grows. The chunks' read and decompress spans, as many as the
// batches of chunks decompressed, are kept only for a trace (stream/recorder.hpp), which then
// needs more room than this. Counted
// under budgets of 4 MiB and more only: the planner's tests of tiny graphs plan with budgets of
// KiB, far below what a process needs anyway (as census_fine_cap).
std::uint64_t record_bytes(const Plan& plan, std::uint64_t host_budget) {
  if (host_budget < (std::uint64_t{4} << 20)) return 0;
  return plan.units.size() * (sizeof(WorkUnit) + 2 * 4 * sizeof(TraceSpan));
}

std::uint64_t fit_host(const HostModel& hm, Plan& plan, const PlanOptions& o) {
  const bool vs = plan.partition.scheme == Scheme::Vertex && plan.partition.p > 1;
  std::uint64_t max_prox = 0;
  for (const auto& u : plan.units) max_prox = std::max<std::uint64_t>(max_prox, vs ? u.c.rows : 0);
  std::uint32_t window = std::max<std::uint32_t>(2, 2 * hm.threads);
  const std::uint64_t full_slots = static_cast<std::uint64_t>(plan.slots) * plan.slot_bytes;
  const std::uint64_t record = record_bytes(plan, o.host_budget);
  auto over = [&](std::uint64_t host) { return o.host_budget && host + record > o.host_budget; };
  std::uint64_t host = host_need(hm, plan, o.per_vertex, vs, max_prox, window, full_slots);
  if (over(host)) {
    window = 2;
    host = host_need(hm, plan, o.per_vertex, vs, max_prox, window, full_slots);
  }
  if (over(host)) streamed_staging(hm, plan, o, vs, max_prox, &window, &host);
  if (over(host) && !plan.streamed_staging()) {
    // the last resort: one chunk at a time (decompressed on one thread; a row across chunks is
    // copied out of them one after another, stream/chunk_reader.hpp)
    window = 1;
    host = host_need(hm, plan, o.per_vertex, vs, max_prox, window, full_slots);
  }
  plan.window_chunks = window;
  plan.host_bytes = host + record;
  return plan.host_bytes;
}

void size_host_caches(const HostModel& hm, Plan& pl, const PlanOptions& o, eid_t m,
                      std::uint64_t host) {
  if (pl.partition.p <= 1) return;
  // What host memory is left keeps decompressed chunks for later units: with room for the
  // whole adjacency every chunk is decompressed once.
  const std::uint64_t raw_all = m * sizeof(vid_t);
  // Range and hash: the block cache pays off once it holds two row parts' blocks (the row part
  // of A and B stays while the row parts of C come and go) and the chunk cache one row part's
  // chunks (to build it in parallel); with room for every block they are all built once, up
  // front.
  const bool blocks = pl.partition.scheme != Scheme::Vertex;
  const std::uint64_t left =
      o.host_budget == 0 ? ~std::uint64_t{0} : (o.host_budget > host ? o.host_budget - host : 0);
  const std::uint64_t need_chunks = pl.row_part_chunk_bytes + 2 * hm.max_chunk_raw;
  if (!blocks) {
    pl.chunk_cache_bytes = std::min(raw_all, left);
    pl.block_cache_bytes = 0;
  } else if (o.host_budget == 0) {
    pl.chunk_cache_bytes = raw_all;
    pl.block_cache_bytes = pl.row_parts_bytes;
  } else if (left >= need_chunks + 2 * pl.row_part_max_bytes) {
    pl.chunk_cache_bytes = std::min(raw_all, need_chunks);
    pl.block_cache_bytes = std::min(pl.row_parts_bytes, left - pl.chunk_cache_bytes);
  } else {
    pl.chunk_cache_bytes = std::min(raw_all, left / 2);
    pl.block_cache_bytes = left / 2;
  }
  const bool chunks_fit = pl.chunk_cache_bytes >= std::min(raw_all, need_chunks);
  if (blocks && chunks_fit && pl.block_cache_bytes >= pl.row_parts_bytes) {
    pl.bytes_decompressed = std::min<std::uint64_t>(pl.bytes_decompressed, raw_all);
  } else if (blocks && chunks_fit && pl.block_cache_bytes >= 2 * pl.row_part_max_bytes) {
    const double walks = pl.partition.ranged() ? (pl.partition.p + 1) / 2.0 : 1.0;
    pl.bytes_decompressed = std::min<std::uint64_t>(
        pl.bytes_decompressed, static_cast<std::uint64_t>(walks * static_cast<double>(raw_all)));
  } else if (pl.chunk_cache_bytes >= raw_all) {
    pl.bytes_decompressed = std::min<std::uint64_t>(pl.bytes_decompressed, raw_all);
  }
}

}  // namespace tristream::plan_internal

namespace tristream {
namespace {

// Per worker thread beside its data: the stack it touches, a zstd decompression context and
// what the allocator keeps per thread: an allowance, not a measurement.
constexpr std::uint64_t kThreadBytes = std::uint64_t{1} << 20;

// The census of the default planner options (plan/planner.cpp: census_options) at its least,
// on one thread (census_threads drops threads to fit the budget): an F x F fine histogram and a
// decompressed chunk per thread, the merged histogram (later its prefix sums), the vertex
// groups' n-bit bitmaps and the proxy mask; F = min(n, 1024, census_fine_cap) unless --parts
// asks more.
std::uint64_t census_bytes(std::uint64_t n, std::uint64_t max_chunk, std::uint64_t budget) {
  const std::uint64_t F = std::min<std::uint64_t>(
      {std::max<std::uint64_t>(n, 1), 1024, plan_internal::census_fine_cap(budget)});
  const std::uint64_t hist = F * F * sizeof(eid_t);
  const std::uint64_t bitmaps = 16 * ((n + 63) / 64 * 8) + n * 2;
  return 2 * hist + max_chunk + bitmaps;
}

}  // namespace

std::uint64_t CountHost::plan_budget(std::uint64_t budget) const {
  if (!budget) return 0;
  const std::uint64_t outside = (runtime > offsets ? runtime - offsets : 0) + threads;
  return budget > outside ? budget - outside : 1;
}

std::uint64_t CountHost::degrees_budget(std::uint64_t budget) const {
  if (!budget) return 0;
  const std::uint64_t outside = runtime + threads + kept_counts;
  return budget > outside ? budget - outside : 1;
}

std::uint64_t CountHost::figures_budget(std::uint64_t budget) const {
  if (!budget) return 0;
  const std::uint64_t outside = runtime + threads;
  return budget > outside ? budget - outside : 1;
}

std::uint64_t per_vertex_order_bytes(std::uint64_t n) {
  return n * (3 * 8 + sizeof(std::uint32_t)) + n / 8 + 8;
}

std::uint64_t CountHost::floor(std::string* part) const {
  struct Need {
    std::uint64_t bytes;
    const char* what;  // a plural subject (the message says "need")
  };
  const std::uint64_t base = runtime + threads;
  // the plan gets 4 MiB at the least (the offsets, a chunk, two small slots; and below it the
  // census's buckets are not capped by the budget)
  const std::uint64_t least_plan = std::max(offsets + window, std::uint64_t{4} << 20);
  const Need needs[] = {{base - offsets + least_plan, "the row offsets and a decompressed chunk"},
                        {base + census, "the census's histograms, bitmaps and decompressed chunk"},
                        {base + degrees, "the degrees and the degree pass's chunks"},
                        {base + figures, "per-vertex arrays"}};
  const Need* top = &needs[0];
  for (const Need& x : needs)
    if (x.bytes > top->bytes) top = &x;
  if (part) *part = top->what;
  return top->bytes;
}

CountHost count_host(std::uint64_t n, const std::vector<tcsr::ChunkInfo>& chunks, unsigned threads,
                     std::uint64_t resident, bool per_vertex, bool clustering, bool names,
                     std::uint64_t budget, std::uint64_t declared) {
  CountHost h;
  const std::uint64_t T = resolve_threads(threads);
  std::uint64_t max_raw = 0, max_frame = 0;
  for (const auto& c : chunks) {
    max_raw = std::max<std::uint64_t>(max_raw, c.edges * sizeof(vid_t));
    max_frame = std::max<std::uint64_t>(max_frame, c.compressed_size);
  }
  h.offsets = (n + 1) * sizeof(eid_t);
  h.runtime = std::max(resident, h.offsets);
  // the pools of the count (building, copies), the preload's decompressor and the calling
  // thread; the decompressing ones (the building pool, the preload's, the caller) hold a piece
  // of a compressed frame each (tcsr::Reader::read_chunk reads a frame a piece at a time) and
  // the scratch that turns a chunk's byte planes back into ids
  const std::uint64_t frame = std::min<std::uint64_t>(max_frame, tcsr::Reader::kFramePieceBytes) +
                              std::min<std::uint64_t>(max_raw, tcsr::Reader::kPlaneScratchBytes);
  h.threads = (2 * T + 2) * kThreadBytes + (T + 2) * frame;
  h.window = max_raw;  // a window of one chunk (fit_host's last resort)
  // (at the smallest plan budget that passes the floor, 4 MiB, the buckets are capped)
  h.census = census_bytes(n, max_raw, std::max(h.plan_budget(budget), std::uint64_t{4} << 20));
  // n degrees and a chunk (on one thread at the least); beside them the per-vertex counts.
  // Without per-vertex figures only the wedges are wanted: 32-bit in-degrees (streamed_wedges).
  h.kept_counts = per_vertex ? n * sizeof(count_t) : 0;
  h.degrees = n * (per_vertex ? sizeof(eid_t) : sizeof(std::uint32_t)) + max_raw + h.kept_counts;
  if (per_vertex) {
    // At the peak (api/count.cpp: per_vertex_figures): the ids, counts and degrees put in id
    // order in place (through a 32-bit order when the budget holds per_vertex_order_bytes, else
    // sorted as they are); the declared isolated vertices merged in by growing the three to
    // `total` entries one at a time (the old array beside the new) while their ids are held, 32
    // bytes per entry at the most; then the three beside the clustering and the names (strings).
    const std::uint64_t total = std::max(n, declared);
    const std::uint64_t merge = declared ? 32 * total : 0;
    const std::uint64_t results =
        3 * total * 8 + (clustering ? total * sizeof(double) : 0) + (names ? 48 * total : 0);
    h.figures = std::max({3 * n * 8, merge, results});
  }
  return h;
}

void check_host_floor(const CountHost& h, std::uint64_t budget) {
  if (!budget) return;
  std::string part;
  const std::uint64_t need = h.floor(&part);
  if (need <= budget) return;
  throw Error(ErrorKind::Usage, part + " need " + format_bytes(need) + " of host memory; " +
                                    format_bytes(budget) + " given (the process itself holds " +
                                    format_bytes(h.runtime + h.threads) +
                                    "); raise --host-memory or the memory limit to " +
                                    format_bytes(need) + " or more");
}

}  // namespace tristream
