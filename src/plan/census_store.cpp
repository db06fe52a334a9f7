// census_store.cpp — the census stored in a .tcsr file (tristream/plan.hpp: stored_census_options,
// encode_stored_census, census_from_store, obtain_census; the bytes are framed by the format's
// census extension, formats/FORMAT.md).
//
// Beside the planner's figures it holds the undirected graph's wedges (payload version 2), so that
// a count's transitivity needs no degree pass either. Version 1 (without them) is still read.
//
// The stored census is take_census's for the automatic plan's options, with the exact proxy
// edges of the vertex scheme and the upper bounds they replaced, so a reader rebuilds exactly
// what take_census would return for any device budget: it skips the exact values where
// take_census would have skipped their pass. Its boundaries are recomputed from the row offsets
// and must match; its histograms must sum to m. Payload (little-endian, u64 unless noted):
//
//   u32 magic 'TSCE' | u32 payload version 2 | u32 fine | u32 hash_mod | u32 vertex_groups |
//   u32 flags (bit 0: vertex statistics; bit 1: wedges) | n | m | [wedges lo | wedges hi] |
//   F + 1 | G + 1 | V |
//   fine_bounds[F + 1] | fine_hist[F * F] | hash_hist[H * H] | vertex_bounds[G + 1] |
//   V x (p | proxies[p] | exact proxy edges[p] | upper bounds[p])
#include <chrono>
#include <cstring>

#include "plan/census_store.hpp"
#include "tristream/error.hpp"
#include "tristream/plan.hpp"

namespace tristream {
namespace {

constexpr std::uint32_t kMagic = 0x45435354;  // "TSCE"
constexpr std::uint32_t kPayloadVersion = 2;  // 1: without the wedges (still read)
constexpr std::uint32_t kFlagVertex = 1;
constexpr std::uint32_t kFlagWedges = 2;  // version 2 only

bool readable_version(std::uint32_t v) {
  return v == 1 || v == kPayloadVersion;
}

class Out {
 public:
  void u32(std::uint32_t v) { put(&v, 4); }
  void u64(std::uint64_t v) { put(&v, 8); }
  void u64s(const std::vector<std::uint64_t>& v) { put(v.data(), v.size() * 8); }
  void reserve(std::size_t n) { bytes.reserve(n); }
  std::vector<unsigned char> bytes;

