// rows_on_device.hpp — converter internals: the tail's steps for unique keys held by an
// EdgeSorter (tristream/edge_sorter.hpp; write_graph.hpp): the rows of G+ sorted there, their
// columns copied back in runs of whole rows while the writer compresses the runs before them,
// the census taken once the last run is here.
#pragma once

#include <cstdint>
#include <vector>

#include "tristream/convert.hpp"
#include "tristream/edge_sorter.hpp"
#include "tristream/format.hpp"
#include "tristream/wedges.hpp"
#include "util.hpp"

namespace tristream::conv::tail {

// Steps 2 to 5 for the m unique keys the sorter holds (after unique_and_degrees): rank (`space`
// entries, ranks below n) to the sorter, which sorts the rows; `narrow` (m columns) and `offsets`
// (n + 1 entries) filled here while the rows go to the writer and the observer as
// write_placed_rows takes them (the caller's finish() adds the census and the header).
void rows_from_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                      const std::uint32_t* rank, std::uint64_t space, unsigned threads,
                      BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                      tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                      std::uint64_t& max_out_degree);

}  // namespace tristream::conv::tail
