// backends/cpu_counter.cpp — the CPU Counter: exact, multithreaded count(A, B, C) on the one
// thread pool (common/thread_pool.hpp).
//
// Contract (see include/tristream/csr.hpp): rows of A, B, C sorted ascending without duplicates;
// A.rows == B.rows; every column of A indexes a row of C; B's and C's columns share one id space
// of size C.col_space (or B.col_space). Each triangle is found exactly once, at the A edge u -> v,
// as w in B(u) ∩ C(v); per-vertex counts add 1 to u, v and w for each.
//
// Work assignment: rows of A are handed out in small batches through an atomic counter (dynamic
// scheduling copes with skewed degrees). Each row polls the SIGINT/SIGTERM flag: on a signal the
// workers abandon the unit and count() throws Error(Interrupted) (common/interrupt.hpp).
// Intersection, chosen per pair by list lengths:
//   - marked:  when u has several out-edges and B(u) is not tiny, B(u) is marked once in a
//              thread-local bitmap over the column space; each C(v) is then probed in O(|C(v)|);
//   - search:  when C(v) is much longer than B(u), each element of B(u) is located in C(v) by
//              galloping search, O(|B(u)| log |C(v)|);
//   - merge:   otherwise a branch-light linear merge, O(|B(u)| + |C(v)|).
#include <algorithm>
#include <atomic>
#include <vector>

#include "common/interrupt.hpp"
#include "common/thread_pool.hpp"
#include "common/thread_priority.hpp"
#include "tristream/counter.hpp"
#include "tristream/error.hpp"

namespace tristream {
namespace {

inline void add_relaxed(count_t* p, count_t v) {
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

// Galloping lower bound of x in [lo, hi).
inline const vid_t* gallop(const vid_t* lo, const vid_t* hi, vid_t x) {
  std::size_t step = 1;
  const vid_t* p = lo;
  while (p + step < hi && p[step] < x) {
    p += step;
    step <<= 1;
  }
  return std::lower_bound(p, std::min(p + step + 1, hi), x);
}

struct Worker {
  const CsrView& A;
  const CsrView& B;
  const CsrView& C;
  const PerVertexOut& pv;
  std::vector<std::uint64_t> bits;  // bitmap over the column space of B/C

  template <bool kPerVertex>
  count_t row(std::uint64_t u) {
    const vid_t* bu = B.begin(u);
    const vid_t* be = B.end(u);
    const std::size_t lb = static_cast<std::size_t>(be - bu);
    const eid_t deg_a = A.degree(u);
    if (lb == 0 || deg_a == 0) return 0;
    count_t total = 0;
    const bool use_bitmap = !bits.empty() && deg_a >= 4 && lb >= 32;
    if (use_bitmap)
      for (const vid_t* p = bu; p != be; ++p) bits[*p >> 6] |= 1ull << (*p & 63);
    for (const vid_t* a = A.begin(u); a != A.end(u); ++a) {
      const vid_t v = *a;
      const vid_t* cv = C.begin(v);
      const vid_t* ce = C.end(v);
      const std::size_t lc = static_cast<std::size_t>(ce - cv);
      if (lc == 0) continue;
      count_t found = 0;
      if (lc > 32 * lb) {
        // search: B(u) is short, C(v) long.
        const vid_t* q = cv;
        for (const vid_t* p = bu; p != be && q != ce; ++p) {
          q = gallop(q, ce, *p);
          if (q != ce && *q == *p) {
            ++found;
            if (kPerVertex) add_relaxed(&pv.w_counts[*p], 1);
            ++q;
          }
        }
      } else if (use_bitmap) {
        for (const vid_t* q = cv; q != ce; ++q) {
          if (bits[*q >> 6] >> (*q & 63) & 1) {
            ++found;
            if (kPerVertex) add_relaxed(&pv.w_counts[*q], 1);
          }
        }
      } else {
        const vid_t* p = bu;
        const vid_t* q = cv;
        while (p != be && q != ce) {
          const vid_t x = *p, y = *q;
          if (x == y) {
            ++found;
            if (kPerVertex) add_relaxed(&pv.w_counts[x], 1);
          }
          p += (x <= y);
          q += (y <= x);
        }
      }
      if (kPerVertex && found) add_relaxed(&pv.v_counts[v], found);
      total += found;
    }
    if (use_bitmap)
      for (const vid_t* p = bu; p != be; ++p) bits[*p >> 6] = 0;
    if (kPerVertex && total) add_relaxed(&pv.u_counts[u], total);
    return total;
  }
};

class CpuCounter final : public Counter {
 public:
  explicit CpuCounter(const CounterOptions& options)
      : threads_(resolve_threads(options.threads)),
        pool_(threads_, ThreadStart::below_caller(options.nice, options.idle_class)) {}

  std::string backend() const override { return "cpu"; }
  std::string describe() const override {
    return "cpu (" + std::to_string(threads_) + " thread" + (threads_ == 1 ? "" : "s") + ")";
  }

  count_t count(const CsrView& A, const CsrView& B, const CsrView& C,
                const PerVertexOut& pv) override {
    // 1. Check the preconditions that are cheap to check.
    TS_CHECK(A.rows == B.rows, "count(A, B, C): A and B must have the same rows");
    if (A.rows == 0 || A.edges() == 0 || B.edges() == 0 || C.edges() == 0) return 0;
    const std::uint64_t col_space = std::max(B.col_space, C.col_space);
    TS_CHECK(!pv.wanted() || (pv.v_counts && pv.w_counts),
             "per-vertex output needs all three arrays");

    // 2. Threads, and whether each may hold a bitmap over the column space (bounded memory).
    const unsigned nthreads = static_cast<unsigned>(
        std::min<std::uint64_t>(threads_, std::max<std::uint64_t>(1, A.rows / 64)));
    const bool want_bitmap = col_space > 0 && (col_space / 8) * nthreads <= (1ull << 31);

    // 3. Run the workers over batches of rows of A.
    std::atomic<std::uint64_t> next{0};
    std::vector<count_t> partial(nthreads, 0);
    const std::uint64_t batch = 64;
    auto work = [&](std::size_t t) {
      Worker w{A, B, C, pv, {}};
      if (want_bitmap) w.bits.assign((col_space + 63) / 64, 0);
      count_t local = 0;
      for (;;) {
        const std::uint64_t first = next.fetch_add(batch, std::memory_order_relaxed);
        if (first >= A.rows) break;
        const std::uint64_t last = std::min(A.rows, first + batch);
        for (std::uint64_t u = first; u < last; ++u) {
          if (interrupt_requested()) {  // one relaxed load a row: milliseconds between polls
            next.store(A.rows, std::memory_order_relaxed);
            break;
          }
          local += pv.wanted() ? w.row<true>(u) : w.row<false>(u);
        }
      }
      partial[t] = local;
    };
    pool_.run(nthreads, work);
    throw_if_interrupted();  // the unit was abandoned (or finished as the signal came)

    // 4. Reduce.
    count_t total = 0;
    for (auto c : partial) total += c;
    return total;
  }

 private:
  unsigned threads_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Counter> make_cpu_counter(const CounterOptions& options) {
  return std::make_unique<CpuCounter>(options);
}

}  // namespace tristream
