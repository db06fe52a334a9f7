// order.cpp — the unit order of a plan with the device block cache (plan/order.hpp): the column
// order, the tail cover, and the choice of order and units in flight by the estimated line.
#include "plan/order.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "plan/cost.hpp"
#include "plan/replay.hpp"

namespace tristream::plan_internal {

WorkUnit unit_slice(const WorkUnit& w, std::uint32_t slice, std::uint32_t slices) {
  WorkUnit s = w;
  s.slice = slice;
  s.slices = slices;
  s.work = w.work / slices;
  if (slice > 0) s.decompress_bytes = 0;  // its blocks were built for the first slice
  return s;
}

// PlanRates::kernel_s_per_unit), at most this many per moved unit.
constexpr double kCoverSliceSeconds = 1e-3;
constexpr std::uint64_t kMaxCoverSlices = 128;

// With the device block cache and uploads running ahead of the kernels, an upload is hidden when
// kernels run beside it. Range orders end with the low row parts: millions of short rows, many
// bytes to upload and little work, so the tail of the order is upload-bound. This moves units
// of much work and few bytes from the head of the order into that tail, cut into slices
// spread so that each covers the uploads around it, when the estimate (estimated_exposed_upload,
// after the cache replay of the new order) says fewer upload seconds are left exposed. Returns the
// units moved.
std::size_t cover_upload_tail(Plan& plan, bool per_vertex) {
  std::vector<WorkUnit>& U = plan.units;
  if (plan.device_cache_bytes == 0 || plan.in_flight <= 2 || U.size() < 8) return 0;
  // a unit's upload seconds beyond its kernel's
  auto surplus = [&](std::size_t u) {
    return upload_seconds(plan, static_cast<double>(U[u].upload_bytes)) -
           kernel_seconds(plan, U[u]);
  };
  // 1. The suffix whose uploads exceed its kernels the most.
  double sum = 0, excess = 0;
  std::size_t tail = U.size();
  for (std::size_t x = U.size(); x-- > 0;) {
    sum += surplus(x);
    if (sum > excess) {
      excess = sum;
      tail = x;
    }
  }
  if (excess <= 0 || tail == 0) return 0;
  // 2. Donors from the head, most kernel time per second of a cold upload first, until their
  // net cover (kernel minus cold upload) reaches the excess.
  std::vector<std::size_t> cand(tail);
  std::iota(cand.begin(), cand.end(), std::size_t{0});
  auto net = [&](std::size_t u) {
    return kernel_seconds(plan, U[u]) - upload_seconds(plan, cold_upload_bytes(U[u]));
  };
  auto ratio = [&](std::size_t u) { return U[u].work / (cold_upload_bytes(U[u]) + 1.0); };
  std::stable_sort(cand.begin(), cand.end(),
                   [&](std::size_t x, std::size_t y) { return ratio(x) > ratio(y); });
  std::vector<char> donor(U.size(), 0);
  std::vector<std::size_t> donors;
  double got = 0;
  for (std::size_t c : cand) {
    if (got >= excess || net(c) <= 0) break;
    donor[c] = 1;
    donors.push_back(c);
    got += net(c);
  }
  if (donors.empty()) return 0;
  std::sort(donors.begin(), donors.end());  // they keep their relative order
  // 3. Each donor cut into slices (WorkUnit::slices) whose kernels are about what the tail
  // leaves exposed per unit, at least kCoverSliceSeconds each (a launch has its fixed cost): the
  // device's room lets uploads run only a few units ahead, so one long kernel hides the uploads
  // of the few units that fit beside it, while slices spread through the tail hide them all. The
  // slices of a donor keep its blocks on the device between them (their next use is near), so
  // only the first uploads.
  struct Piece {
    std::size_t unit;
    std::uint32_t slice, slices;
    double net;
  };
  const double per_tail_unit = excess / static_cast<double>(U.size() - tail);
  const double slice_s = std::max(kCoverSliceSeconds, per_tail_unit);
  std::vector<Piece> pieces;
  for (std::size_t d : donors) {
    const double work_s = kernel_seconds(plan, U[d]) - plan.rates.kernel_s_per_unit;
    std::uint64_t S = static_cast<std::uint64_t>(std::llround(std::max(1.0, work_s / slice_s)));
    S = std::min<std::uint64_t>({S, kMaxCoverSlices, std::max<std::uint64_t>(1, U[d].a.rows)});
    if (per_vertex || U[d].slices > 1) S = 1;
    for (std::uint64_t x = 0; x < S; ++x)
      pieces.push_back({d, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(S),
                        net(d) / static_cast<double>(S)});
  }
  auto piece_unit = [&](const Piece& pc) {
    return pc.slices > 1 ? unit_slice(U[pc.unit], pc.slice, pc.slices) : U[pc.unit];
  };
  auto first_slice = [](const Piece& pc) { return pc.slices > 1 && pc.slice == 0; };
  // 4. The new order: the head without the donors; then the first slice of each donor cut into
  // slices, which uploads all of the donor's blocks (the later slices find them on the device):
  // at the end of the head the head's last kernels hide that upload, while inside the tail it
  // could follow a drained device (the tail's units wait for the preload to build their row
  // part, and the driver issues units in order); then the tail, with a piece placed wherever
  // the tail's uploads since the last piece have outgrown its kernels by the piece's cover.
  std::vector<WorkUnit> order;
  order.reserve(U.size() + pieces.size());
  for (std::size_t u = 0; u < tail; ++u)
    if (!donor[u]) order.push_back(U[u]);
  for (const Piece& pc : pieces)
    if (first_slice(pc)) order.push_back(piece_unit(pc));
  std::size_t next = 0;
  double owed = 0;
  for (std::size_t u = tail; u < U.size(); ++u) {
    order.push_back(U[u]);
    owed += surplus(u);
    for (; next < pieces.size() && (first_slice(pieces[next]) || owed >= pieces[next].net); ++next)
      if (!first_slice(pieces[next])) {
        owed -= pieces[next].net;
        order.push_back(piece_unit(pieces[next]));
      }
  }
  for (; next < pieces.size(); ++next)
    if (!first_slice(pieces[next])) order.push_back(piece_unit(pieces[next]));
  // 5. Kept only when the estimate improves (the moved units may now miss the cache).
  const double before = estimated_exposed_upload(plan);
  std::vector<WorkUnit> kept = std::move(plan.units);  // (the trial copies all but the units)
  Plan trial = plan;
  plan.units = std::move(kept);
  trial.units = std::move(order);
  finish_units(trial, per_vertex, plan.in_flight);
  const double after = estimated_exposed_upload(trial);
  if (after >= before) return 0;
  trial.tail_cover_slices = pieces.size();
  plan = std::move(trial);
  return donors.size();
}

// Reorders each range task's units (a run of one i) by k, then j: the column order
// (Plan::column_order). Units cut into slices keep their slices together.
void column_order(Plan& plan) {
  std::vector<WorkUnit>& U = plan.units;
  for (std::size_t x = 0; x < U.size();) {
    std::size_t y = x + 1;
    while (y < U.size() && U[y].i == U[x].i) ++y;
    std::stable_sort(
        U.begin() + static_cast<std::ptrdiff_t>(x), U.begin() + static_cast<std::ptrdiff_t>(y),
        [](const WorkUnit& a, const WorkUnit& b) { return a.k != b.k ? a.k < b.k : a.j < b.j; });
    x = y;
  }
  plan.column_order = true;
}

// Pair's grouped order (Plan::pair_group): groups of g consecutive row parts from the top, the
// highest group first; in a group, by j ascending, then i descending.
void pair_group_order(Plan& plan, std::uint32_t g) {
  const std::uint32_t p = plan.partition.p;
  auto group = [&](const WorkUnit& w) { return (p - 1 - w.i) / g; };
  std::stable_sort(plan.units.begin(), plan.units.end(), [&](const WorkUnit& a, const WorkUnit& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (a.j != b.j) return a.j < b.j;
    return a.i > b.i;
  });
  plan.pair_group = g;
}

void choose_pair_group(Plan& plan, bool per_vertex) {
  const std::uint32_t p = plan.partition.p;
  if (plan.partition.scheme != Scheme::Pair || p <= 2 || plan.device_cache_bytes == 0) return;
  // Group sizes about 1.5x apart, and all parts in one group, up to twice the row parts that fit
  // the cache on average (a larger group's row parts would only evict one another).
  std::vector<std::uint64_t> rows_bytes(p, 0);
  for (const WorkUnit& w : plan.units) rows_bytes[w.i] = w.b.bytes;
  const std::uint64_t total =
      std::accumulate(rows_bytes.begin(), rows_bytes.end(), std::uint64_t{0});
  const double fit = total ? static_cast<double>(plan.device_cache_bytes) * p / total : p;
  const std::uint32_t most =
      static_cast<std::uint32_t>(std::min<double>(p, std::max(2.0, 2 * fit)));
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t g = 2; g <= most && g < p; g = std::max(g + 1, g * 3 / 2)) sizes.push_back(g);
  if (most >= p) sizes.push_back(p);
  const std::uint64_t decompressed = plan.bytes_decompressed;  // (the caller's estimate)
  // (the tries are assigned into and swapped with the best, so that their unit arrays reuse
  // the memory of earlier tries instead of mapping fresh pages for each)
  Plan best = plan, t;
  for (std::uint32_t g : sizes) {
    t = plan;
    pair_group_order(t, g);
    finish_units(t, per_vertex);
    if (static_cast<double>(t.bytes_moved) < static_cast<double>(best.bytes_moved) * 0.99)
      std::swap(best, t);
  }
  plan = std::move(best);
  plan.bytes_decompressed = decompressed;
}

