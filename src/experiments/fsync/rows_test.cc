// SPDX-License-Identifier: MIT
#include "experiments/fsync/rows.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "port/linux_compat.h"

#include "row_figures.h"

namespace writelab {
namespace {

using test_support::FigureMedian;

constexpr SyncMethodInfo kFsync{SyncMethod::kFsync, "fsync", "pwrite, then fsync", 0, 0, true};
constexpr SyncMethodInfo kOsync{SyncMethod::kOsync, "osync", "O_SYNC", O_SYNC, 0, false};
constexpr SyncMethodInfo kRwfDsync{
    SyncMethod::kRwfDsync, "rwf-dsync", "RWF_DSYNC", 0, RWF_DSYNC, false};

// Ten iterations: 1 ms writes and syncs of 10 ms, one of them 900 ms.
SyncRun TenIterations() {
  SyncRun run;
  for (int i = 0; i < 10; ++i) {
    const uint64_t sync = i == 7 ? 900'000'000 : 10'000'000;
    run.write_latency.Record(1'000'000);
    run.sync_latency.Record(sync);
    run.total_latency.Record(1'000'000 + sync);
    run.samples.push_back({i * 1.0, 0.001, static_cast<double>(sync) / 1e9});
  }
  return run;
}

SamplePoint Point(double t, uint64_t dirty, uint64_t dev_bytes) {
  SamplePoint p;
  p.t_s = t;
  p.dirty = dirty;
  p.have_device = true;
  p.dev_write_bytes = dev_bytes;
  return p;
}

TEST(FsyncRows, TelemetryIsTakenBetweenTheRowsStartAndEnd) {
  std::vector<SamplePoint> all = {Point(0, 900, 0), Point(1, 100, 1000), Point(2, 300, 5000),
                                  Point(3, 200, 9000), Point(4, 999, 20000)};
  FsyncRowContext rc;
  FillTelemetry(all, 1, 3, rc);
  EXPECT_EQ(rc.points.size(), 3u);
  EXPECT_EQ(rc.dirty_peak, 300u);  // 900 and 999 lie outside the row
  EXPECT_TRUE(rc.device);
  EXPECT_EQ(rc.device_bytes, 8000u);
}

TEST(FsyncRows, ARunBecomesPercentilesThroughputsAndSeries) {
  FsyncRowContext rc{"stream", 10, 2'000'000'000, true, 500'000'000, 1 << 30, 1 << 20, {}, ""};
  rc.points = {Point(0, 0, 0), Point(5, 0, 1)};
  Row row = FsyncRow(kFsync, TenIterations(), rc, 0.5);
  EXPECT_EQ(row.name, "stream/fsync");
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_NEAR(FigureMedian(row, "sync_p50_ms"), 10, 0.5);
  EXPECT_NEAR(FigureMedian(row, "sync_max_ms"), 900, 1);
  EXPECT_NEAR(FigureMedian(row, "sync_p90_ms"), 10, 0.5);
  // 10 iterations support a p90 but not a p99: it would only be the maximum.
  EXPECT_EQ(row.FindFigure("write_p99_ms"), nullptr);
  EXPECT_EQ(row.FindFigure("sync_p99_ms"), nullptr);
  EXPECT_NE(row.FindFigure("write_max_ms"), nullptr);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "bg_mb_s"), 200);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "device_mb_s"), 50);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "dirty_peak"), 1 << 30);
  ASSERT_EQ(row.latencies.size(), 3u);
  EXPECT_EQ(row.latencies[1].label, "fsync");
  EXPECT_EQ(row.latencies[1].count, 10u);
  ASSERT_EQ(row.series.size(), 2u);
  EXPECT_EQ(row.series[0].key, "iterations");
  ASSERT_EQ(row.series[0].points.size(), 10u);
  EXPECT_DOUBLE_EQ(row.series[0].points[7][2], 0.9);
  EXPECT_TRUE(row.notes.empty());
}

// Issue 34: a stream that rewrote cached pages (2 GB written, 10 MB on the
// device) said nothing; now its row says the syncs met no writeback of it.
TEST(FsyncRows, ABackgroundThatNeverReachedTheDeviceIsFlagged) {
  FsyncRowContext rc{"stream", 10, 2'000'000'000, true, 10'000'000, 1 << 30, 0, {}, ""};
  Row row = FsyncRow(kFsync, TenIterations(), rc, 0.5);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "bg_device_pct"), 0.5);
  ASSERT_EQ(row.notes.size(), 1u);
  EXPECT_NE(row.notes[0].find("stayed in the page cache"), std::string::npos) << row.notes[0];
  rc.device_bytes = 1'500'000'000;
  EXPECT_TRUE(FsyncRow(kFsync, TenIterations(), rc, 0.5).notes.empty()) << "75% reached it";
}

