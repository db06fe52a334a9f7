// convert_edges.cpp — in-memory edge arrays into .tcsr files: the pairs are written as a binary
// edge list (bin64 or bin32, native byte order) into a private temporary directory and converted
// by the file converter, so arrays and files are cleaned, oriented and validated by one code path.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "api/temp_dir.hpp"
#include "tristream/error.hpp"
#include "tristream/tristream.hpp"

namespace tristream {

namespace {

template <class Id>
ConvertSummary convert_pairs(const Id* pairs, std::size_t m, const std::string& output,
                             const ConvertOptions& options) {
  constexpr bool wide = sizeof(Id) == 8;
  if (m > 0 && !pairs)
    throw Error(ErrorKind::Usage, "convert_edges: null edge array with m = " + std::to_string(m));
  // 1. The edges as a binary edge list in a private directory (also the converter's spill dir).
  api::TempDir tmp(options.tmp_dir);
  const std::string path = tmp.path() + (wide ? "/edges.bin64" : "/edges.bin32");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(ErrorKind::Input, path + ": cannot create: " + std::strerror(errno));
  const std::size_t written = m ? std::fwrite(pairs, 2 * sizeof(Id), m, f) : 0;
  const bool ok = written == m && std::fflush(f) == 0;
  std::fclose(f);
  if (!ok) throw Error(ErrorKind::Input, path + ": cannot write the edges (disk full?)");
  // 2. The file converter with the dialect fixed.
  ConvertOptions o = options;
  o.format = wide ? "bin64" : "bin32";
  o.tmp_dir = tmp.path();
  return convert(path, output, o);
}

}  // namespace

ConvertSummary convert_edges(const std::uint64_t* pairs, std::size_t m, const std::string& output,
                             const ConvertOptions& options) {
  return convert_pairs(pairs, m, output, options);
}

ConvertSummary convert_edges(const std::uint32_t* pairs, std::size_t m, const std::string& output,
                             const ConvertOptions& options) {
  return convert_pairs(pairs, m, output, options);
}

}  // namespace tristream
