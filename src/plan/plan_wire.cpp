// plan/plan_wire.cpp — a Plan as bytes and back (plan/plan_wire.hpp).
#include "plan/plan_wire.hpp"

#include <cstring>
#include <type_traits>

#include "tristream/error.hpp"

namespace tristream {

static_assert(std::is_trivially_copyable_v<WorkUnit>, "work units travel as their bytes");
static_assert(std::is_trivially_copyable_v<PlanRates>, "plan rates travel as their bytes");
#if defined(__GLIBCXX__) && defined(__x86_64__)
// A field added to Plan must be written and read below as well.
static_assert(sizeof(Plan) == 344, "plan_wire.cpp: serialize the Plan's new field");
#endif

namespace {

class Writer {
 public:
  template <class T>
  Writer& pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    s_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  template <class T>
  Writer& vec(const std::vector<T>& v) {
    pod(std::uint64_t{v.size()});
    s_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    return *this;
  }
  Writer& str(const std::string& v) {
    pod(std::uint64_t{v.size()});
    s_.append(v);
    return *this;
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  template <class T>
  Reader& pod(T& v) {
    need(sizeof v);
    std::memcpy(&v, s_.data() + at_, sizeof v);
    at_ += sizeof v;
    return *this;
  }
  template <class T>
  Reader& vec(std::vector<T>& v) {
    std::uint64_t n = 0;
    pod(n);
    if (n > (s_.size() - at_) / sizeof(T)) bad();
    v.resize(n);
    if (n) std::memcpy(v.data(), s_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return *this;
  }
  Reader& str(std::string& v) {
    std::uint64_t n = 0;
    pod(n);
    need(n);
    v.assign(s_.data() + at_, n);
    at_ += n;
    return *this;
  }
  bool at_end() const { return at_ == s_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > s_.size() - at_) bad();
  }
  [[noreturn]] static void bad() { throw Error(ErrorKind::Internal, "a damaged plan message"); }
  const std::string& s_;
  std::size_t at_ = 0;
};

// Every field of the plan, in one order for both directions.
template <class IO, class P>
void fields(IO& io, P& p) {
  io.pod(p.partition.scheme).pod(p.partition.p).pod(p.partition.n).vec(p.partition.bounds);
  io.vec(p.units).pod(p.slots).pod(p.in_flight).pod(p.column_order).pod(p.tail_cover_units);
  io.pod(p.tail_cover_slices).pod(p.rates).pod(p.slot_bytes).pod(p.per_vertex_rows);
  io.pod(p.device_bytes).pod(p.host_bytes).pod(p.piece_bytes).pod(p.staging_buffers);
  io.pod(p.bytes_moved).pod(p.device_cache_bytes).pod(p.device_cache_room).pod(p.pair_group);
  io.pod(p.bytes_decompressed);
  io.pod(p.device_budget).pod(p.host_budget).pod(p.window_chunks).pod(p.chunk_cache_bytes);
  io.pod(p.block_cache_bytes).pod(p.row_part_max_bytes).pod(p.row_parts_bytes);
  io.vec(p.row_part_bytes).pod(p.row_part_chunk_bytes).pod(p.total_work).pod(p.imbalance);
  io.str(p.reason);
}

}  // namespace

std::string plan_to_bytes(const Plan& plan) {
  Writer w;
  fields(w, plan);
  return w.take();
}

Plan plan_from_bytes(const std::string& bytes) {
  Plan p;
  Reader r(bytes);
  fields(r, p);
  if (!r.at_end()) throw Error(ErrorKind::Internal, "a damaged plan message");
  return p;
}

}  // namespace tristream
