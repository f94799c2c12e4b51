// SPDX-License-Identifier: MIT
#include "experiments/records/rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "row_figures.h"

namespace writelab {
namespace {

using test_support::FigureMedian;

// A pass of 1000 lines, 50,000 bytes, in `ms` milliseconds.
MethodRun Pass(uint64_t ms, uint64_t write_calls, uint64_t sync_calls = 0) {
  MethodRun m;
  m.ns = ms * 1'000'000;
  m.write_calls = write_calls;
  m.sync_calls = sync_calls;
  m.note = "stdio buffer 4096 bytes";
  return m;
}
constexpr OutputPlan kPlan{1000, 50'000, 1};

TEST(RecordsRows, PassesBecomeRatesPerLineWithOneCopyOfEachNote) {
  RecordsAccumulator acc;
  AddMethodRun(Pass(10, 13, 1), kPlan, acc);
  AddMethodRun(Pass(20, 13, 1), kPlan, acc);
  AddMethodRun(Pass(40, 13, 1), kPlan, acc);
  Row row = RecordsRow("fwrite/end", acc);
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "lines_s"), 50'000);  // 1000 lines in 20 ms
  EXPECT_EQ(row.FindFigure("lines_s")->value.min, 25'000);
  EXPECT_EQ(row.FindFigure("lines_s")->value.max, 100'000);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "mb_s"), 2.5);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "syscalls_per_line"), 0.014);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "sync_calls"), 1);
  EXPECT_EQ(row.FindFigure("speedup"), nullptr);  // set later, against the write row
  EXPECT_EQ(row.notes, std::vector<std::string>{"stdio buffer 4096 bytes"});
}

TEST(RecordsRows, SpeedupIsAgainstTheWriteRowOfTheSameSyncChoice) {
  ExperimentResult out;
  for (auto [name, ms] : {std::pair{"write", 100},
                          {"writev", 25},
                          {"write/osync", 1000},
                          {"writev/osync", 500},
                          {"gather/rwf-dsync", 10}}) {
    RecordsAccumulator acc;
    AddMethodRun(Pass(static_cast<uint64_t>(ms), 1000), kPlan, acc);
    out.rows.push_back(RecordsRow(name, acc));
  }
  AddSpeedups(out);
  EXPECT_DOUBLE_EQ(FigureMedian(out.rows[0], "speedup"), 1);
  EXPECT_DOUBLE_EQ(FigureMedian(out.rows[1], "speedup"), 4);
  EXPECT_DOUBLE_EQ(FigureMedian(out.rows[2], "speedup"), 1);
  EXPECT_DOUBLE_EQ(FigureMedian(out.rows[3], "speedup"), 2);
  EXPECT_EQ(out.rows[4].FindFigure("speedup"), nullptr);  // no write/rwf-dsync row
  // speedup sits before bytes, in table order
  const auto& f = out.rows[1].figures;
  auto at = [&](const char* key) {
    return std::find_if(f.begin(), f.end(), [&](const Figure& x) { return x.key == key; });
  };
  EXPECT_LT(at("speedup"), at("bytes"));
  EXPECT_GT(at("speedup"), at("lines_s"));
}

TEST(RecordsRows, AnUnsupportedSyncChoiceIsARowWithTheErrno) {
  RecordsAccumulator acc;
  MethodRun m;
  m.outcome.Fail(EOPNOTSUPP, "pwritev2 RWF_DSYNC", Feature::kRwfDsync);
  AddMethodRun(m, kPlan, acc);
  Row row = RecordsRow("write/rwf-dsync", acc);
  EXPECT_EQ(row.status, RowStatus::kUnsupported);
  EXPECT_EQ(row.error_code, EOPNOTSUPP);
  EXPECT_TRUE(row.figures.empty());
}

// A trial of `threads` threads: 1 s, 4000 commits in 1000 fdatasyncs of 2 ms.
CommitRun Commits() {
  CommitRun r;
  r.ns = 1'000'000'000;
  r.commits = 4000;
  r.syncs = 1000;
  r.sync_ns = 2'000'000'000;
  r.latency.Record(2'000'000);
  return r;
}

TEST(RecordsRows, AGroupCommitRowHasItsCeilingAndSpeedup) {
  CommitAcc acc{"group/8", {}, {}, {}};
  CommitRun r = Commits();
  r.wait_timeouts = 2;  // the library's count, group rows only
  AddCommitTrial(r, CommitWay{true, false, "group"}, 8, acc);
  Row row = CommitRow(acc, 1000);
  EXPECT_EQ(row.name, "group/8");
  EXPECT_DOUBLE_EQ(FigureMedian(row, "commits_s"), 4000);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "records_per_sync"), 4);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "sync_ms"), 2);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "ceiling_commits_s"), 4000);  // 8 threads / 2 ms
  EXPECT_DOUBLE_EQ(FigureMedian(row, "ceiling_fraction"), 1);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "speedup"), 4);
  EXPECT_DOUBLE_EQ(FigureMedian(row, "wait_timeouts"), 2);
  ASSERT_EQ(row.latencies.size(), 1u);
  EXPECT_EQ(row.latencies[0].count, 1u);
}

TEST(RecordsRows, TheFdatasyncRowHasNoCeilingAndNoSpeedupOverItself) {
  CommitAcc acc{"fdatasync/8", {}, {}, {}};
  AddCommitTrial(Commits(), CommitWay{false, false, "fdatasync"}, 8, acc);
  Row row = CommitRow(acc, 0);
  EXPECT_EQ(row.FindFigure("ceiling_commits_s"), nullptr);
  EXPECT_EQ(row.FindFigure("speedup"), nullptr);
  EXPECT_EQ(row.FindFigure("wait_timeouts"), nullptr);  // fdatasync rows have no wait
}

TEST(RecordsRows, ACommitRowWithoutCommitsOrWithAFailureHasNoFigures) {
  CommitAcc none{"group/1", {}, {}, {}};
  CommitRun empty = Commits();
  empty.commits = 0;
  AddCommitTrial(empty, CommitWay{true, false, "group"}, 1, none);
  EXPECT_TRUE(CommitRow(none, 1000).figures.empty());

  CommitAcc failed{"group/1", {}, {}, {}};
  CommitRun r = Commits();
  r.outcome.Fail(ENOSPC, "fdatasync");
  AddCommitTrial(r, CommitWay{true, false, "group"}, 1, failed);
  Row row = CommitRow(failed, 1000);
  EXPECT_EQ(row.status, RowStatus::kFailed);
  EXPECT_EQ(row.error_code, ENOSPC);
  EXPECT_TRUE(row.figures.empty());
  EXPECT_TRUE(row.latencies.empty());
}

}  // namespace
}  // namespace writelab
