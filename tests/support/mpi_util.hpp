// mpi_util.hpp — `mpirun` for the tests of MPI ranks (tests/mpi/): whether it exists, and a run
// of the tristream binary under it.
#pragma once

#include <cstdlib>
#include <string>

#include "test_util.hpp"

namespace tristream::test {

inline bool have_mpirun() {
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

// Runs `mpirun <launch>` with the tristream binary's commands in `args` (each "{bin}" replaced
// by the binary), as root too, never longer than two minutes.
inline RunResult run_mpi(const std::string& args) {
  std::string cmd = args;
  for (std::size_t at; (at = cmd.find("{bin}")) != std::string::npos;)
    cmd.replace(at, 5, q(TRISTREAM_BINARY));
  return run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_rmaps_base_oversubscribe=1 "
      "timeout 120 mpirun --oversubscribe " +
      cmd);
}

}  // namespace tristream::test
