// mpi/session.cpp — the Communicator over MPI and the MPI session (mpi/session.hpp).
#include "mpi/session.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "common/thread_pool.hpp"
#include "stream/communicator.hpp"
#include "tristream/error.hpp"

namespace tristream::mpi {

namespace {

// MPI counts are int: large arrays go in pieces.
constexpr std::size_t kPiece = std::size_t{1} << 27;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(ErrorKind::Internal, std::string("MPI: ") + what + " failed");
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
    // The shared counter of fetch_next: one uint64 on rank 0, reached by atomic fetch-and-add
    // (no dispatcher thread: rank 0 counts units like the others).
    const MPI_Aint bytes = rank_ == 0 ? sizeof(std::uint64_t) : 0;
    check(MPI_Win_allocate(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base_,
                           &win_),
          "MPI_Win_allocate");
    if (rank_ == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_);
      *base_ = 0;
      MPI_Win_unlock(0, win_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~MpiCommunicator() override { MPI_Win_free(&win_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  void broadcast(std::string& bytes) override {
    std::uint64_t n = bytes.size();
    check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    bytes.resize(n);
    for (std::size_t at = 0; at < n; at += kPiece) {
      const int len = static_cast<int>(std::min<std::uint64_t>(kPiece, n - at));
      check(MPI_Bcast(&bytes[at], len, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  void sum_to_root(std::uint64_t* data, std::size_t n) override {
    for (std::size_t at = 0; at < n; at += kPiece) {
      const int len = static_cast<int>(std::min(kPiece, n - at));
      check(MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : data + at, rank_ == 0 ? data + at : nullptr, len,
                       MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD),
            "MPI_Reduce");
    }
  }

  double max_all(double value) override {
    double out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }

  std::uint64_t fetch_next() override {
    const std::uint64_t one = 1;
    std::uint64_t got = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_);
    const int rc = MPI_Fetch_and_op(&one, &got, MPI_UINT64_T, 0, 0, MPI_SUM, win_);
    MPI_Win_unlock(0, win_);
    check(rc, "MPI_Fetch_and_op");
    return got;
  }

  [[noreturn]] void abort(const std::string& message, int status) override {
    std::fprintf(stderr, "tristream rank %d of %d: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // (MPI_Abort does not return)
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::uint64_t* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

std::unique_ptr<MpiCommunicator> g_comm;

}  // namespace

bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

Session::Session(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    std::fprintf(stderr, "tristream: the MPI library does not allow calls from several threads\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  g_comm = std::make_unique<MpiCommunicator>();
  set_communicator(g_comm.get());
  // mpirun binds each rank to one core by default (two ranks or fewer): a rank then decompresses
  // and builds blocks on that core alone, several times slower. Say so once.
  const unsigned hw = std::thread::hardware_concurrency();
  if (g_comm->rank() == 0 && usable_cpus() == 1 && hw > 1)
    std::fprintf(stderr,
                 "tristream: warning: this rank may run on 1 of %u CPUs (mpirun binds ranks to "
                 "cores by default); start it with `mpirun --bind-to none` (or --map-by "
                 "ppr:1:node:pe=N) to give each rank the cores of its GPU or node\n",
                 hw);
}

Session::~Session() {
  set_communicator(nullptr);
  g_comm.reset();
  MPI_Finalize();
}

}  // namespace tristream::mpi