 private:
  void put(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

// Reads the payload front to back; every read is bounds-checked, so a count is checked against
// the bytes left before it sizes anything.
class In {
 public:
  In(const std::vector<unsigned char>& b, std::string where) : b_(b), where_(std::move(where)) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::Input, where_ + ": section census: " + what);
  }
  std::uint32_t u32() {
    std::uint32_t v;
    take(&v, 4);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v;
    take(&v, 8);
    return v;
  }
  std::vector<std::uint64_t> u64s(std::uint64_t count, const char* what) {
    if (count > (b_.size() - pos_) / 8)
      fail(std::string(what) + ": " + std::to_string(count) + " entries do not fit in the " +
           std::to_string(b_.size()) + "-byte section");
    std::vector<std::uint64_t> v(static_cast<std::size_t>(count));
    take(v.data(), v.size() * 8);
    return v;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  void take(void* p, std::size_t n) {
    if (n > b_.size() - pos_) fail("truncated (" + std::to_string(b_.size()) + " bytes)");
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }
  const std::vector<unsigned char>& b_;
  std::string where_;
  std::size_t pos_ = 0;
};

// The payload's head: its version and options, the graph it belongs to, and the wedges.
struct Head {
  std::uint32_t version = 0, fine = 0, hash_mod = 0, groups = 0, flags = 0;
  bool has_wedges = false;
  WedgeSum wedges;
};

Head read_head(In& in, const GraphSource& g) {
  Head h;
  if (in.u32() != kMagic) in.fail("not a census (bad magic)");
  h.version = in.u32();
  if (!readable_version(h.version))
    in.fail("unsupported census version " + std::to_string(h.version) +
            " (this build reads 1 and 2)");
  h.fine = in.u32();
  h.hash_mod = in.u32();
  h.groups = in.u32();
  h.flags = in.u32();
  const std::uint32_t known = h.version >= 2 ? kFlagVertex | kFlagWedges : kFlagVertex;
  if (h.flags & ~known) in.fail("bad flags " + std::to_string(h.flags));
  if (in.u64() != g.n() || in.u64() != g.m()) in.fail("taken of another graph (n or m differ)");
  if (h.flags & kFlagWedges) {
    h.has_wedges = true;
    h.wedges.lo = in.u64();
    h.wedges.hi = in.u64();
    // A wedge has two edges at one vertex: at most m (m - 1) of them, below 2^127 for m < 2^63.
    if (h.wedges.hi >> 62) in.fail("impossible wedge count");
  }
  return h;
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (std::uint64_t x : v) s += x;
  return s;
}

}  // namespace

CensusOptions stored_census_options(std::uint64_t n) {
  CensusOptions o = census_options(n, PlanOptions{});
  o.vertex = true;
  o.device_budget = 0;  // the exact proxy edges always
  o.max_bytes = 0;
  return o;
}

namespace plan_internal {

std::vector<unsigned char> encode_census(const Census& c, const CensusOptions& o, std::uint64_t n,
                                         std::uint64_t m) {
  Out out;
  // The payload's size first: the histograms are megabytes, and growing into them would hold
  // twice that at once.
  std::size_t size =
      6 * 4 + 7 * 8 +
      8 * (c.fine_bounds.size() + c.fine_hist.size() + c.hash_hist.size() + c.vertex_bounds.size());
  for (const Census::VertexParts& vp : c.vertex) size += 8 + 3 * 8 * vp.proxies.size();
  out.reserve(size);
  out.u32(kMagic);
  out.u32(kPayloadVersion);
  out.u32(o.fine);
  out.u32(c.hash_mod);
  out.u32(o.vertex_groups);
  out.u32(kFlagVertex | (c.has_wedges ? kFlagWedges : 0));
  out.u64(n);
  out.u64(m);
  if (c.has_wedges) {
    out.u64(c.wedges.lo);
    out.u64(c.wedges.hi);
  }
  out.u64(c.fine_bounds.size());
  out.u64(c.vertex_bounds.size());
  out.u64(c.vertex.size());
  out.u64s(c.fine_bounds);
  out.u64s(c.fine_hist);
  out.u64s(c.hash_hist);
  out.u64s(c.vertex_bounds);
  for (const Census::VertexParts& vp : c.vertex) {
    out.u64(vp.p);
    out.u64s(vp.proxies);
    out.u64s(vp.proxy_edges_bound);
    // Without the exact pass (an empty graph) the bounds are all there is.
    out.u64s(c.vertex_exact ? vp.proxy_edges_upper : vp.proxy_edges_bound);
  }
  return std::move(out.bytes);
}

}  // namespace plan_internal

std::vector<unsigned char> encode_stored_census(const GraphSource& g, unsigned threads) {
  CensusOptions o = stored_census_options(g.n());
  o.threads = threads;
  o.wedges = true;
  return plan_internal::encode_census(take_census(g, o), o, g.n(), g.m());
}

bool census_from_store(const std::vector<unsigned char>& bytes, const GraphSource& g,
                       const CensusOptions& wanted, Census* out) {
  const auto t0 = std::chrono::steady_clock::now();
  In in(bytes, g.name());
  const std::uint64_t n = g.n();
  const eid_t* off = g.offsets();
  // 1. The frame and the options it was taken with.
  Census c;
  const Head head = read_head(in, g);
  const std::uint32_t fine = head.fine, H = head.hash_mod, G = head.groups, flags = head.flags;
  c.has_wedges = head.has_wedges;
  c.wedges = head.wedges;
  // (census_options never asks for more fine buckets than rows)
  if (fine == 0 || fine > std::max<std::uint64_t>(n, 1) || H == 0 || G == 0 || H > kMaxParts ||
      G > kMaxParts)
    in.fail("bad options (fine " + std::to_string(fine) + ", hash_mod " + std::to_string(H) +
            ", groups " + std::to_string(G) + ", flags " + std::to_string(flags) + ")");
  const std::uint64_t F1 = in.u64(), G1 = in.u64(), V = in.u64();
  if (F1 < 2 || F1 > (std::uint64_t{1} << 24) || G1 != std::uint64_t{G} + 1)
    in.fail("bad boundary counts (" + std::to_string(F1) + ", " + std::to_string(G1) + ")");
  // 2. The arrays, each size checked against the bytes left before it is allocated.
  c.fine_bounds = in.u64s(F1, "fine bounds");
  c.fine_hist = in.u64s((F1 - 1) * (F1 - 1), "fine histogram");
  c.hash_mod = H;
  c.hash_hist = in.u64s(std::uint64_t{H} * H, "hash histogram");
  c.vertex_bounds = in.u64s(G1, "vertex bounds");
  if (V > G) in.fail(std::to_string(V) + " vertex candidates for " + std::to_string(G) + " groups");
  std::vector<std::vector<std::uint64_t>> upper;
  for (std::uint64_t v = 0; v < V; ++v) {
    Census::VertexParts vp;
    const std::uint64_t p = in.u64();
    if (p == 0 || p > G || G % p) in.fail("vertex candidate p = " + std::to_string(p));
    vp.p = static_cast<std::uint32_t>(p);
    vp.proxies = in.u64s(p, "proxies");
    vp.proxy_edges_bound = in.u64s(p, "proxy edges");
    upper.push_back(in.u64s(p, "proxy edge bounds"));
    c.vertex.push_back(std::move(vp));
  }
  if (!in.done()) in.fail("trailing bytes");
  // 3. It belongs to this graph: the boundaries are the ones the offsets give, the histograms
  //    hold every edge, the candidates are the divisors of G in order.
  if (c.fine_bounds != plan_internal::fine_buckets(n, off, fine))
    in.fail("the fine boundaries do not match the row offsets");
  if (c.vertex_bounds != balanced_bounds(n, off, G, true))
    in.fail("the vertex boundaries do not match the row offsets");
  if (sum(c.fine_hist) != g.m() || sum(c.hash_hist) != g.m())
    in.fail("the histograms do not sum to m");
  std::vector<std::uint32_t> cand_p;
  for (std::uint32_t p = 1; p <= G; ++p)
    if (G % p == 0) cand_p.push_back(p);
  const bool has_vertex = flags & kFlagVertex;
  if (has_vertex && V != cand_p.size()) in.fail("the vertex candidates are incomplete");
  for (std::size_t ci = 0; ci < c.vertex.size(); ++ci) {
    const auto& vp = c.vertex[ci];
    if (vp.p != cand_p[ci]) in.fail("the vertex candidates are out of order");
    for (std::uint32_t a = 0; a < vp.p; ++a)
      if (vp.proxies[a] > n || vp.proxy_edges_bound[a] > upper[ci][a] || upper[ci][a] > g.m())
        in.fail("vertex candidate p = " + std::to_string(vp.p) + ": impossible proxy counts");
  }
  // 4. Taken with the boundaries `wanted` asks for?
  if (fine != wanted.fine || H != wanted.hash_mod || G != wanted.vertex_groups ||
      (wanted.vertex && !has_vertex))
    return false;
  // 5. What take_census would return: no vertex statistics unless asked for; the upper bounds
  //    where its exact pass would have been skipped.
  if (!wanted.vertex) {
    c.vertex.clear();
  } else if (G <= 16 && n > 0 &&
             plan_internal::vertex_may_fit(c, cand_p, G, off, wanted.device_budget)) {
    c.vertex_exact = true;
    for (std::size_t ci = 0; ci < c.vertex.size(); ++ci)
      c.vertex[ci].proxy_edges_upper = std::move(upper[ci]);
  } else {
    for (std::size_t ci = 0; ci < c.vertex.size(); ++ci)
      c.vertex[ci].proxy_edges_bound = std::move(upper[ci]);
  }
  c.stored = true;
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *out = std::move(c);
  return true;
}

Census obtain_census(const GraphSource& g, const CensusOptions& wanted) {
  // The payload's head first (its options, 24 bytes): the whole payload (megabytes) is read only
  // when it was taken with the boundaries `wanted` asks for.
  std::vector<unsigned char> bytes;
  if (g.stored_census(&bytes, 24) && bytes.size() == 24) {
    std::uint32_t head[6];
    std::memcpy(head, bytes.data(), sizeof head);
    const bool fits = head[0] == kMagic && readable_version(head[1]) && head[2] == wanted.fine &&
                      head[3] == wanted.hash_mod && head[4] == wanted.vertex_groups;
    if (fits && g.stored_census(&bytes)) {
      Census c;
      if (census_from_store(bytes, g, wanted, &c)) return c;
    }
  }
  return take_census(g, wanted);
}

bool stored_wedges(const GraphSource& g, WedgeSum* out) {
  std::vector<unsigned char> bytes;
  if (!g.stored_census(&bytes)) return false;  // (the whole payload: its checksum verified)
  In in(bytes, g.name());
  const Head head = read_head(in, g);
  if (!head.has_wedges) return false;
  *out = head.wedges;
  return true;
}

}  // namespace tristream
