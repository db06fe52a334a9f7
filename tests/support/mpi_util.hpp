// mpi_util.hpp — `mpirun` for the tests of MPI ranks (tests/mpi/): whether it exists, a run of
// the tristream binary under it, and a field of the JSON that rank 0 prints.
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

// The text of the first `"key":` value in a JSON line (a number, or a string with its quotes).
inline std::string json_field(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  const std::size_t v = at + key.size() + 3;
  return json.substr(v, json.find_first_of(",}", v) - v);
}

}  // namespace tristream::test
