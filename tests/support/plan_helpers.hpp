// plan_helpers.hpp — small shared helpers of the planner's tests (tests/plan/): a seeded edge
// list oriented, plan options with two census threads, and a source forwarding to another.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tristream/csr.hpp"
#include "tristream/plan.hpp"

namespace tristream::test {

inline OrientedGraph oriented(const EdgeList& e) {
  return orient_edge_list(vertex_count(e), e);
}

inline PlanOptions opts(Scheme s, std::uint32_t p, std::uint64_t device = 0,
                        std::uint64_t host = 0) {
  PlanOptions o;
  o.scheme = s;
  o.parts = p;
  o.device_budget = device;
  o.host_budget = host;
  o.threads = 2;
  return o;
}

// A source that is g (which outlives it) in every respect; tests override what they change.
class ForwardingSource : public GraphSource {
 public:
  explicit ForwardingSource(const GraphSource& g) : g_(g) {}
  std::string name() const override { return g_.name(); }
  std::uint64_t n() const override { return g_.n(); }
  eid_t m() const override { return g_.m(); }
  const eid_t* offsets() const override { return g_.offsets(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return g_.chunks(); }
  void read_chunk(std::uint64_t k, vid_t* out) const override { g_.read_chunk(k, out); }
  const vid_t* resident_chunk(std::uint64_t k) const override { return g_.resident_chunk(k); }
  std::uint64_t compressed_bytes() const override { return g_.compressed_bytes(); }
  bool stored_census(std::vector<unsigned char>* out, std::size_t limit) const override {
    return g_.stored_census(out, limit);
  }

 protected:
  const GraphSource& g_;
};

// A source whose every `every`-th chunk (k % every == 0) lies decoded in memory (as the in-core
// image's do once decoded: GraphSource::resident_chunk), pointing into `cols` (the graph's
// columns); counts the read_chunk calls that copy a resident chunk (readers should make none).
class ResidentSource : public ForwardingSource {
 public:
  ResidentSource(const GraphSource& g, const std::vector<vid_t>& cols, std::uint64_t every)
      : ForwardingSource(g), cols_(cols), every_(every) {}
  const vid_t* resident_chunk(std::uint64_t k) const override {
    return k % every_ == 0 ? cols_.data() + g_.chunks().at(k).first_edge : nullptr;
  }
  void read_chunk(std::uint64_t k, vid_t* out) const override {
    if (resident_chunk(k)) resident_copies_.fetch_add(1);
    g_.read_chunk(k, out);
  }
  std::uint64_t resident_copies() const { return resident_copies_.load(); }

 private:
  const std::vector<vid_t>& cols_;
  std::uint64_t every_;
  mutable std::atomic<std::uint64_t> resident_copies_{0};
};

}  // namespace tristream::test
