// plan_helpers.hpp — small shared helpers of the planner's tests (tests/plan/): a seeded edge
// list oriented, and plan options with two census threads.
#pragma once

#include <cstdint>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/plan.hpp"

namespace tristream::test {

inline OrientedGraph oriented(const EdgeList& e) {
  return orient_edge_list(vertex_count(e), e);
}

inline PlanOptions opts(Scheme s, std::uint32_t p, std::uint64_t device = 0,
                        std::uint64_t host = 0) {
  PlanOptions o;
  o.scheme = s;
  o.parts = p;
  o.device_budget = device;
  o.host_budget = host;
  o.threads = 2;
  return o;
}

}  // namespace tristream::test