TEST(FsyncRows, WithoutABackgroundByteCountOrADeviceThoseFiguresAreAbsent) {
  FsyncRowContext rc;
  rc.bg_name = "none";
  rc.seconds = 10;
  SyncRun run = TenIterations();
  run.sync_latency = Histogram();  // the write is the sync
  run.total_latency = Histogram();
  Row row = FsyncRow(kOsync, run, rc, 0.5);
  EXPECT_EQ(row.FindFigure("bg_mb_s"), nullptr);
  EXPECT_EQ(row.FindFigure("device_mb_s"), nullptr);
  EXPECT_EQ(row.FindFigure("sync_p50_ms"), nullptr);
  EXPECT_EQ(row.latencies.size(), 1u);
  EXPECT_EQ(row.notes, std::vector<std::string>{"the write is the sync: no separate sync figures"});
}

TEST(FsyncRows, ABackgroundFailureFailsTheRowWhateverItMeasured) {
  FsyncRowContext rc;
  rc.bg_name = "random";
  rc.bg_failure = "background random: pwrite: No space left on device";
  Row row = FsyncRow(kFsync, TenIterations(), rc, 0.5);
  EXPECT_EQ(row.status, RowStatus::kFailed);
  EXPECT_EQ(row.message, rc.bg_failure);
}

TEST(FsyncRows, AnUnsupportedMethodWithoutWritesHasNoFigures) {
  SyncRun run;
  run.outcome.Fail(EOPNOTSUPP, "pwritev2 RWF_DSYNC", Feature::kRwfDsync);
  FsyncRowContext rc;
  rc.bg_name = "none";
  rc.seconds = 1;
  rc.dirty_peak = 5;
  Row row = FsyncRow(kRwfDsync, run, rc, 0.5);
  EXPECT_EQ(row.status, RowStatus::kUnsupported);
  EXPECT_EQ(row.error_code, EOPNOTSUPP);
  EXPECT_TRUE(row.figures.empty());
  EXPECT_TRUE(row.latencies.empty());
}

// Rounds: a figure per trial (its median and spread over them), latencies
// over every iteration, each trial's series tagged with its round.
TEST(FsyncRows, TrialsBecomeMediansAndMergedLatencies) {
  FsyncRowContext rc{"none", 10, std::nullopt, false, 0, 0, 0, {}, ""};
  std::vector<FsyncTrial> trials = {{TenIterations(), rc}, {TenIterations(), rc}};
  trials[1].run.sync_latency.Record(2'000'000'000);  // a slower second trial
  Row row = FsyncRow(kFsync, trials, 0.5);
  EXPECT_EQ(row.status, RowStatus::kOk);
  const Figure* max = row.FindFigure("sync_max_ms");
  ASSERT_NE(max, nullptr);
  EXPECT_EQ(max->value.n, 2);
  EXPECT_NEAR(max->value.min, 900, 1);
  EXPECT_NEAR(max->value.max, 2000, 20);
  ASSERT_EQ(row.latencies.size(), 3u);
  EXPECT_EQ(row.latencies[1].count, 21u);
  int iterations = 0;
  for (const Series& s : row.series) iterations += s.key == "iterations" ? s.trial + 1 : 0;
  EXPECT_EQ(iterations, 1 + 2) << "trials 0 and 1";
  trials[1].rc.bg_failure = "background none exited";
  Row failed = FsyncRow(kFsync, trials, 0.5);
  EXPECT_EQ(failed.status, RowStatus::kFailed);
  ASSERT_NE(failed.FindFigure("sync_p50_ms"), nullptr) << "the round before keeps its figures";
  EXPECT_EQ(failed.FindFigure("sync_p50_ms")->value.n, 1);
}

TEST(FsyncRows, ABackgroundLeftInThePageCacheNamesTheOptionThatSizesIt) {
  for (const auto& [bg, option] : {std::pair<std::string, std::string>{"random", "--bg-span"},
                                   {"stream", "--bg-size"},
                                   {"cmd", "background command write more"}}) {
    // 1 GiB written by the background, 1 MiB of it reaching the device.
    FsyncRowContext rc{bg, 10, 1ull << 30, true, 1 << 20, 1 << 30, 0, {}, ""};
    rc.points = {Point(0, 0, 0), Point(5, 0, 1)};
    Row row = FsyncRow(kFsync, TenIterations(), rc, 0.5);
    std::string notes;
    for (const std::string& n : row.notes) notes += n + "\n";
    EXPECT_NE(notes.find("the background stayed in the page cache"), std::string::npos) << notes;
    EXPECT_NE(notes.find(option), std::string::npos) << bg << ": " << notes;
  }
}

}  // namespace
}  // namespace writelab
