// writer_batches_test.cpp — tcsr::Writer writes the same bytes however the rows come: one row at
// a time (the ids gathered into batches), all rows in one call (whole chunks compressed where
// they lie), or runs of uneven length (pending chunks topped up and compressed beside the
// caller's), with any thread count, any writer memory (batches of a few chunks or many), with
// and without delta coding; and the rows read back are the rows written. A frame's write that
// fails while workers wait for the chunk writer's window of frame buffers is an error, not a hang.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "common/thread_pool.hpp"
#include "formats/chunk_writer.hpp"
#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using test::read_text;
using test::TempDir;

// Writes g with the rows handed over in runs of run_rows[i % size] rows (0: all at once).
void write_in_runs(const std::string& path, const OrientedGraph& g, const tcsr::WriteOptions& o,
                   const std::vector<std::uint64_t>& run_rows) {
  const Csr& c = g.csr;
  tcsr::Writer w(path, c.rows(), o);
  std::uint64_t r = 0;
  for (std::size_t i = 0; r < c.rows(); ++i) {
    const std::uint64_t want = run_rows[i % run_rows.size()];
    const std::uint64_t k = want == 0 ? c.rows() - r : std::min(want, c.rows() - r);
    if (k == 1)
      w.append_row(c.cols.data() + c.offsets[r], c.offsets[r + 1] - c.offsets[r]);
    else
      w.append_rows(c.cols.data() + c.offsets[r], c.offsets.data() + r, k);
    r += k;
  }
  w.set_permutation(g.perm);
  w.finish();
}

TEST(WriterBatches, RowsInAnyRunsGiveTheSameBytes) {
  TempDir d;
  const test::EdgeList e = test::skewed_graph(20000, 200000, 31);
  const OrientedGraph g = orient_edge_list(20000, e);
  for (bool delta : {true, false}) {
    tcsr::WriteOptions base;
    base.chunk_bytes = 4096;  // about 50 chunks
    base.delta = delta;
    base.threads = 1;
    write_in_runs(d.file("ref.tcsr"), g, base, {1});
    const std::string want = read_text(d.file("ref.tcsr"));
    const std::uint64_t floor = tcsr::writer_floor_bytes(base.chunk_bytes, base.zstd_level);
    for (unsigned threads : {1u, 2u, 3u})
      for (std::uint64_t memory : {std::uint64_t{0}, 3 * floor, 6 * floor}) {
        tcsr::WriteOptions o = base;
        o.threads = threads;
        o.memory_bytes = memory;
        for (const std::vector<std::uint64_t>& runs :
             std::vector<std::vector<std::uint64_t>>{{0}, {1}, {1, 7, 1000, 3, 5000}, {2500}}) {
          write_in_runs(d.file("t.tcsr"), g, o, runs);
          EXPECT_EQ(read_text(d.file("t.tcsr")), want)
              << delta << " " << threads << " " << memory << " " << runs.size();
        }
      }
    const OrientedGraph back = tcsr::Reader(d.file("ref.tcsr")).load(true);
    EXPECT_EQ(back.csr.offsets, g.csr.offsets);
    EXPECT_EQ(back.csr.cols, g.csr.cols);
    EXPECT_EQ(back.perm, g.perm);
  }
}

TEST(WriterBatches, AWriteFailingWhileWorkersWaitForTheWindowIsAnErrorNotAHang) {
  // The chunk writer with a window of one frame and three workers: the workers with the second and
  // third chunks wait for the first's frame to be written, and that write fails (a pipe without a
  // reader): every worker gives up and the write's error is thrown. In a child process with an
  // alarm, so that a hang fails the test instead of stalling it.
  const std::uint64_t chunk_edges = 1024, edges = 16 * chunk_edges;
  std::vector<vid_t> ids(edges);
  std::vector<eid_t> offsets(edges + 1);
  for (std::uint64_t e = 0; e < edges; ++e) ids[e] = static_cast<vid_t>(e + 1);
  for (std::uint64_t r = 0; r <= edges; ++r) offsets[r] = r;
  std::vector<tcsr::detail::ChunkJob> jobs;
  for (std::uint64_t e = 0; e < edges; e += chunk_edges)
    jobs.push_back({ids.data() + e, nullptr, e, chunk_edges});
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(30);
    std::signal(SIGPIPE, SIG_IGN);
    int fds[2];
    if (::pipe(fds) != 0) ::_exit(4);
    ::close(fds[0]);
    tcsr::WriteOptions o;
    tcsr::detail::ChunkWriter cw(3, o, chunk_edges);
    ThreadPool pool(3);
    int code = 3;  // no error
    try {
      cw.write(jobs, offsets, pool, fds[1], "pipe", 1);
    } catch (const Error& err) {
      code = std::string(err.what()).find("write failed") != std::string::npos ? 0 : 1;
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st)) << "the writer hung (killed by the alarm)";
  EXPECT_EQ(WEXITSTATUS(st), 0) << "3: no error, 1: another error, 2: not an Error";
}

}  // namespace
}  // namespace tristream
