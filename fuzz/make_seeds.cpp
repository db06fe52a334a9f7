// make_seeds.cpp — writes the seed corpora of the fuzz targets: `make_seeds DIR` fills DIR/tcsr
// (small valid .tcsr files written by tcsr::Writer, each with mode bytes 0, 1 and 162, see
// fuzz_tcsr.cpp) and DIR/convert (a small edge list in every dialect, dialect and memory bytes
// first, see fuzz_convert.cpp). Deterministic: the same seeds on every run.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tristream/csr.hpp"
#include "tristream/format.hpp"

namespace {

namespace fs = std::filesystem;
using namespace tristream;
using Bytes = std::vector<unsigned char>;

void write(const fs::path& path, unsigned char b0, const Bytes& body) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.put(static_cast<char>(b0));
  out.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
}

Bytes read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A small pseudo-random oriented graph (a fixed linear congruential sequence).
OrientedGraph graph(vid_t n, int edges, std::uint64_t seed) {
  std::vector<std::pair<vid_t, vid_t>> list;
  for (int i = 0; i < edges; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    list.emplace_back(static_cast<vid_t>((seed >> 33) % n), static_cast<vid_t>((seed >> 13) % n));
  }
  return orient_edge_list(n, list);
}

void tcsr_seeds(const fs::path& dir) {
  struct Case {
    const char* name;
    OrientedGraph g;
    std::uint64_t chunk_bytes;
    bool delta;
    bool planes = true;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", OrientedGraph{}, 64, true});
  cases.push_back({"one_edge", orient_edge_list(2, {{0, 1}}), 64, true});
  cases.push_back({"triangle_plain", orient_edge_list(3, {{0, 1}, {1, 2}, {2, 0}}), 8, false});
  cases.push_back({"small_delta", graph(20, 60, 1), 16, true});
  cases.push_back({"small_plain", graph(20, 60, 2), 32, false});
  cases.push_back({"one_chunk", graph(12, 30, 3), 4096, true});
  cases.push_back({"small_delta_no_planes", graph(20, 60, 4), 16, true, false});
  const fs::path tmp = dir / "tmp.tcsr";
  for (auto& c : cases) {
    tcsr::WriteOptions o;
    o.chunk_bytes = c.chunk_bytes;
    o.delta = c.delta;
    o.planes = c.planes;
    o.threads = 1;
    tcsr::write_file(tmp.string(), c.g, o);
    const Bytes b = read(tmp);
    write(dir / (std::string(c.name) + "_raw"), 0, b);
    write(dir / (std::string(c.name) + "_resealed"), 1, b);
    write(dir / (std::string(c.name) + "_shrinks"), 2 | (40 << 2), b);  // to 40/64 after open
  }
  fs::remove(tmp);
}

Bytes text(const char* s) {
  return Bytes(s, s + std::strlen(s));
}

template <typename T>
Bytes binary(const std::vector<T>& ids) {
  Bytes b(ids.size() * sizeof(T));
  std::memcpy(b.data(), ids.data(), b.size());
  return b;
}

void convert_seeds(const fs::path& dir) {
  // Byte 0: the dialect's index in fuzz_convert.cpp's table; byte 1: the memory limit.
  struct Seed {
    const char* name;
    unsigned char dialect, memory;
    Bytes body;
  };
  std::vector<Seed> seeds = {
      {"plain", 0, 0, text("1 2\n2 3\n3 1\n# a comment\n% another\n\n4 1 0.5\n1 4\r\n")},
      {"plain_big_ids", 0, 7, text("18446744073709551615 0\n0 7\n7 18446744073709551615\n")},
      {"snap", 1, 3,
       text("# Directed graph: g.txt\n# Nodes: 4 Edges: 5\n# FromNodeId\tToNodeId\n0\t1\n1\t2\n"
            "2\t0\n2\t3\n3\t3\n")},
      {"tsv", 2, 1, text("1\t2\t1\n2\t3\t1\n3\t1\t1\n3\t4\t1\n")},
      {"mtx_pattern", 3, 2,
       text("%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n4 4 4\n2 1\n3 1\n"
            "3 2\n4 3\n")},
      {"mtx_real", 3, 5,
       text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 0.5\n2 3 1e3\n3 1 -2\n")},
      {"bin32", 4, 4, binary<std::uint32_t>({0, 1, 1, 2, 2, 0, 2, 3, 5, 1})},
      {"bin64", 5, 6, binary<std::uint64_t>({0, 1, 1, 2, 2, 0, 1ull << 40, 3})},
      {"auto_mtx", 6, 0, text("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 7\n")},
      {"auto_plain", 6, 130, text("5 6\n6 7\n7 5\n")},
  };
  // Enough edges to spill under the smallest limits (the out-of-core path).
  std::string many;
  std::vector<std::uint32_t> many32;
  for (std::uint32_t i = 0; i < 300; ++i) {
    const std::uint32_t u = i * 7919 % 97, v = i * 104729 % 89;
    many += std::to_string(u) + " " + std::to_string(v) + "\n";
    many32.push_back(u);
    many32.push_back(v);
  }
  seeds.push_back({"plain_spills", 0, 0, text(many.c_str())});
  seeds.push_back({"bin32_spills", 4, 1, binary(many32)});
  for (const Seed& s : seeds) {
    Bytes b = s.body;
    b.insert(b.begin(), s.memory);
    write(dir / s.name, s.dialect, b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 1;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir / "tcsr");
  fs::create_directories(dir / "convert");
  tcsr_seeds(dir / "tcsr");
  convert_seeds(dir / "convert");
  return 0;
}
