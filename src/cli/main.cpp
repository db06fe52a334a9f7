// tristream — exact triangle counting for graphs larger than GPU memory and host RAM.
// Entry point: dispatches to the subcommands and maps errors to exit statuses
// (0 success, 1 bad input or usage, 2 internal or device error, 130 interrupted by SIGINT, 143
// by SIGTERM). The commands that write files (convert, count, generate) take SIGINT and SIGTERM
// as a flag their loops poll (common/interrupt.hpp): they stop within about 100 ms, remove their
// temporary files and leave no output; the others end by the signal's default action.
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "commands.hpp"
#include "common/host_peak.hpp"
#include "common/interrupt.hpp"
#include "stream/communicator.hpp"
#include "tristream/error.hpp"
#ifdef TRISTREAM_HAVE_MPI
#include "mpi/session.hpp"
#endif

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int, char**);
  bool polls_interrupts;  // its long loops poll the SIGINT/SIGTERM flag
};

const Command kCommands[] = {
    {"convert", "convert an edge list into a .tcsr file", tristream::cli::cmd_convert, true},
    {"count", "count the triangles of a .tcsr file or an edge list", tristream::cli::cmd_count,
     true},
    {"info", "show (and with --check, verify) a .tcsr file or an edge list",
     tristream::cli::cmd_info, false},
    {"generate", "generate a Kronecker or uniform random graph", tristream::cli::cmd_generate,
     true},
    {"plan", "show how a graph would be partitioned for a device budget", tristream::cli::cmd_plan,
     false},
    {"reindex", "store the planner's census in a .tcsr file (fast out-of-core planning)",
     tristream::cli::cmd_reindex, true},
};

// Launched by mpirun with several ranks, a failing (or interrupted) rank ends every rank (they
// would wait for it in a collective call): its message is printed, then MPI aborts the job with
// the exit status.
int fail(int status, const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  if (tristream::Communicator* comm = tristream::communicator(); comm && comm->size() > 1)
    comm->abort("failed (exit status " + std::to_string(status) + "); stopping every rank", status);
  return status;
}

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "usage: tristream COMMAND [options] ...\n\n"
               "Exact triangle counting on one GPU (or the CPU), also for graphs larger than GPU\n"
               "memory and host RAM.\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(to, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(
      to,
      "\nRun 'tristream help COMMAND' (or 'tristream COMMAND --help') for the options of a\n"
      "command. The outputs are defined in docs/outputs.md.\n"
      "Exit status: 0 success, 1 bad input or usage, 2 internal or device error, 130\n"
      "interrupted (SIGINT), 143 terminated (SIGTERM).\n");
}

}  // namespace

int main(int argc, char** argv) {
  tristream::release_freed_memory_promptly();  // the host budget counts resident memory
  if (argc < 2) {
    print_usage(stderr);
    return 1;
  }
  std::string name = argv[1];
  if (name == "help" && argc >= 3) {
    // `tristream help CMD` is `tristream CMD --help`.
    static char help_flag[] = "--help";
    char* args[] = {argv[2], help_flag, nullptr};
    name = argv[2];
    for (const auto& c : kCommands)
      if (name == c.name) return c.run(2, args);
    std::fprintf(stderr, "error: unknown command '%s'\n\n", name.c_str());
    print_usage(stderr);
    return 1;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("tristream %s\n", TRISTREAM_VERSION);
    return 0;
  }
#ifdef TRISTREAM_HAVE_MPI
  // `count` under mpirun: one rank per process (docs/scale-out.md).
  std::unique_ptr<tristream::mpi::Session> mpi;
  if (name == "count" && tristream::mpi::launched_by_mpirun())
    mpi = std::make_unique<tristream::mpi::Session>(&argc, &argv);
#endif
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    if (c.polls_interrupts) tristream::install_interrupt_handlers();
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const tristream::Error& e) {
      if (e.kind() == tristream::ErrorKind::Interrupted)
        return fail(tristream::interrupt_exit_status(), e.what());
      return fail(e.exit_code(), e.what());
    } catch (const std::bad_alloc&) {
      return fail(2, "out of memory");
    } catch (const std::exception& e) {
      return fail(2, std::string("internal: ") + e.what());
    }
  }
  std::fprintf(stderr, "error: unknown command '%s'\n\n", name.c_str());
  print_usage(stderr);
  return 1;
}
