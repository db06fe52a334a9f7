// rows_on_device.cpp — the tail's steps for unique keys held by an EdgeSorter (rows_on_device.hpp).
#include "rows_on_device.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include "progress.hpp"
#include "rows_in_memory.hpp"
#include "tristream/error.hpp"

namespace tristream::conv::tail {
namespace {

// Edges a copy from the sorter holds at least (but the last): the writer's runs.
constexpr std::uint64_t kCopyEdges = std::uint64_t{1} << 26;

}  // namespace

void rows_from_device(EdgeSorter& sorter, std::uint64_t m, std::uint64_t n,
                      const std::uint32_t* rank, std::uint64_t space, unsigned threads,
                      BigBuffer<std::uint32_t>& narrow, std::vector<eid_t>& offsets,
                      tcsr::Writer& writer, RowObserver* observer, const WedgeSum& wedges,
                      std::uint64_t& max_out_degree) {
  // 1. The rows sorted there; their lengths here.
  BigBuffer<std::uint32_t> fill(n + 1);
  fill.resize(n);
  sorter.sort_rows(rank, space, n, fill.data());
  std::uint64_t total = 0;
  for (std::uint64_t r = 0; r < n; ++r) total += fill[r];
  TS_CHECK(total == m,
           "the device's rows hold " + std::to_string(total) + " edges, not " + std::to_string(m));
  stage_done("orient and sort rows on the device");
  // 2. The columns copied in runs of whole rows on a thread of its own, each run told to the
  //    stream once it is here.
  narrow.reserve(m + 1);
  narrow.resize(m);
  offsets.assign(n + 1, 0);
  RowStream rows(n, offsets.data(), fill.data());
  std::thread copier([&] {
    std::exception_ptr error;
    try {
      for (std::uint64_t r = 0, e = 0; r < n;) {
        std::uint64_t r1 = r, e1 = e;
        while (r1 < n && (r1 == r || e1 - e < kCopyEdges)) e1 += fill[r1++];
        sorter.columns(e, e1 - e, narrow.data() + e);
        rows.placed(r, r1 - r, e);
        r = r1;
        e = e1;
      }
    } catch (...) {
      error = std::current_exception();
    }
    rows.finish(error);
  });
  const JoinOnExit join_copier{copier};
  // 3. The rows into the writer as they come; the census beside the last run.
  write_placed_rows(rows, copier, n, narrow, offsets, writer, observer, wedges, threads,
                    "copy rows from the device, writing beside");
  max_out_degree = std::max(max_out_degree, rows.max_out_degree());
}

}  // namespace tristream::conv::tail
