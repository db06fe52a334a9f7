// cmd_reindex.cpp — `tristream reindex FILE`: stores the planner's block census in a .tcsr file
// (its census extension), so that out-of-core counts and plans of it skip the census pass. The
// file is replaced atomically; `convert` and `generate` store the census themselves.
#include <chrono>
#include <cstdio>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "common/json.hpp"
#include "tristream/tristream.hpp"

namespace tristream::cli {

int cmd_reindex(int argc, char** argv) {
  std::string path;
  std::uint64_t threads = 0;
  bool json = false;
  ArgParser p("tristream reindex",
              "Stores the planner's block census in a .tcsr file (format version 3), so that\n"
              "out-of-core plans of it need no pass over the graph. Files written by an older\n"
              "`tristream convert` lack it; the file is rewritten atomically.");
  p.positional("FILE", "the .tcsr file to index", &path)
      .uint_option("threads", "N", "worker threads, 1..4096 [all usable cores]", &threads, 1,
                   kMaxThreads)
      .flag("json", "-j", "print the result as one JSON object", &json)
      .epilog("Example:\n  tristream reindex graph.tcsr");
  if (!p.parse(argc, argv)) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t bytes = reindex(path, static_cast<unsigned>(threads));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (json) {
    JsonObject o;
    o.add("file", path).add("census_bytes", bytes).add("seconds", s);
    std::printf("%s\n", o.str().c_str());
  } else {
    std::printf("%s: census stored (%s) in %.2f s\n", path.c_str(), format_bytes(bytes).c_str(), s);
  }
  return 0;
}

}  // namespace tristream::cli
