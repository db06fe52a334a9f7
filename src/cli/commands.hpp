// commands.hpp — the subcommands of the tristream binary. Each takes argv with argv[0] being the
// subcommand name, returns the exit status, and throws tristream::Error on failure (main maps
// the error kind to the exit status and prints "error: ...").
#pragma once

namespace tristream::cli {

int cmd_convert(int argc, char** argv);
int cmd_count(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_plan(int argc, char** argv);

}  // namespace tristream::cli
