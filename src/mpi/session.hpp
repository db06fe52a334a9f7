// mpi/session.hpp — MPI for `tristream count` launched by mpirun: the only place that includes
// mpi.h. A Session starts MPI (threads serialized: a rank's workers ask the shared counter for
// batches from their own threads, one at a time) and sets the process's Communicator
// (stream/communicator.hpp) until it ends. Built only with TRISTREAM_ENABLE_MPI.
#pragma once

namespace tristream::mpi {

// Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started this process.
bool launched_by_mpirun();

class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();  // collective: every rank ends its session (MPI_Finalize)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

}  // namespace tristream::mpi
