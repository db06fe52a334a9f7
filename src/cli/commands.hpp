// commands.hpp — the subcommands of the tristream binary. Each takes argv with argv[0] being the
// subcommand name, returns the exit status, and throws tristream::Error on failure (main maps
// the error kind to the exit status and prints "error: ...").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tristream/convert.hpp"

namespace tristream::cli {

int cmd_convert(int argc, char** argv);
int cmd_count(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_reindex(int argc, char** argv);

// Stores the planner's census in the .tcsr file just written (tristream::reindex) and updates
// the summary's file size and seconds (cmd_convert.cpp).
void store_census(const std::string& path, unsigned threads, ConvertSummary* s);
// Writes the .tcsr file `output` through a temporary beside it (named *.tmp.tcsr, created
// exclusively): write(temporary), the census stored in it, then renamed over `output`; on any
// error or interrupt the temporary is removed and `output` left as it was (cmd_convert.cpp).
ConvertSummary write_tcsr_with_census(
    const std::string& output, unsigned threads,
    const std::function<ConvertSummary(const std::string&)>& write);

// The most --threads any command accepts: more threads than this is a typo, not a machine.
inline constexpr std::uint64_t kMaxThreads = 4096;

// Help of --host-memory, shared by `count` and `plan` (the same budget plans both).
inline constexpr const char* kHostMemoryHelp =
    "host memory the whole process may use: the program, row offsets, threads, census, "
    "staging, decompression, caches, degrees and per-vertex arrays (docs/memory.md) [what the "
    "process holds plus 7/8 of the available memory, cgroup limits included]";

}  // namespace tristream::cli
