// golden_test.cpp — pins the exact bytes of small conversions by their hash (FNV-1a 64), so that a
// change of the converter's structure provably changes no output: in memory and out of core (one
// and several row ranges), dense and sparse ids, one and several threads, the chunks as byte
// planes (the default) and as they are (the bytes from before byte planes). A deliberate change
// of the output format updates the hashes here, in the same commit.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "tristream/convert.hpp"
#include "tristream/generate.hpp"

namespace tristream {
namespace {

using test::TempDir;

std::uint64_t fnv1a(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : os.str()) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string hex(std::uint64_t h) {
  char s[20];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
  return s;
}

GenerateOptions kron(unsigned scale) {
  GenerateOptions g;
  g.kind = "kronecker";
  g.scale = scale;
  g.edge_factor = 8;
  g.seed = 5;
  return g;
}

ConvertOptions quiet(unsigned threads, std::uint64_t limit, const std::string& tmp, bool planes) {
  ConvertOptions c;
  c.quiet = true;
  c.threads = threads;
  c.write.threads = threads;
  c.write.planes = planes;
  c.memory_limit = limit;
  c.tmp_dir = tmp;
  return c;
}

// Kronecker scale 12 (dense ids), in memory and out of core (one row range).
TEST(Golden, GeneratedSmallGraphBytes) {
  TempDir d;
  const std::string want[2] = {"ea535e25d996a518", "9ff15bf24bbad742"};  // as they are, planes
  for (bool planes : {false, true})
    for (unsigned t : {1u, 3u})
      for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{64} << 10}) {
        const std::string out = d.file("k.tcsr");
        const ConvertSummary s = generate(kron(12), out, quiet(t, limit, d.path(), planes));
        EXPECT_EQ(s.out_of_core, limit != 0);
        EXPECT_EQ(hex(fnv1a(out)), want[planes])
            << "threads " << t << " limit " << limit << " planes " << planes;
      }
}

// Kronecker scale 15: out of core its rows are filled in several ranges from a spill file; under
// the smallest limit the runs outnumber one merge pass.
TEST(Golden, OutOfCoreSeveralRowRangesBytes) {
  TempDir d;
  const std::string want[2] = {"7d254266763609ef", "dc6330d0f357f3e8"};
  for (bool planes : {false, true})
    for (unsigned t : {1u, 2u})
      for (std::uint64_t limit :
           {std::uint64_t{0}, std::uint64_t{256} << 10, std::uint64_t{48} << 10}) {
        const std::string out = d.file("k.tcsr");
        generate(kron(15), out, quiet(t, limit, d.path(), planes));
        EXPECT_EQ(hex(fnv1a(out)), want[planes])
            << "threads " << t << " limit " << limit << " planes " << planes;
      }
}

// Kronecker scale 16 under a small limit: more sorted runs than one merge pass takes (64).
TEST(Golden, ManyRunsBytes) {
  TempDir d;
  const std::string want[2] = {"44e44399ff338476", "add834ac5903f780"};
  for (bool planes : {false, true})
    for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{256} << 10}) {
      const std::string out = d.file("k.tcsr");
      generate(kron(16), out, quiet(2, limit, d.path(), planes));
      EXPECT_EQ(hex(fnv1a(out)), want[planes]) << "limit " << limit << " planes " << planes;
    }
}

// Sparse 64-bit ids (the sorted id table instead of the bitmap), from a text edge list.
TEST(Golden, SparseIdsBytes) {
  TempDir d;
  std::string text;
  for (auto [u, v] : generate_edges(kron(11)))
    text += std::to_string(u * 1000003 + (std::uint64_t{1} << 41)) + " " +
            std::to_string(v * 1000003 + (std::uint64_t{1} << 41)) + "\n";
  test::write_text(d.file("s.el"), text);
  const std::string want[2] = {"291876ef7e87fd60", "0410d45d4ebfea65"};
  for (bool planes : {false, true})
    for (unsigned t : {1u, 3u})
      for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{64} << 10}) {
        const std::string out = d.file("s.tcsr");
        convert(d.file("s.el"), out, quiet(t, limit, d.path(), planes));
        EXPECT_EQ(hex(fnv1a(out)), want[planes])
            << "threads " << t << " limit " << limit << " planes " << planes;
      }
}

}  // namespace
}  // namespace tristream
