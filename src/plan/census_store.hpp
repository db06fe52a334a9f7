// plan/census_store.hpp — the census's pieces shared between taking it (census.cpp) and reading
// a stored one (census_store.cpp), so that both give the same census.
#pragma once

#include <cstdint>
#include <vector>

#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Fine range buckets: half cut by out-edges, half by rows, merged, without empty buckets.
std::vector<std::uint64_t> fine_buckets(std::uint64_t n, const eid_t* off, std::uint32_t fine);

// Whether any vertex candidate p (dividing G, p >= 2) may fit the device budget (0 = any):
// take_census counts the exact proxy edges only then.
bool vertex_may_fit(const Census& c, const std::vector<std::uint32_t>& cand_p, std::uint32_t G,
                    const eid_t* off, std::uint64_t device_budget);

}  // namespace tristream::plan_internal