// The order and the units in flight with the device cache. More units in flight let uploads
// run further ahead of the kernels but pin more blocks, so the cache holds fewer for later
// units. Tried: 2, 4, 8 or 16 in flight, each in the row order and (range) the column order
// (Plan::column_order), each with its tail cover; kept: the one whose estimated line
// (estimated_exposed_upload) ends first, the fewest exposed upload seconds on a tie, the row
// order and fewer units in flight on a tie of both. Run for the candidates that fit the budgets
// only: each try replays the cache over every unit. `plan` comes in the row order.
void choose_in_flight(Plan& plan, bool per_vertex) {
  if (plan.device_cache_bytes == 0 || plan.in_flight <= 2) return;
  const std::uint64_t decompressed = plan.bytes_decompressed;  // (the caller's estimate)
  const int orders = plan.partition.scheme == Scheme::Range ? 2 : 1;
  const bool pair = plan.partition.scheme == Scheme::Pair;
  // (the tries are assigned into and swapped with the best, so that their unit arrays reuse
  // the memory of earlier tries instead of mapping fresh pages for each)
  Plan best, base, t;
  double best_end = 0, best_exposed = 0;
  for (int column = 0; column < orders; ++column) {
    base = plan;  // already finished for kDeviceCacheInFlight
    if (column) column_order(base);
    for (int f = 2; f <= kDeviceCacheInFlight; f *= 2) {
      t = base;
      if (column || f != plan.in_flight) finish_units(t, per_vertex, f);
      // (pair: the cover is tried once, on the best of these; its grouped order rarely has an
      // upload-bound tail, and every try replays the cache again)
      if (!pair) t.tail_cover_units = cover_upload_tail(t, per_vertex);
      double end = 0;
      const double exposed = estimated_exposed_upload(t, &end);
      if ((column == 0 && f == 2) || end < best_end * 0.999 ||
          (end <= best_end * 1.001 && exposed < best_exposed * 0.999)) {
        std::swap(best, t);
        best_end = end;
        best_exposed = exposed;
      }
    }
  }
  if (pair) {
    t = best;
    t.tail_cover_units = cover_upload_tail(t, per_vertex);
    double end = 0;
    const double exposed = estimated_exposed_upload(t, &end);
    if (t.tail_cover_units &&
        (end < best_end * 0.999 || (end <= best_end * 1.001 && exposed < best_exposed * 0.999)))
      best = std::move(t);
  }
  plan = std::move(best);
  plan.bytes_decompressed = decompressed;
}

bool slice_in_core(Plan& plan, std::uint32_t sharers, bool per_vertex) {
  if (sharers < 2 || plan.partition.p > 1 || plan.units.size() != 1 || plan.streamed_staging() ||
      plan.units[0].slices != 1)
    return false;
  const WorkUnit whole = plan.units[0];
  const int slots = plan.slots, in_flight = plan.in_flight;
  const std::uint64_t device_bytes = plan.device_bytes;
  plan.units.clear();
  for (std::uint32_t x = 0; x < sharers; ++x) plan.units.push_back(unit_slice(whole, x, sharers));
  finish_units(plan, per_vertex, plan.in_flight);
  // One slot, as in core: a worker counts its slices one after another (finish_units gives two
  // slots to two units or more, twice the device and host memory the plan was sized for).
  plan.slots = slots;
  plan.in_flight = in_flight;
  plan.device_bytes = device_bytes;
  plan.device_cache_bytes = 0;
  return true;
}

}  // namespace tristream::plan_internal
