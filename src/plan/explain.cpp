// explain.cpp — the planner's reason and its no-fit error (plan/explain.hpp).
#include "plan/explain.hpp"

#include <sstream>

#include "units.hpp"

namespace tristream::plan_internal {

std::string explain(const Plan& plan, const std::vector<Candidate>& all, const PlanOptions& o) {
  std::ostringstream why;
  if (plan.partition.p == 1) {
    why << "in-core: the whole graph (" << format_bytes(plan.device_bytes)
        << ") fits the device budget ("
        << (o.device_budget ? format_bytes(o.device_budget) : std::string("unlimited")) << ")";
    if (o.parts == 1) why << " (--parts 1)";
    if (plan.streamed_staging())
      why << "; streamed staging: the host budget (" << format_bytes(o.host_budget)
          << ") cannot hold a full " << format_bytes(plan.slot_bytes)
          << " host slot, so the unit is built and uploaded in pieces through "
          << plan.staging_buffers << " x " << format_bytes(plan.piece_bytes)
          << " host staging buffers";
  } else {
    why << (o.parts ? "forced p = " + std::to_string(o.parts) + "; " : std::string())
        << scheme_name(plan.partition.scheme) << " with p = " << plan.partition.p << ": "
        << plan.units.size() << " units, 2 x " << format_bytes(plan.slot_bytes) << " slots fit "
        << format_bytes(o.device_budget ? o.device_budget : plan.device_bytes) << "; moves "
        << format_bytes(plan.bytes_moved) << " up and decompresses "
        << format_bytes(plan.bytes_decompressed) << ", work imbalance "
        << std::to_string(plan.imbalance).substr(0, 4);
    // the runner-ups per scheme
    for (Scheme s : {Scheme::Range, Scheme::Vertex, Scheme::Hash, Scheme::Pair}) {
      const Candidate* bs = nullptr;
      for (const auto& c : all)
        if (c.feasible && c.plan.partition.scheme == s && c.plan.partition.p > 1 &&
            (!bs || c.cost < bs->cost))
          bs = &c;
      if (bs && bs->plan.partition.scheme != plan.partition.scheme)
        why << "; best " << scheme_name(s) << " (p = " << bs->plan.partition.p << ") would move "
            << format_bytes(bs->plan.bytes_moved + bs->plan.bytes_decompressed)
            << " in its own order";
    }
    bool any_one = false;
    for (const auto& c : all) any_one |= c.plan.partition.p == 1;
    if (any_one && !o.parts) why << "; the in-core plan needs " << format_bytes(all.front().device);
  }
  return why.str();
}

Error no_fit_error(const std::vector<Candidate>& all, const GraphShape& g, const PlanOptions& o) {
  // Name the smallest requirement and the largest row.
  const Candidate* small = nullptr;  // the smallest out-of-core candidate, else in-core
  for (const auto& c : all)
    if (c.plan.partition.p > 1 && (!small || c.device < small->device)) small = &c;
  if (!small)
    for (const auto& c : all)
      if (!small || c.device < small->device) small = &c;
  std::uint64_t big_row = 0;
  eid_t big_deg = 0;
  for (std::uint64_t r = 0; r < g.n; ++r)
    if (g.offsets[r + 1] - g.offsets[r] > big_deg) {
      big_deg = g.offsets[r + 1] - g.offsets[r];
      big_row = r;
    }
  std::ostringstream msg;
  msg << "no partition fits: device budget "
      << (o.device_budget ? format_bytes(o.device_budget) : std::string("unlimited"))
      << " (two work units at once), host budget "
      << (o.host_budget ? format_bytes(o.host_budget) : std::string("unlimited"));
  if (small && small->floor_only)
    msg << "; the smallest candidate (" << scheme_name(small->plan.partition.scheme)
        << ", p = " << small->plan.partition.p << ") needs at least " << small->device
        << " device bytes";
  else if (small)
    msg << "; the smallest candidate (" << scheme_name(small->plan.partition.scheme)
        << ", p = " << small->plan.partition.p << ") needs " << small->device
        << " device bytes and " << small->host << " host bytes";
  msg << "; the largest row, " << big_row << ", has " << big_deg << " out-neighbours ("
      << block_bytes(1, big_deg) << " bytes as a block), and one work unit holds whole rows"
      << "; raise --gpu-memory / --host-memory" << (o.parts ? " or choose a larger --parts" : "");
  return Error(ErrorKind::Usage, msg.str());
}

}  // namespace tristream::plan_internal
