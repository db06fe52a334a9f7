// replay.cpp — finishing a plan's units and the device block cache's replay (plan/replay.hpp),
// with the block keys and next uses the pipeline's cache shares (tristream/plan.hpp).
#include "plan/replay.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "tristream/device_cache.hpp"

namespace tristream {

std::uint64_t device_cache_key(const Plan& plan, const BlockInfo& b) {
  if (plan.device_cache_bytes == 0) return 0;
  // (pair: column parts 0..2p-1, the suffix blocks after the plain ones)
  const std::uint64_t stride = std::max<std::uint64_t>(plan.partition.p, 2) *
                               (plan.partition.scheme == Scheme::Pair ? 2 : 1);
  return std::uint64_t{b.row_part} * stride + b.col_part + 1;
}

std::vector<std::uint64_t> device_cache_next_uses(const Plan& plan) {
  std::vector<std::uint64_t> next(3 * plan.units.size(), kNeverUsed);
  std::unordered_map<std::uint64_t, std::uint64_t> seen;  // key -> the next unit using it
  for (std::size_t u = plan.units.size(); u-- > 0;) {
    const WorkUnit& w = plan.units[u];
    const BlockInfo* roles[3] = {&w.a, &w.b, &w.c};
    std::uint64_t keys[3];
    for (int r = 0; r < 3; ++r) {
      keys[r] = device_cache_key(plan, *roles[r]);
      const auto it = seen.find(keys[r]);
      next[3 * u + r] = it == seen.end() ? kNeverUsed : it->second;
    }
    for (int r = 0; r < 3; ++r) seen[keys[r]] = u;
  }
  return next;
}

namespace plan_internal {
namespace {

// Runs the device block cache over the plan's units (device_cache.hpp): sets every unit's
// upload_bytes to its blocks the cache does not hold, and returns their sum.
std::uint64_t simulate_device_cache(Plan& plan) {
  const std::vector<std::uint64_t> next = device_cache_next_uses(plan);
  DeviceBlockCache cache(plan.device_cache_bytes);
  std::uint64_t moved = 0;
  const std::size_t lanes = static_cast<std::size_t>(std::max(1, plan.in_flight));
  std::deque<std::size_t> flying;  // units in flight, oldest first (as the pipeline collects)
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    WorkUnit& w = plan.units[u];
    const int owner = static_cast<int>(u % lanes);
    w.upload_after = -1;
    if (!flying.empty() && flying.front() + lanes == u) {  // the lane's previous unit
      cache.release(owner);
      w.upload_after = static_cast<std::int64_t>(flying.front());
      flying.pop_front();
    }
    const BlockInfo* roles[3] = {&w.a, w.b_is_a ? nullptr : &w.b,
                                 w.c_is_a || w.c_is_b ? nullptr : &w.c};
    DeviceBlockCache::Request req[3];
    std::uint64_t up[3];
    int n = 0;
    for (int r = 0; r < 3; ++r)
      if (roles[r]) {
        req[n] = {device_cache_key(plan, *roles[r]), roles[r]->bytes, next[3 * u + r]};
        up[n++] = roles[r]->upload_bytes;
      }
    while (!cache.fits(req, n) && !flying.empty()) {  // collect the oldest early
      cache.release(static_cast<int>(flying.front() % lanes));
      w.upload_after = static_cast<std::int64_t>(flying.front());
      flying.pop_front();
    }
    bool hit[3];
    cache.admit(req, n, owner, hit);
    flying.push_back(u);
    w.upload_bytes = 0;
    for (int x = 0; x < n; ++x) w.upload_bytes += hit[x] ? 0 : up[x];
    moved += w.upload_bytes;
  }
  return moved;
}

}  // namespace

void finish_units(Plan& plan, bool per_vertex, int in_flight) {
  std::uint64_t slot = 0, pv = 0, moved = 0, dec = 0;
  double work = 0, maxw = 0;
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    auto& w = plan.units[u];
    // a field summed over the unit's distinct blocks (A, and B and C unless they are A or B)
    auto distinct = [&w](std::uint64_t BlockInfo::*f, bool with_a) {
      std::uint64_t sum = with_a ? w.a.*f : 0;
      if (!w.b_is_a) sum += w.b.*f;
      if (!w.c_is_a && !w.c_is_b) sum += w.c.*f;
      return sum;
    };
    const std::uint64_t blocks = distinct(&BlockInfo::bytes, true);
    w.slot_bytes = blocks;
    // per-vertex spaces: range/hash spaces are parts i, j, k; vertex: rows of V_i and X_i;
    // pair: every vertex (w's global ids; parts 0 share it), part i and part j
    std::uint64_t rows = 0;
    if (per_vertex) {
      if (plan.partition.scheme == Scheme::Vertex && plan.partition.p > 1) {
        rows = w.a.rows + w.c.rows;
      } else if (plan.partition.scheme == Scheme::Pair && plan.partition.p > 1) {
        rows = w.c.col_space + (w.i != 0 ? w.a.rows : 0) + (w.j != 0 && w.j != w.i ? w.c.rows : 0);
      } else {
        std::uint32_t parts[3] = {w.i, w.j, w.k};
        std::uint64_t prow[3] = {w.a.rows, w.c.rows, w.c.col_space};
        for (int s = 0; s < 3; ++s) {
          bool dup = false;
          for (int t = 0; t < s; ++t) dup |= parts[t] == parts[s];
          if (!dup) rows += prow[s];
        }
      }
    }
    w.device_bytes = blocks + rows * sizeof(count_t);
    w.reuse_a = false;
    if (u >= 2) {
      const auto& prev = plan.units[u - 2];
      w.reuse_a = plan.partition.scheme != Scheme::Vertex && plan.partition.p > 1 &&
                  prev.a.row_part == w.a.row_part && prev.a.col_part == w.a.col_part;
    }
    w.upload_bytes = distinct(&BlockInfo::upload_bytes, !w.reuse_a);
    slot = std::max(slot, blocks);
    pv = std::max(pv, rows);
    moved += w.upload_bytes;
    dec += w.decompress_bytes;
    work += w.work;
    maxw = std::max(maxw, w.work);
  }
  plan.slots = plan.units.size() >= 2 ? 2 : 1;
  plan.slot_bytes = slot;
  plan.per_vertex_rows = pv;
  const std::uint64_t pv_bytes = plan.slots * pv * sizeof(count_t);
  plan.device_bytes = plan.slots * slot + pv_bytes;
  // The device block cache: the slots' bytes, or the room the plan was given when that is more,
  // hold blocks for later units; a unit uploads only the blocks the cache does not hold when its
  // upload is planned (simulated here exactly as the backend runs it).
  plan.device_cache_bytes = 0;
  plan.in_flight = plan.slots;
  if (plan.partition.scheme != Scheme::Vertex && plan.partition.p > 1) {
    const std::uint64_t room =
        plan.device_cache_room > pv_bytes ? plan.device_cache_room - pv_bytes : 0;
    plan.device_cache_bytes =
        std::max(plan.slots * slot, std::min(room, kDeviceCacheMaxSlots * slot));
    plan.device_bytes = plan.device_cache_bytes + pv_bytes;
    if (!per_vertex) plan.in_flight = std::max(plan.slots, in_flight);
    // (a plan whose slots exceed the room it was given never runs: no replay, its bytes as
    // without the cache)
    if (plan.device_cache_room == 0 || plan.device_bytes <= plan.device_cache_room)
      moved = simulate_device_cache(plan);
  }
  plan.bytes_moved = moved;
  plan.bytes_decompressed = dec;
  plan.total_work = work;
  plan.imbalance = plan.units.empty() || work <= 0 ? 1.0 : maxw / (work / plan.units.size());
}

}  // namespace plan_internal
}  // namespace tristream
