// names_section_test.cpp — the names section of a version-2 .tcsr file: written and read back by
// original id, version 1 kept for files without names, and every kind of damage (checksum,
// offsets, lengths, sizes, truncation) refused at open with the file and the section named.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../../formats/layout.hpp"
#include "../../formats/reseal.hpp"
#include "test_util.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream {
namespace {

using namespace tcsr::detail;
using test::Bytes;

using test::read_bytes;
using test::write_bytes;

using test::expect_input_error;

// A triangle 0-1-2 plus the edge 2-3, ranked by a permutation, with the names `names`.
void write_named(const std::string& path, const std::vector<std::string>& names) {
  tcsr::WriteOptions o;
  o.threads = 1;
  tcsr::Writer w(path, 4, o);
  w.set_permutation({3, 0, 1, 2});  // new id -> original id
  tcsr::Names t;
  for (const auto& s : names) t.add(s);
  w.set_names(std::move(t));
  // Rows in new ids: originals 0,1,2 are new 1,2,3; original 3 is new 0.
  const vid_t r0[] = {3}, r1[] = {2, 3}, r2[] = {3};
  w.append_row(r0, 1);
  w.append_row(r1, 2);
  w.append_row(r2, 1);
  w.append_row(nullptr, 0);
  w.finish();
}

const std::vector<std::string> kNamesOf4 = {"alice", "bob, jr.", "\"carol\"", "dave"};

// The names section's table entry of a file image.
unsigned char* names_entry(Bytes& b) {
  return b.data() + kOffSectionTable + (kNames - 1) * kSectionEntrySize;
}

TEST(NamesSection, NamesReadBackByOriginalId) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr");
  write_named(path, kNamesOf4);
  tcsr::Reader r(path);
  EXPECT_EQ(r.header().version, tcsr::kFormatVersionNames);
  ASSERT_TRUE(r.has_names());
  for (std::uint64_t k = 0; k < 4; ++k) EXPECT_EQ(r.name(k), kNamesOf4[k]);
  const auto perm = r.permutation();
  EXPECT_EQ(r.name(perm[0]), "dave");
  r.check(1);
  EXPECT_THROW(r.name(4), Error);
}

TEST(NamesSection, FileWithoutNamesStaysVersion1) {
  test::TempDir d;
  const std::string path = d.file("plain.tcsr");
  tcsr::Writer w(path, 2);
  const vid_t r0[] = {1};
  w.append_row(r0, 1);
  w.append_row(nullptr, 0);
  w.finish();
  tcsr::Reader r(path);
  EXPECT_EQ(r.header().version, tcsr::kFormatVersion);
  EXPECT_FALSE(r.has_names());
  EXPECT_THROW(r.name(0), Error);
}

TEST(NamesSection, WriterRefusesWrongNameCountEmptyNamesAndForeignIds) {
  test::TempDir d;
  {
    tcsr::Writer w(d.file("a.tcsr"), 2);
    tcsr::Names t;
    t.add("x");
    EXPECT_THROW(w.set_names(t), Error);
  }
  {
    tcsr::Writer w(d.file("b.tcsr"), 2);
    tcsr::Names t;
    t.add("x");
    t.add("");
    EXPECT_THROW(w.set_names(t), Error);
  }
  {
    // Names are indexed by original id: original id 7 has none.
    tcsr::Writer w(d.file("c.tcsr"), 2);
    w.set_permutation({7, 0});
    tcsr::Names t;
    t.add("x");
    t.add("y");
    w.set_names(t);
    const vid_t r0[] = {1};
    w.append_row(r0, 1);
    w.append_row(nullptr, 0);
    EXPECT_THROW(w.finish(), Error);
  }
}

TEST(NamesSection, DamagedNameBytesFailTheChecksum) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr");
  write_named(path, kNamesOf4);
  Bytes b = read_bytes(path);
  b[b.size() - 2] ^= 0x20;  // inside "dave"
  write_bytes(path, b);
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section names", "checksum"});
}

TEST(NamesSection, EveryFlippedByteOfTheSectionIsRefused) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr"), bad = d.file("bad.tcsr");
  write_named(path, kNamesOf4);
  const Bytes good = read_bytes(path);
  Bytes g = good;
  const std::uint64_t offset = get_u64(names_entry(g) + kSecOffset);
  for (std::uint64_t i = offset; i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= 0x01;
    write_bytes(bad, b);
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names"});
  }
}

// The offsets rewritten and the checksums resealed: the structural checks must catch them.
TEST(NamesSection, BadOffsetsAreRefusedAfterTheChecksum) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr"), bad = d.file("bad.tcsr");
  write_named(path, kNamesOf4);
  const Bytes good = read_bytes(path);
  Bytes g = good;
  const std::uint64_t offset = get_u64(names_entry(g) + kSecOffset);
  auto with_offset = [&](std::uint64_t k, std::uint64_t value) {
    Bytes b = good;
    put_u64(b.data() + offset + 8 * k, value);
    reseal(b);
    write_bytes(bad, b);
  };
  with_offset(0, 1);
  expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names", "offsets[0]"});
  with_offset(2, 5);  // name 1 ("bob, jr.") becomes empty: offsets[1] = 5 = offsets[2]
  expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names", "name 1 has 0 bytes"});
  with_offset(2, 3);  // below offsets[1]
  expect_input_error([&] { tcsr::Reader r(bad); },
                     {bad, "section names", "name 1 has a negative length"});
  with_offset(4, 1000);
  expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names", "offsets[n] = 1000"});
}

TEST(NamesSection, SectionTooSmallForTheOffsetsIsRefused) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr"), bad = d.file("bad.tcsr");
  write_named(path, kNamesOf4);
  Bytes b = read_bytes(path);
  const std::uint64_t offset = get_u64(names_entry(b) + kSecOffset);
  b.resize(offset + 16);
  put_u64(names_entry(b) + kSecSize, 16);
  reseal(b);
  write_bytes(bad, b);
  expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names", "cannot hold"});
}

TEST(NamesSection, TruncatedAtEveryLengthIsRefused) {
  test::TempDir d;
  const std::string path = d.file("n.tcsr"), bad = d.file("bad.tcsr");
  write_named(path, kNamesOf4);
  const Bytes good = read_bytes(path);
  for (std::size_t len = 0; len < good.size(); ++len) {
    write_bytes(bad, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)));
    expect_input_error([&] { tcsr::Reader r(bad); }, {bad});
  }
  // Bytes after the names section are trailing data.
  Bytes longer = good;
  longer.push_back(0);
  write_bytes(bad, longer);
  expect_input_error([&] { tcsr::Reader r(bad); }, {bad, "section names", "trailing"});
}

TEST(NamesSection, Version1FilesMayNotUseTheFifthTableEntry) {
  // A version-1 header with bytes in the slot version 2 gives the names entry: reserved bytes.
  test::TempDir d;
  const std::string path = d.file("plain.tcsr");
  tcsr::Writer w(path, 2);
  const vid_t r0[] = {1};
  w.append_row(r0, 1);
  w.append_row(nullptr, 0);
  w.finish();
  Bytes b = read_bytes(path);
  put_u32(b.data() + kOffSectionTable + 4 * kSectionEntrySize, kNames);
  reseal(b);
  write_bytes(path, b);
  expect_input_error([&] { tcsr::Reader r(path); }, {path, "section header", "reserved byte"});
}

}  // namespace
}  // namespace tristream
