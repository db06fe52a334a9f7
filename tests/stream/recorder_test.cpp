// recorder_test.cpp — the run's spans (stream/recorder.hpp): the chunks' read and decompress spans
// are kept only when asked for (a trace), their totals and each unit's decompression seconds
// always; the units' spans always; a pipeline run without a trace holds no chunk span and the
// same totals as one with.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_backend.hpp"
#include "stream/recorder.hpp"

namespace tristream::stream_test {
namespace {

std::size_t spans_of(const PipelineStats& st, const std::string& stage) {
  return static_cast<std::size_t>(std::count_if(
      st.spans.begin(), st.spans.end(), [&](const TraceSpan& s) { return s.stage == stage; }));
}

TEST(Recorder, ChunkSpansKeptOnlyWhenAskedForTotalsAlways) {
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "kept" : "totals only");
    PipelineStats st;
    stream::Recorder rec(10.0, st, keep);
    rec.span("read", 3, 11.0, 11.0, 50);
    rec.span("decompress", 3, 11.0, 12.5, 100);
    rec.span("decompress", 4, 12.0, 12.25, 30);
    rec.span("decompress", -1, 12.0, 13.0, 70);  // the preload's
    rec.span("kernel", 3, 13.0, 14.0, 10);
    EXPECT_EQ(spans_of(st, "kernel"), 1u);
    EXPECT_EQ(spans_of(st, "decompress"), keep ? 3u : 0u);
    EXPECT_EQ(spans_of(st, "read"), keep ? 1u : 0u);
    EXPECT_DOUBLE_EQ(st.decompress.busy_s, 2.75);
    EXPECT_EQ(st.decompress.bytes, 200u);
    EXPECT_EQ(st.decompress.spans, 3u);
    EXPECT_EQ(st.read.bytes, 50u);
    // each unit's decompression seconds, once
    std::size_t seen = 0;
    EXPECT_DOUBLE_EQ(rec.since(&seen, "decompress", 3), 1.5);
    EXPECT_DOUBLE_EQ(rec.since(&seen, "decompress", 3), 0.0);
    EXPECT_DOUBLE_EQ(rec.since(&seen, "decompress", 4), keep ? 0.0 : 0.25)
        << "kept spans are seen once from the index, whatever the unit";
  }
}

TEST(Recorder, APipelineRunWithoutATraceHoldsNoChunkSpans) {
  const auto [n, new_of_old, g, oracle, oracle_pv] = oracled(test::skewed_graph(1500, 15000, 37));
  auto src = memory_source(g, 97);
  PipelineStats with, without;
  for (bool keep : {false, true}) {
    FakeBackend dd;
    PipelineOptions o = popts(Scheme::Range, 4, false);
    o.chunk_spans = keep;
    const CountReport r = count_with_backend(*src, o, dd);
    EXPECT_EQ(r.triangles, oracle);
    (keep ? with : without) = r.stats;
  }
  EXPECT_EQ(spans_of(without, "decompress"), 0u);
  EXPECT_GT(spans_of(with, "decompress"), 0u);
  EXPECT_EQ(without.decompress.bytes, with.decompress.bytes);
  EXPECT_EQ(without.decompress.spans, with.decompress.spans);
  EXPECT_EQ(spans_of(without, "kernel"), spans_of(with, "kernel"));
}

}  // namespace
}  // namespace tristream::stream_test
