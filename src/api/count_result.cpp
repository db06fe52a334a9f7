// count_result.cpp — CountResult's outputs (include/tristream/tristream.hpp): the JSON object of
// `tristream count --json` and the pipeline's trace.
#include <cstdio>
#include <string>

#include "common/json.hpp"
#include "tristream/error.hpp"
#include "tristream/stats.hpp"
#include "tristream/tristream.hpp"

namespace tristream {

std::string CountResult::to_json(const std::string& input) const {
  JsonObject o;
  o.add("input", input)
      .add("triangles", triangles)
      .add("vertices", vertices)
      .add("edges", edges)
      .add("backend", backend)
      .add("device", device)
      .add("transitivity", transitivity);
  if (has_per_vertex)
    o.add("average_clustering", average_clustering);
  else
    o.add_null("average_clustering");
  if (counted_isolated) o.add("isolated_vertices", isolated_vertices);
  o.add("host_budget_bytes", host_budget_bytes).add("host_peak_bytes", host_peak_bytes);
  o.add("seconds", seconds).add("convert_seconds", convert_seconds);
  if (converted)
    o.add("convert_sorter", convert_sorter);
  else
    o.add_null("convert_sorter");
  o.add("load_seconds", plan_seconds).add("count_seconds", count_seconds);
  JsonObject t;
  t.add("before_call", timing.before_call)
      .add("startup", timing.startup)
      .add("startup_wait", timing.startup_wait)
      .add("image", timing.image)
      .add("plan_ahead", timing.plan_ahead)
      .add("release", timing.release)
      .add("open", timing.open)
      .add("census", timing.census)
      .add("plan", timing.plan)
      .add("pipeline", timing.pipeline)
      .add("finish", timing.finish)
      .add("teardown", timing.teardown)
      .add("census_source", census);
  o.raw("timing", t.str());
  o.raw("plan", plan.empty() ? "null" : plan).raw("stats", stats.empty() ? "null" : stats);
  return o.str();
}

void CountResult::write_trace(std::FILE* f) const {
  TS_CHECK(pipeline_stats != nullptr, "write_trace: the result has no pipeline measurements");
  pipeline_stats->write_trace(f);
}

}  // namespace tristream
