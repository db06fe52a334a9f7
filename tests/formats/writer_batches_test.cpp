// writer_batches_test.cpp — tcsr::Writer writes the same bytes however the rows come: one row at
// a time (the ids gathered into batches), all rows in one call (whole chunks compressed where
// they lie), or runs of uneven length (pending chunks topped up and compressed beside the
// caller's), with any thread count, any writer memory (batches of a few chunks or many), with
// and without delta coding; and the rows read back are the rows written. A frame's write that
// fails while workers wait for the chunk writer's window of frame buffers is an error, not a hang,
// and an interrupt stops a run between chunks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "common/interrupt.hpp"
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

// 16 chunks of 1024 edges for the chunk writer, one edge per row.
struct ChunkRun {
  static constexpr std::uint64_t kChunkEdges = 1024, kEdges = 16 * kChunkEdges;
  std::vector<vid_t> ids = std::vector<vid_t>(kEdges);
  tcsr::detail::RowOffsets offsets = tcsr::detail::RowOffsets(kEdges + 1);
  std::vector<tcsr::detail::ChunkJob> jobs;
  ChunkRun() {
    for (std::uint64_t e = 0; e < kEdges; ++e) ids[e] = static_cast<vid_t>(e + 1);
    for (std::uint64_t r = 0; r <= kEdges; ++r) offsets[r] = r;
    for (std::uint64_t e = 0; e < kEdges; e += kChunkEdges)
      jobs.push_back({ids.data() + e, nullptr, e, kChunkEdges});
  }
};

// Runs fn in a child process under a 30 s alarm (a hang fails the test instead of stalling it);
// the child exits with fn's value. Returns the child's exit status, or -1 when it did not exit.
template <typename Fn>
int in_child(Fn fn) {
  const pid_t pid = ::fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    ::alarm(30);
    ::_exit(fn());
  }
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

TEST(WriterBatches, AWriteFailingWhileWorkersWaitForTheWindowIsAnErrorNotAHang) {
  // The chunk writer with a window of one frame and three workers: the workers with the second and
  // third chunks wait for the first's frame to be written, and that write fails (a pipe without a
  // reader): every worker gives up and the write's error is thrown.
  const ChunkRun run;
  const int status = in_child([&] {
    std::signal(SIGPIPE, SIG_IGN);
    int fds[2];
    if (::pipe(fds) != 0) return 4;
    ::close(fds[0]);
    tcsr::detail::ChunkWriter cw(3, tcsr::WriteOptions{}, ChunkRun::kChunkEdges);
    ThreadPool pool(3);
    try {
      cw.write(run.jobs, run.offsets, pool, fds[1], "pipe", 1);
    } catch (const Error& err) {
      return std::string(err.what()).find("write failed") != std::string::npos ? 0 : 1;
    } catch (...) {
      return 2;
    }
    return 3;
  });
  EXPECT_EQ(status, 0) << "-1: hung; 3: no error, 1: another error, 2: not an Error";
}

TEST(WriterBatches, AnInterruptStopsARunBetweenChunks) {
  // SIGINT before a run of 16 chunks: the chunk writer stops with Error(Interrupted), nothing
  // written, no worker left waiting.
  const ChunkRun run;
  const int status = in_child([&] {
    install_interrupt_handlers();
    std::raise(SIGINT);
    int fds[2];
    if (::pipe(fds) != 0) return 4;
    tcsr::detail::ChunkWriter cw(3, tcsr::WriteOptions{}, ChunkRun::kChunkEdges);
    ThreadPool pool(3);
    try {
      cw.write(run.jobs, run.offsets, pool, fds[1], "pipe", 1);
    } catch (const Error& err) {
      return err.kind() == ErrorKind::Interrupted && cw.file_pos == 0 ? 0 : 1;
    } catch (...) {
      return 2;
    }
    return 3;
  });
  EXPECT_EQ(status, 0)
      << "-1: hung; 3: no error, 1: another error or frames written, 2: not an Error";
}

}  // namespace
}  // namespace tristream
