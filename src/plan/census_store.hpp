// plan/census_store.hpp — the census's pieces shared between taking it (census.cpp), reading a
// stored one (census_store.cpp) and taking it from the rows a conversion writes (census_rows.cpp),
// so that all give the same census.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tristream/convert.hpp"
#include "tristream/plan.hpp"

namespace tristream::plan_internal {

// Fine range buckets: half cut by out-edges, half by rows, merged, without empty buckets.
std::vector<std::uint64_t> fine_buckets(std::uint64_t n, const eid_t* off, std::uint32_t fine);

// Whether any vertex candidate p (dividing G, p >= 2) may fit the device budget (0 = any):
// take_census counts the exact proxy edges only then.
bool vertex_may_fit(const Census& c, const std::vector<std::uint32_t>& cand_p, std::uint32_t G,
                    const eid_t* off, std::uint64_t device_budget);

// The stored census's payload (census_store.cpp's layout) of census c, taken with options o of a
// graph with n vertices and m edges.
std::vector<unsigned char> encode_census(const Census& c, const CensusOptions& o, std::uint64_t n,
                                         std::uint64_t m);

// An observer for ConvertOptions::observer that takes the stored census (stored_census_options)
// from the rows convert() writes, without a pass over the written file: its payload is the bytes
// encode_stored_census gives for the written file, whatever the threads and the order of calls.
// Its finish() is empty and taken() false (the caller then runs reindex) when the stored options
// ask for more than it takes: vertex groups above 16, or a device budget.
class CensusRows : public RowObserver {
 public:
  virtual bool taken() const = 0;  // finish() gave the payload
};
std::unique_ptr<CensusRows> stored_census_rows();

}  // namespace tristream::plan_internal
