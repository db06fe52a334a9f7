// sort_parts.hpp — converter internals shared by the sorts of sort.cpp and sort_rows.cpp: the
// in-bucket LSD radix over the varying bits, and the plan of a sort over spans (its slices, top
// digit and per-slice histograms, the keys oriented on the way) with its scatter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scatter.hpp"
#include "sort.hpp"
#include "util.hpp"

namespace tristream::conv::sort_parts {

// Below this many keys one std::sort does it.
constexpr std::size_t kSmallSort = std::size_t{1} << 16;

// Sorts data[0..k) by its low `bits` bits (the higher bits are equal): LSD radix whose digits
// of 8 to 12 bits cover only the bit positions that differ between the keys; more than 2^16 keys
// of 3 digits or more are split by their top bits first (unless !may_split). Returns where the
// sorted keys are: data, or scratch after an odd number of passes. T: std::uint32_t or
// std::uint64_t.
template <typename T>
T* radix_sort_low_bits(T* data, std::size_t k, int bits, std::vector<T>& scratch,
                       bool may_split = true);

// Steps 1 and 2 of the sorts: slices of the spans for the histogram and scatter passes (one
// per thread), the top digit, the histograms per slice (orienting the keys on the way) and where
// each slice's keys of each bucket go (cursor, from bucket_start).
struct Plan {
  std::vector<std::size_t> first;  // slice s: spans [first[s], first[s + 1])
  std::size_t slices = 0, B = 0;
  int shift = 0;
  std::vector<std::size_t> cursor;  // slice s, bucket b: cursor[s * B + b]
  std::vector<std::size_t> bucket_start;
};

// The plan of sorting the n keys of in on t threads (in.orient: the keys oriented in place).
Plan make_plan(const SpanSortInput& in, std::size_t n, unsigned t);

// With in.drop_read, returns to the OS the 2 MiB pieces of the buffer that lie wholly between
// slice s's first span and the end of its span i (every key there scattered by this worker);
// *done: where the pieces dropped so far end.
void drop_scattered(const SpanSortInput& in, const Plan& p, std::size_t s, std::size_t i,
                    std::uintptr_t* done);

// fn(s) for every slice of p, on t threads.
template <typename Fn>
void each_slice(const Plan& p, unsigned t, Fn&& fn) {
  parallel_for(t, p.slices, 1, [&](std::size_t lo, std::size_t hi, unsigned) {
    for (std::size_t s = lo; s < hi; ++s) fn(s);
  });
}

// Step 3 of the sorts: every key x of in.spans scattered by its top digit (x >> p.shift) into out,
// as value(x), slice by slice on t threads (each slice fills its places of every bucket from the
// plan's cursors; out is filled in small pages, so that its pages touched stay near the keys
// written); each span released (in.release) and, with in.drop_read, its pages dropped once
// scattered. out is resized to the n keys.
template <typename T, typename Value>
void scatter_spans(const SpanSortInput& in, const Plan& p, unsigned t, std::size_t n,
                   BigBuffer<T>& out, Value value) {
  small_pages(out.data(), out.capacity() * sizeof(T));
  drop_pages(out.data(), out.capacity() * sizeof(T));
  out.resize(n);
  std::vector<std::size_t> cursor = p.cursor;
  const int shift = p.shift;
  each_slice(p, t, [&](std::size_t s) {
    LineScatter<T> o(out.data(), cursor.data() + s * p.B, p.B);
    std::uintptr_t dropped = 0;
    for (std::size_t i = p.first[s]; i < p.first[s + 1]; ++i) {
      const std::uint64_t* k = in.spans[i].data;
      for (std::size_t j = 0; j < in.spans[i].count; ++j) o.put(k[j] >> shift, value(k[j]));
      if (in.release) in.release(i);
      drop_scattered(in, p, s, i, &dropped);
    }
    o.finish();
  });
}

}  // namespace tristream::conv::sort_parts
