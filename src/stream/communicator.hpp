// stream/communicator.hpp — what a count over several processes needs from them, without MPI
// types: src/mpi/ implements it over MPI (the core never includes mpi.h). Rank 0 plans and
// prints; every rank counts its units. All calls are collective unless said otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tristream {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank among the ranks on this machine (0 .. ranks here - 1): its GPU by default.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;  // the ranks on this machine
  // Rank 0's bytes to every rank (`bytes` is replaced on the others).
  virtual void broadcast(std::string& bytes) = 0;
  // Sums n values of every rank into rank 0's `data` (the others' are left as they are).
  virtual void sum_to_root(std::uint64_t* data, std::size_t n) = 0;
  // The largest value over the ranks, on every rank.
  virtual double max_all(double value) = 0;
  // Not collective: the next index of a counter shared by all ranks (0, 1, 2, ... over the
  // ranks' calls together), for units handed out dynamically. Callers serialize their calls.
  virtual std::uint64_t fetch_next() = 0;
  // Not collective: prints `message` and ends every rank with `status`.
  [[noreturn]] virtual void abort(const std::string& message, int status) = 0;
};

// The process's communicator (src/mpi/ sets it when launched by mpirun), or null for one process.
Communicator* communicator();
void set_communicator(Communicator* comm);

}  // namespace tristream
