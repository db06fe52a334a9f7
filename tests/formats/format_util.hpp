// format_util.hpp — the .tcsr format tests' shared pieces: oriented test graphs, equality of two
// graphs, a folder's entries, an expected internal error, and a file opened, loaded and checked
// as a reader can; with `using namespace format_testing` also the format's internals
// (tcsr::detail) and the test support's byte and error helpers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "../../formats/layout.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::format_testing {

namespace fs = std::filesystem;
using namespace tcsr::detail;
using test::Bytes;
using test::expect_input_error;
using test::read_bytes;
using test::write_bytes;

inline OrientedGraph random_oriented(vid_t n, std::uint64_t m, std::uint64_t seed,
                                     bool skewed = false) {
  return orient_edge_list(n,
                          skewed ? test::skewed_graph(n, m, seed) : test::random_graph(n, m, seed));
}

inline std::uint64_t degree(const OrientedGraph& g, std::uint64_t r) {
  return g.csr.offsets[r + 1] - g.csr.offsets[r];
}

inline void expect_same(const OrientedGraph& a, const OrientedGraph& b) {
  ASSERT_EQ(a.csr.offsets, b.csr.offsets);
  ASSERT_EQ(a.csr.cols, b.csr.cols);
  EXPECT_EQ(a.csr.col_space, b.csr.col_space);
}

inline std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline void expect_internal_error(const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
  }
}

// Everything a reader can verify: opening, the whole graph and permutation, and check().
inline OrientedGraph open_and_verify(const std::string& path) {
  tcsr::Reader r(path);
  OrientedGraph g = r.load(true, 2);
  r.check(2);
  return g;
}

}  // namespace tristream::format_testing
