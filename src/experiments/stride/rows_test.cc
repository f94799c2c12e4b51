// SPDX-License-Identifier: MIT
#include "experiments/stride/rows.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "row_figures.h"

namespace writelab {
namespace {

using test_support::FigureMedian;

// 1000 writes of 4 KiB in 0.5 s through 250 system calls.
StepResult StrideStepResult() {
  StepResult r;
  r.ops = 1000;
  r.bytes = 1000 * 4096;
  r.syscalls = 250;
  r.seconds = 0.5;
  for (int i = 0; i < 1000; ++i) r.latency.Record(i < 990 ? 100'000 : 5'000'000);
  r.timeline.key = "timeline";
  r.timeline.points = {{0.1, 1}, {0.2, 2}};
  return r;
}

TEST(StrideRows, AStepBecomesThroughputSyscallsAndPercentiles) {
  StepResult r = StrideStepResult();
  Row row = StrideRow("8 qd32 batch4", r);
  EXPECT_EQ(row.name, "8 qd32 batch4");
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "cycles"), 1000);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "written_mb"), 4.096);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "mb_s"), 8.192);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "syscalls_per_write"), 0.25);
  EXPECT_NEAR(FigureMedian(row, "write_p50_ms"), 0.1, 0.01);
  EXPECT_NEAR(FigureMedian(row, "write_p99_ms"), 0.1, 0.01);  // 990 of 1000 at 0.1 ms
  EXPECT_EQ(row.figures.front().key, "cycles");               // table order
  ASSERT_EQ(row.latencies.size(), 1u);
  EXPECT_EQ(row.latencies[0].count, 1000u);
  EXPECT_EQ(row.latencies[0].max_ns, 5'000'000u);
  ASSERT_EQ(row.series.size(), 1u);
  EXPECT_EQ(row.series[0].points.size(), 2u);
}

TEST(StrideRows, DeviceFiguresOnlyWithADevice) {
  StepResult r = StrideStepResult();
  Row without = StrideRow("1 qd1", r);
  EXPECT_EQ(without.FindFigure("device_writes"), nullptr);
  EXPECT_EQ(without.FindFigure("device_merges"), nullptr);

  StepResult d = StrideStepResult();
  d.have_device = true;
  d.device_writes = 50;  // 1000 writes merged into 50 requests
  d.device_merges = 950;
  d.device_bytes = 1000 * 4096;
  Row with = StrideRow("8 qd32", d);
  EXPECT_DOUBLE_EQ(FigureMedian(with, "device_writes"), 50);
  EXPECT_DOUBLE_EQ(FigureMedian(with, "device_merges"), 950);
  EXPECT_DOUBLE_EQ(FigureMedian(with, "device_kib_per_write"), 80);
}

TEST(StrideRows, NoDeviceWritesNoKibPerWriteAndNoOpsNoSyscallRatio) {
  StepResult r = StrideStepResult();
  r.have_device = true;  // the device did nothing yet (all in its queue)
  r.ops = 0;
  Row row = StrideRow("s", r);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "device_writes"), 0);
  EXPECT_EQ(row.FindFigure("device_kib_per_write"), nullptr);
  EXPECT_EQ(row.FindFigure("syscalls_per_write"), nullptr);
}

TEST(StrideRows, AFailedStepHasItsErrnoAndNoFigures) {
  StepResult r = StrideStepResult();
  r.outcome.Fail(EACCES, "io_uring_queue_init", Feature::kIoUring);
  Row row = StrideRow("8 qd32 batch4", r);
  EXPECT_EQ(row.status, RowStatus::kUnsupported);  // EACCES: a seccomp or LSM refusal
  EXPECT_EQ(row.error_code, EACCES);
  EXPECT_TRUE(row.figures.empty());
  EXPECT_TRUE(row.latencies.empty());
  EXPECT_TRUE(row.series.empty());

  StepResult f = StrideStepResult();
  f.outcome.Fail(EIO, "pwrite");
  EXPECT_EQ(StrideRow("x", f).status, RowStatus::kFailed);
}

// Rounds: a step that fails in a later round is a failed row that keeps
// the figures and timelines of the rounds before.
TEST(StrideRows, ALaterFailureKeepsTheRoundsBefore) {
  std::vector<StepResult> trials;
  trials.push_back(StrideStepResult());
  trials.push_back(StrideStepResult());
  trials.push_back(StrideStepResult());
  trials[2].outcome.Fail(ErrnoError(EIO, "pwrite"));
  Row row = StrideRow("8", trials);
  EXPECT_EQ(row.status, RowStatus::kFailed);
  const Figure* mb_s = row.FindFigure("mb_s");
  ASSERT_NE(mb_s, nullptr);
  EXPECT_EQ(mb_s->value.n, 2);
  EXPECT_EQ(row.latencies.at(0).count, 2000u);
  EXPECT_EQ(row.series.size(), 2u);
  trials[0].outcome.Fail(ErrnoError(EIO, "pwrite"));
  EXPECT_TRUE(StrideRow("8", trials).figures.empty()) << "the first round failed";
}

}  // namespace
}  // namespace writelab
