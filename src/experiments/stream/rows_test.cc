// SPDX-License-Identifier: MIT
#include "experiments/stream/rows.h"
#include "experiments/stream/stream.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "row_figures.h"

namespace writelab {
namespace {

using test_support::FigureMedian;

// A trial that wrote `bytes` in write_s + sync_s seconds, with two samples.
TrialResult Trial(uint64_t bytes, double write_s, double sync_s) {
  TrialResult t;
  t.bytes = bytes;
  t.write_s = write_s;
  t.sync_s = sync_s;
  t.counters.calls = bytes / (8u << 20);
  t.write_latency.Record(1'000'000);
  SamplePoint a, b;
  a.dirty = 100;
  b.dirty = 300;
  b.writeback = 50;
  t.samples = {a, b};
  t.gib_mb_s = {500, 400};
  return t;
}

TEST(StreamRows, TrialsBecomeMediansWithTheirSpread) {
  StreamSpec spec;
  StreamAccumulator acc;
  AddStreamTrial(spec, 0, Trial(1'000'000'000, 1.5, 0.5), acc);  // 500 MB/s
  AddStreamTrial(spec, 1, Trial(1'000'000'000, 0.5, 0.5), acc);  // 1000 MB/s
  AddStreamTrial(spec, 2, Trial(1'000'000'000, 3.0, 1.0), acc);  // 250 MB/s
  Row row = StreamRow(StreamStrategyName(StreamStrategy::kWindow), acc);
  EXPECT_EQ(row.name, "window");
  EXPECT_EQ(row.status, RowStatus::kOk);
  const Figure* mb = row.FindFigure("mb_s");
  ASSERT_NE(mb, nullptr);
  EXPECT_EQ(mb->value.n, 3);
  EXPECT_DOUBLE_EQ(mb->value.median, 500);
  EXPECT_DOUBLE_EQ(mb->value.min, 250);
  EXPECT_DOUBLE_EQ(mb->value.max, 1000);
  EXPECT_EQ(mb->unit, "MB/s");
  EXPECT_FALSE(mb->includes.empty());
  EXPECT_DOUBLE_EQ(FigureMedian(row, "write_mb_s"), 1e9 / 1.5 / 1e6);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "dirty_peak"), 300);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "writeback_peak"), 50);
  EXPECT_EQ(row.FindFigure("cached_end"), nullptr);  // never measured
  EXPECT_EQ(row.FindFigure("probe_p99_ms"), nullptr);
  const Latency* write = row.FindLatency("write");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->count, 3u);  // one call per trial, merged
  EXPECT_EQ(row.FindLatency("probe"), nullptr);
  ASSERT_EQ(row.series.size(), 6u);  // timeline and per_gib per trial
  EXPECT_EQ(row.series[1].key, "per_gib");
  EXPECT_EQ(row.series[5].trial, 2);
  ASSERT_EQ(row.series[1].points.size(), 2u);
  EXPECT_EQ(row.series[1].points[1], (std::vector<double>{2, 400}));
}

TEST(StreamRows, FiguresFollowTheTableOrder) {
  StreamSpec spec;
  StreamAccumulator acc;
  AddStreamTrial(spec, 0, Trial(1 << 30, 1, 1), acc);
  Row row = StreamRow(StreamStrategyName(StreamStrategy::kPlain), acc);
  ASSERT_GE(row.figures.size(), 2u);
  EXPECT_EQ(row.figures[0].key, "mb_s");
  EXPECT_EQ(row.figures[1].key, "write_mb_s");
}

TEST(StreamRows, TheLibraryHasNoRunnerCountersAndNamesItsChoice) {
  StreamSpec spec;
  StreamAccumulator acc;
  TrialResult t = Trial(1 << 30, 1, 1);
  t.library = true;
  t.library_choice = "dontcache";
  AddStreamTrial(spec, 0, t, acc);
  Row row = StreamRow(StreamStrategyName(StreamStrategy::kLibrary), acc);
  EXPECT_EQ(row.FindFigure("short_writes"), nullptr);
  EXPECT_EQ(row.FindFigure("eintr_retries"), nullptr);
  ASSERT_EQ(row.notes.size(), 1u);
  EXPECT_EQ(row.notes[0], "round 1: library picked dontcache");
}

TEST(StreamRows, AnUnsupportedTrialMakesAnUnsupportedRowWithTheErrno) {
  StreamSpec spec;
  StreamAccumulator acc;
  TrialResult t;
  t.outcome.Fail(EOPNOTSUPP, "pwritev2 RWF_DONTCACHE", Feature::kRwfDontcache);
  AddStreamTrial(spec, 0, t, acc);
  Row row = StreamRow(StreamStrategyName(StreamStrategy::kDontcache), acc);
  EXPECT_EQ(row.status, RowStatus::kUnsupported);
  EXPECT_EQ(row.error_code, EOPNOTSUPP);
  EXPECT_NE(row.message.find("pwritev2 RWF_DONTCACHE"), std::string::npos);
  EXPECT_TRUE(row.figures.empty());
  EXPECT_TRUE(row.latencies.empty());
}

TEST(StreamRows, AProbeAddsItsPercentilesAndItsFailureANote) {
  StreamSpec spec;
  StreamAccumulator acc;
  TrialResult t = Trial(1 << 30, 1, 1);
  t.probed = true;
  t.probe_latency.Record(2'000'000);
  t.probe_error = EIO;
  AddStreamTrial(spec, 0, t, acc);
  Row row = StreamRow(StreamStrategyName(StreamStrategy::kPlain), acc);
  EXPECT_NEAR(FigureMedian(row, "probe_max_ms"), 2, 0.1);
  EXPECT_NE(row.FindLatency("probe"), nullptr);
  ASSERT_EQ(row.notes.size(), 1u);
  EXPECT_EQ(row.notes[0].rfind("probe: a write or fdatasync failed", 0), 0u);
}

TEST(StreamAutoSize, PastTheThresholdInWholeBlocksWithinAQuarterOfTheFreeSpace) {
  constexpr uint64_t kBlock = 8u << 20, kGiB = uint64_t{1} << 30;
  // 2.5 x 2.3 GiB, rounded up to whole 8 MiB blocks, with room to spare.
  const uint64_t threshold = 2'469'606'195;
  const uint64_t size = AutoStreamSize(threshold, 100 * kGiB, kBlock);
  EXPECT_EQ(size % kBlock, 0u);
  EXPECT_GE(size, threshold * 5 / 2);
  EXPECT_LT(size, threshold * 5 / 2 + kBlock);
  // A quarter of the free space bounds it, and 30 GB.
  EXPECT_EQ(AutoStreamSize(threshold, 4 * kGiB, kBlock), kGiB);
  EXPECT_EQ(AutoStreamSize(40 * kGiB, 1000 * kGiB, kBlock), kAutoStreamLimit / kBlock * kBlock);
  // The threshold unknown: 1 GiB; no room at all: one block.
  EXPECT_EQ(AutoStreamSize(0, 100 * kGiB, kBlock), kGiB);
  EXPECT_EQ(AutoStreamSize(threshold, 0, kBlock), kBlock);
}

}  // namespace
}  // namespace writelab
