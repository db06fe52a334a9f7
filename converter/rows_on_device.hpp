// rows_on_device.hpp — converter internals: the tail's steps for unique keys held by an
// EdgeSorter (tristream/edge_sorter.hpp; write_graph.hpp): the vertices ranked and the rows of
// G+ sorted there, their columns copied back in large runs of whole rows while the writer
// compresses the runs before them, the census taken once the last run is here.
#pragma once

#include <cstdint>
#include <vector>

#include "tristream/convert.hpp"
#include "tristream/edge_sorter.hpp"
#include "tristream/format.hpp"
#include "tristream/wedges.hpp"
#include "util.hpp"

namespace tristream::conv::tail {

// Steps 1 and 2 for the m unique keys the sorter holds (after unique_and_degrees) over `space`
// ids, n of them vertices: the ranks and the rows of G+ there; here perm (the id of each rank, n
// entries), fill (each row's length, n entries) and `narrow` made ready for m columns (its pages
// made while the device works).
void rank_rows_on_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n, std::uint64_t space,
                         unsigned threads, std::vector<orig_id_t>& perm,
                         BigBuffer<std::uint32_t>& fill, BigBuffer<std::uint32_t>& narrow);

// Steps 3 to 5: `narrow` (m columns) and `offsets` (n + 1 entries) filled from the sorter while
// the rows go to the writer as write_placed_rows takes them; the observer (if any) started at
// once, shown each run's edges (its marks) as the run comes and its counts beside the writer's
// last run, or, where its figures are a row tally the sorter takes (RowObserver::tally_spec,
// EdgeSorter::start_tally), given the sorter's sums instead (the caller's finish() adds the
// census and the header).
void copy_rows_from_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                           const BigBuffer<std::uint32_t>& fill, unsigned threads,
                           BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                           tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                           std::uint64_t& max_out_degree);

}  // namespace tristream::conv::tail
