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

// Writes the .tcsr file `output` by write(output, o) with the planner's census stored in it:
// taken from the rows while they are written (o.observer set here), else stored after the write
// (tristream::reindex); the summary's file size and seconds include it (cmd_convert.cpp).
ConvertSummary write_tcsr_with_census(
    const std::string& output, ConvertOptions o,
    const std::function<ConvertSummary(const std::string&, const ConvertOptions&)>& write);

// The most --threads any command accepts: more threads than this is a typo, not a machine.
inline constexpr std::uint64_t kMaxThreads = 4096;

// Help of --host-memory, shared by `count` and `plan` (the same budget plans both).
inline constexpr const char* kHostMemoryHelp =
    "host memory the whole process may use: the program, row offsets, threads, census, "
    "staging, decompression, caches, degrees and per-vertex arrays (docs/memory.md) [what the "
    "process holds plus 7/8 of the available memory, cgroup limits included]";

}  // namespace tristream::cli
