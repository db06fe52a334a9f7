// plan_json.cpp — a plan as JSON (the one writer, common/json.hpp) and as lines for humans
// (tristream/plan.hpp: Plan::to_json, Plan::summary). The JSON's fields are a contract: the CLI's
// `plan --json` and `count --json` print them, and the golden plan tests compare them byte for
// byte.
#include <initializer_list>
#include <sstream>

#include "common/json.hpp"
#include "tristream/plan.hpp"
#include "units.hpp"

namespace tristream {

namespace {
// A JSON array of unsigned integers.
template <typename T>
std::string json_uints(std::initializer_list<T> xs) {
  std::string out = "[";
  for (const T& x : xs) out += (out.size() > 1 ? "," : "") + std::to_string(x);
  return out + "]";
}
std::string unit_json(const WorkUnit& w) {
  JsonObject o;
  o.raw("task", json_uints<std::uint32_t>({w.i, w.j, w.k}))
      .add("device_bytes", w.device_bytes)
      .add("upload_bytes", w.upload_bytes)
      .add("decompress_bytes", w.decompress_bytes)
      .add("work", w.work)
      .raw("edges", json_uints<std::uint64_t>({w.a.edges, w.b.edges, w.c.edges}))
      .add("reuse_a", w.reuse_a)
      .raw("slice", json_uints<std::uint32_t>({w.slice, w.slices}));
  return o.str();
}
}  // namespace

std::string Plan::to_json() const {
  JsonObject o;
  o.add("scheme", scheme_name(partition.scheme))
      .add("parts", partition.p)
      .add("slots", slots)
      .add("slot_bytes", slot_bytes)
      .add("staging", streamed_staging() ? "streamed" : "full")
      .add("piece_bytes", piece_bytes)
      .add("staging_buffers", staging_buffers)
      .add("host_staging_bytes", host_staging_bytes())
      .add("device_bytes", device_bytes)
      .add("host_bytes", host_bytes)
      .add("device_budget", device_budget)
      .add("host_budget", host_budget)
      .add("bytes_moved", bytes_moved)
      .add("bytes_decompressed", bytes_decompressed)
      .add("total_estimated_bytes", bytes_moved + bytes_decompressed)
      .add("chunk_cache_bytes", chunk_cache_bytes)
      .add("block_cache_bytes", block_cache_bytes)
      .add("device_cache_bytes", device_cache_bytes)
      .add("in_flight", in_flight)
      .add("unit_order", column_order     ? "column"
                         : pair_group > 1 ? "pair_groups"
                                          : "row")
      .add("pair_group", std::uint64_t{pair_group})
      .add("tail_cover_units", std::uint64_t{tail_cover_units})
      .add("tail_cover_slices", std::uint64_t{tail_cover_slices})
      .add("total_work", total_work)
      .add("imbalance", imbalance)
      .add("reason", reason);
  std::string bounds = "[";
  for (std::size_t x = 0; x < partition.bounds.size(); ++x)
    bounds += (x ? "," : "") + std::to_string(partition.bounds[x]);
  o.raw("bounds", bounds + "]");
  std::string us = "[";
  for (std::size_t u = 0; u < units.size(); ++u) us += (u ? "," : "") + unit_json(units[u]);
  o.raw("units", us + "]");
  return o.str();
}

std::string Plan::summary() const {
  std::ostringstream o;
  o << "scheme " << scheme_name(partition.scheme) << ", p = " << partition.p << ", " << units.size()
    << " units\n";
  o << "slots: " << slots << " x " << format_bytes(slot_bytes) << " (device "
    << format_bytes(device_bytes) << ", host about " << format_bytes(host_bytes) << ")\n";
  if (device_cache_bytes)
    o << "device block cache: blocks stay in " << format_bytes(device_cache_bytes)
      << " between units; a unit uploads only the blocks not there, up to " << in_flight
      << " units ahead of the kernels\n";
  if (pair_group > 1)
    o << "order: groups of " << pair_group
      << " row parts, each group's units by j (its row parts stay on the device while every "
         "other row part is uploaded once per group)\n";
  if (column_order)
    o << "order: inside each task by k, then j (each new block of row part i is followed by the "
         "units that reuse it)\n";
  if (tail_cover_units)
    o << "order: " << tail_cover_units
      << " units of much work and few bytes moved into the upload-bound tail, to hide its "
         "uploads, as "
      << tail_cover_slices << " slices\n";
  if (streamed_staging())
    o << "host staging: streamed, " << staging_buffers << " x " << format_bytes(piece_bytes)
      << " pieces (" << format_bytes(host_staging_bytes()) << ") instead of full host slots\n";
  o << "estimated bytes moved: " << format_bytes(bytes_moved) << " uploaded, "
    << format_bytes(bytes_decompressed) << " decompressed; work imbalance " << imbalance << "\n";
  o << "reason: " << reason << "\n";
  return o.str();
}

}  // namespace tristream
