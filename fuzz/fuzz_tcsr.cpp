// fuzz_tcsr.cpp — libFuzzer target: the .tcsr reader and its full validation (`info --check`).
// Input byte 0 picks the mode: bit 0 set = recompute every checksum of the rest first (formats'
// reseal), so that mutations reach the structural checks, the zstd decoder and the id checks
// instead of stopping at a checksum; clear = the bytes as they are. Bit 1 set = the file shrinks
// to (byte 0 >> 2) / 64 of its size once the reader has opened it (a file truncated while it is
// read). The rest is the file.
// Contract: every input opens, loads and checks, or fails with Error(Input); anything else (a
// sanitizer report, another exception, an Error of another kind) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../formats/reseal.hpp"
#include "fuzz_support.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tristream;
  if (size < 1) return 0;
  std::vector<unsigned char> file(data + 1, data + size);
  if (data[0] & 1) tcsr::detail::reseal(file);
  const std::string path = fuzz::memory_file(0, file.data(), file.size());
  try {
    tcsr::Reader r(path);
    if (data[0] & 2) fuzz::truncate_memory_file(0, file.size() * (data[0] >> 2) / 64);
    const OrientedGraph g = r.load(true, 1);
    r.check(1);
    // The graph read back satisfies what the reader promises.
    if (g.csr.offsets.size() != r.n() + 1 || g.csr.cols.size() != r.m()) std::abort();
    if (r.m() > 0) {
      std::vector<vid_t> some(r.m() - r.m() / 2);
      r.read_edges(r.m() / 2, r.m(), some.data());
    }
    if (fuzz::verbose())
      std::fprintf(stderr, "ok: n %llu, m %llu\n", fuzz::ull(r.n()), fuzz::ull(r.m()));
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "refused: %s\n", e.what());
    if (e.kind() != ErrorKind::Input) {
      std::fprintf(stderr, "not an input error: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
