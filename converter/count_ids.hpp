// count_ids.hpp — converter internals: counting the ids in the low 32 bits of many keys without
// atomics or random writes to a large array. The ids are first partitioned by their top bits
// (a radix scatter of 4 bytes per key through write-combining buffers, a bounded wave of keys at
// a time), then each partition, whose counters fit a core's cache, is counted by one worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sort.hpp"

namespace tristream::conv {

// counts[k & 0xffffffff] grows by one for every key k of spans. Preconditions: every such id is
// below space. Takes a buffer of 4 bytes per key for at most 2^26 keys at a time (256 MiB), or an
// eighth of the keys when fewer, at least 2^20.
void count_low_ids(const std::vector<KeySpan>& spans, std::uint32_t* counts, std::size_t space,
                   unsigned threads);

}  // namespace tristream::conv
