// fuzz_convert.cpp — libFuzzer target: every edge-list dialect through tristream::convert with
// tiny memory limits (so the out-of-core path runs too). Input byte 0 picks the dialect (and
// whether to name it or let "auto" detect it), byte 1 the memory limit; the rest is the input.
// Contract: every input converts (and the output reads back and checks) or fails with
// Error(Input); either way nothing is left in the output and spill directory. Anything else is
// a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "fuzz_support.hpp"
#include "tristream/convert.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace {

const char* const kDialects[] = {"plain", "snap", "tsv", "mtx", "bin32", "bin64", "auto"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tristream;
  if (size < 2) return 0;
  const std::string input = fuzz::memory_file(1, data + 2, size - 2);
  const std::string output = fuzz::scratch_dir() + "/out.tcsr";
  ConvertOptions o;
  o.format = kDialects[data[0] % (sizeof kDialects / sizeof kDialects[0])];
  o.memory_limit = std::uint64_t{4} << (10 + data[1] % 8);  // 4 KiB .. 512 KiB
  o.tmp_dir = fuzz::scratch_dir();
  o.threads = 1 + data[1] / 128;
  o.quiet = true;
  o.write.chunk_bytes = 64;
  o.write.threads = 1;
  try {
    const ConvertSummary s = convert(input, output, o);
    tcsr::Reader r(output);
    r.check(1);
    if (r.m() != s.edges || r.n() != s.vertices) std::abort();
    if (fuzz::verbose())
      std::fprintf(stderr, "ok: n %llu, m %llu%s\n", fuzz::ull(r.n()), fuzz::ull(r.m()),
                   s.out_of_core ? ", out of core" : "");
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "refused: %s\n", e.what());
    if (e.kind() != ErrorKind::Input && e.kind() != ErrorKind::Usage) {
      std::fprintf(stderr, "not an input error: %s\n", e.what());
      std::abort();
    }
  }
  ::unlink(output.c_str());
  // Nothing is left behind: no temporary output, no spill file, whatever the outcome.
  for (const auto& entry : std::filesystem::directory_iterator(fuzz::scratch_dir())) {
    std::fprintf(stderr, "left behind: %s\n", entry.path().c_str());
    std::abort();
  }
  return 0;
}
