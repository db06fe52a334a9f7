// merge.hpp — converter internals: k-way merging of sorted streams with repeats removed, and the
// split of one merge of in-memory spans into independent merges over key ranges (so that the
// parts run in parallel and their outputs, laid end to end, equal the single merge's output).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tristream::conv {

// An in-memory sorted span as a stream.
template <typename T>
struct SpanReader {
  const T* p;
  const T* end;
  bool valid() const { return p < end; }
  const T& head() const { return *p; }
  void advance() { ++p; }
};

// Merges sorted streams (valid/head/advance), calling out(value) once per distinct value, in
// order. A binary heap of the stream heads; the smallest is replaced in place by its stream's
// next value (one sift-down per value).
template <typename T, typename Stream, typename Out>
void merge_unique(std::vector<Stream*>& streams, Out&& out) {
  struct Item {
    T value;
    Stream* stream;
  };
  std::vector<Item> heap;
  for (Stream* s : streams)
    if (s->valid()) heap.push_back({s->head(), s});
  auto sift_down = [&](std::size_t i) {
    const std::size_t k = heap.size();
    const Item x = heap[i];
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= k) break;
      if (c + 1 < k && heap[c + 1].value < heap[c].value) ++c;
      if (!(heap[c].value < x.value)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = x;
  };
  for (std::size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  bool have = false;
  T last{};
  while (!heap.empty()) {
    Item& top = heap[0];
    if (!have || !(top.value == last)) {
      out(top.value);
      last = top.value;
      have = true;
    }
    top.stream->advance();
    if (top.stream->valid()) {
      top.value = top.stream->head();
    } else {
      top = heap.back();
      heap.pop_back();
      if (heap.empty()) break;
    }
    sift_down(0);
  }
}

// The merge of sorted spans split into independent merges over key ranges (splitters taken from
// the longest span); equal keys always land in the same part. first[p] is the number of input
// records before part p (where its output may start in a buffer of the input size).
template <typename T>
struct MergePlan {
  std::vector<std::vector<SpanReader<T>>> parts;
  std::vector<std::uint64_t> first;
};

// At most `parts` parts; one when the longest span is shorter than 64 records per part.
template <typename T>
MergePlan<T> plan_merge(const std::vector<SpanReader<T>>& spans, std::size_t parts) {
  MergePlan<T> plan;
  const SpanReader<T>* longest = nullptr;
  for (const auto& s : spans)
    if (!longest || s.end - s.p > longest->end - longest->p) longest = &s;
  const std::size_t len = longest ? static_cast<std::size_t>(longest->end - longest->p) : 0;
  if (len < parts * 64) parts = 1;
  std::vector<T> split;  // split[p] = first key of part p (p >= 1)
  for (std::size_t p = 1; p < parts; ++p) split.push_back(longest->p[len * p / parts]);
  plan.parts.resize(parts);
  plan.first.assign(parts + 1, 0);
  for (const auto& s : spans) {
    const T* lo = s.p;
    for (std::size_t p = 0; p < parts; ++p) {
      const T* hi = p + 1 < parts ? std::lower_bound(lo, s.end, split[p]) : s.end;
      if (hi > lo) plan.parts[p].push_back({lo, hi});
      plan.first[p + 1] += static_cast<std::uint64_t>(hi - lo);
      lo = hi;
    }
  }
  for (std::size_t p = 0; p < parts; ++p) plan.first[p + 1] += plan.first[p];
  return plan;
}

}  // namespace tristream::conv
