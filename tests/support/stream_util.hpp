// stream_util.hpp — helpers for the streaming engine's module tests (tests/stream/): a naive
// block filter to compare built blocks against, a host-registrar fake that records calls, a
// source whose one chunk fails to read, and the undirected degrees counted the simple way.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plan_helpers.hpp"
#include "tristream/csr.hpp"
#include "tristream/error.hpp"
#include "tristream/host_registrar.hpp"
#include "tristream/packed_rows.hpp"
#include "tristream/plan.hpp"

namespace tristream::test {

// A block G_ab in dense CSR form.
struct DenseBlock {
  std::vector<eid_t> offsets{0};
  std::vector<vid_t> cols;
};
// G_ab by the definition: the rows of part a in order, their columns in part b as local ids
// (range: column - bounds[b]; hash: column / p; pair's suffix b = p + s: the columns in parts
// s..p-1, column - bounds[s]).
inline DenseBlock naive_block(const Csr& g, const Partition& P, std::uint32_t a, std::uint32_t b) {
  DenseBlock out;
  const bool suffix = P.scheme == Scheme::Pair && b >= P.p;
  const std::uint64_t lo = P.scheme == Scheme::Hash ? 0 : P.bounds[suffix ? b - P.p : b];
  const std::uint64_t hi = P.scheme == Scheme::Hash ? 0 : suffix ? g.rows() : P.bounds[b + 1];
  auto row = [&](std::uint64_t r) {
    for (eid_t e = g.offsets[r]; e < g.offsets[r + 1]; ++e) {
      const vid_t c = g.cols[e];
      if (P.scheme == Scheme::Hash) {
        if (c % P.p == b) out.cols.push_back(static_cast<vid_t>(c / P.p));
      } else if (c >= lo && c < hi) {
        out.cols.push_back(static_cast<vid_t>(c - lo));
      }
    }
    out.offsets.push_back(out.cols.size());
  };
  if (P.scheme == Scheme::Hash)
    for (std::uint64_t r = a; r < g.rows(); r += P.p) row(r);
  else
    for (std::uint64_t r = P.bounds[a]; r < P.bounds[a + 1]; ++r) row(r);
  return out;
}
// A block's dense offsets from its offsets region (dense, or the packed image of packed_rows).
inline std::vector<eid_t> dense_offsets(const void* region, bool packed, std::uint64_t packed_rows,
                                        std::uint64_t rows) {
  std::vector<eid_t> out(rows + 1, 0);
  if (packed)
    expand_packed(packed_image(region, packed_rows), rows, out.data());
  else
    out.assign(static_cast<const eid_t*>(region), static_cast<const eid_t*>(region) + rows + 1);
  return out;
}
// A partition of n vertices: range with p equal parts, or hash mod p.
inline Partition test_partition(Scheme s, std::uint32_t p, std::uint64_t n) {
  Partition P;
  P.scheme = s;
  P.p = p;
  P.n = n;
  if (s != Scheme::Hash)
    for (std::uint32_t x = 0; x <= p; ++x) P.bounds.push_back(n * x / p);
  return P;
}

// Records registrations (thread-safe); every registration succeeds.
class FakeRegistrar final : public HostRegistrar {
 public:
  bool register_host(void* p, std::uint64_t bytes) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++registrations_;
    bytes_ += bytes;
    live_.insert(p);
    return true;
  }
  void unregister_host(void* p) noexcept override {
    std::lock_guard<std::mutex> lk(mu_);
    ++unregistrations_;
    live_.erase(p);
  }
  std::uint64_t registrations() const {
    std::lock_guard<std::mutex> lk(mu_);
    return registrations_;
  }
  std::uint64_t unregistrations() const {
    std::lock_guard<std::mutex> lk(mu_);
    return unregistrations_;
  }
  std::size_t live() const {
    std::lock_guard<std::mutex> lk(mu_);
    return live_.size();
  }

 private:
  mutable std::mutex mu_;
  std::uint64_t registrations_ = 0, unregistrations_ = 0, bytes_ = 0;
  std::set<void*> live_;
};

// A source whose chunk `bad` cannot be read, as a damaged file's: read_chunk throws Error(Input)
// naming the chunk.
class FailingSource final : public ForwardingSource {
 public:
  FailingSource(const GraphSource& g, std::uint64_t bad) : ForwardingSource(g), bad_(bad) {}
  std::string name() const override { return "failing"; }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    if (k == bad_) throw Error(ErrorKind::Input, "chunk " + std::to_string(k) + ": damaged");
    g_.read_chunk(k, out);
  }

 private:
  std::uint64_t bad_;
};

// The undirected degrees of an oriented graph, counted edge by edge.
inline std::vector<eid_t> reference_degrees(const OrientedGraph& g) {
  std::vector<eid_t> d(g.n(), 0);
  for (std::uint64_t u = 0; u < g.n(); ++u)
    for (eid_t e = g.csr.offsets[u]; e < g.csr.offsets[u + 1]; ++e) {
      ++d[u];
      ++d[g.csr.cols[e]];
    }
  return d;
}

}  // namespace tristream::test
