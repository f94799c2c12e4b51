// SPDX-License-Identifier: MIT
#include "mpi/aggregate.h"

#include <gtest/gtest.h>

#include "core/units.h"

namespace writelab {
namespace {

constexpr uint64_t kAggregateMs = 1'000'000;

Row OkRow(const std::string& name) {
  Row r;
  r.name = name;
  return r;
}

// A rank that wrote `bytes` in [start, end] ms of trial 0 of row "plain".
RankRun Rank(int rank, uint64_t start_ms, uint64_t end_ms, uint64_t bytes) {
  RankRun run;
  run.rank = rank;
  run.result.name = "stream";
  run.result.rows = {OkRow("plain")};
  run.spans.push_back({"plain",
                       0,
                       Role::kMeasure,
                       start_ms * kAggregateMs,
                       end_ms * kAggregateMs,
                       bytes,
                       0,
                       "",
                       {}});
  return run;
}

const Figure& FigureOf(const Row& r, const std::string& key) {
  const Figure* f = r.FindFigure(key);
  EXPECT_NE(f, nullptr) << key;
  static const Figure none;
  return f ? *f : none;
}

TEST(AggregateRanks, ThroughputIsAllBytesOverTheWallTimeAsIorCountsIt) {
  // Rank 0 writes 100 MB in 1 s from t = 0; rank 1 the same from t = 1 s:
  // 200 MB over 2 s is 100 MB/s, not the sum of the rates (200 MB/s).
  std::vector<RankRun> runs = {Rank(0, 0, 1000, 100'000'000), Rank(1, 1000, 2000, 100'000'000)};
  ExperimentResult agg = AggregateRanks(runs, {});
  EXPECT_EQ(agg.ranks, 2);
  EXPECT_EQ(agg.rank, -1);
  EXPECT_EQ(agg.compare_figure, "mb_s");  // what compare judges it by: not "ranks"
  ASSERT_EQ(agg.rows.size(), 1u);
  const Row& row = agg.rows[0];
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_DOUBLE_EQ(FigureOf(row, "bytes").value.median, 200e6);
  EXPECT_NEAR(FigureOf(row, "mb_s").value.median, 200e6 / 2.0 / kMB, 1e-9);
  EXPECT_NEAR(FigureOf(row, "rank_mb_s_min").value.median, 100e6 / kMB, 1e-9);
  EXPECT_DOUBLE_EQ(FigureOf(row, "ranks").value.median, 2);
  EXPECT_DOUBLE_EQ(FigureOf(row, "start_skew_ms").value.median, 1000);
  EXPECT_DOUBLE_EQ(FigureOf(row, "seconds").value.median, 2);
}

TEST(AggregateRanks, EachTrialIsAggregatedOnItsOwnThenSummarised) {
  std::vector<RankRun> runs = {Rank(0, 0, 1000, 100'000'000), Rank(1, 0, 1000, 100'000'000)};
  runs[0].spans.push_back({"plain",
                           1,
                           Role::kMeasure,
                           5000 * kAggregateMs,
                           5500 * kAggregateMs,
                           100'000'000,
                           0,
                           "",
                           {}});
  runs[1].spans.push_back({"plain",
                           1,
                           Role::kMeasure,
                           5000 * kAggregateMs,
                           5500 * kAggregateMs,
                           100'000'000,
                           0,
                           "",
                           {}});
  const ExperimentResult agg = AggregateRanks(runs, {});
  const Figure& f = FigureOf(agg.rows[0], "mb_s");
  EXPECT_EQ(f.value.n, 2);
  EXPECT_NEAR(f.value.min, 200e6 / 1.0 / kMB, 1e-6);
  EXPECT_NEAR(f.value.max, 200e6 / 0.5 / kMB, 1e-6);
}

TEST(AggregateRanks, LatenciesComeFromTheMergedHistogram) {
  std::vector<RankRun> runs = {Rank(0, 0, 1000, 1), Rank(1, 0, 1000, 1)};
  Latency l;
  l.key = "write";
  l.label = "write call";
  l.includes = "one write";
  runs[0].result.rows[0].latencies.push_back(l);
  Histogram h;
  for (uint64_t ns = 1; ns <= 200; ++ns) h.Record(ns * 1000);
  MergedHistograms merged = {{{"plain", "write"}, h}};
  const Row row = AggregateRanks(runs, merged).rows[0];
  const Latency* merged_l = row.FindLatency("write");
  ASSERT_NE(merged_l, nullptr);
  EXPECT_EQ(merged_l->count, 200u);
  EXPECT_EQ(merged_l->label, "write call");
  EXPECT_NE(merged_l->includes.find("merged bucket by bucket"), std::string::npos);
  EXPECT_NEAR(FigureOf(row, "write_p99_ms").value.median,
              static_cast<double>(h.Percentile(99)) / 1e6, 1e-12);
  EXPECT_DOUBLE_EQ(FigureOf(row, "write_max_ms").value.median, 0.2);
}

TEST(AggregateRanks, ARankWhoseRowIsUnsupportedIsNamedAndLeftOut) {
  std::vector<RankRun> runs = {Rank(0, 0, 1000, 100'000'000), Rank(1, 0, 1000, 0)};
  runs[1].spans.clear();
  runs[1].result.rows[0].status = RowStatus::kUnsupported;
  runs[1].result.rows[0].error_code = EOPNOTSUPP;
  runs[1].result.rows[0].message = "pwritev2 RWF_DONTCACHE: Operation not supported";
  const Row row = AggregateRanks(runs, {}).rows[0];
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_DOUBLE_EQ(FigureOf(row, "ranks").value.median, 1);
  ASSERT_EQ(row.notes.size(), 1u);
  EXPECT_NE(row.notes[0].find("rank 1: unsupported (EOPNOTSUPP)"), std::string::npos)
      << row.notes[0];
}

TEST(AggregateRanks, ARowNoRankMeasuredTakesTheFirstRanksFailure) {
  std::vector<RankRun> runs = {Rank(0, 0, 1, 0), Rank(1, 0, 1, 0)};
  for (RankRun& r : runs) r.spans.clear();
  runs[1].result.rows[0].status = RowStatus::kFailed;
  runs[1].result.rows[0].error_code = ENOSPC;
  runs[1].result.rows[0].message = "write at 0: No space left on device";
  const Row row = AggregateRanks(runs, {}).rows[0];
  EXPECT_EQ(row.status, RowStatus::kFailed);
  EXPECT_EQ(row.error_code, ENOSPC);
  EXPECT_EQ(row.message, "rank 1: write at 0: No space left on device");
  EXPECT_TRUE(row.figures.empty());
}

TEST(AggregateRanks, BackgroundRanksGiveTheBackgroundThroughputOnly) {
  std::vector<RankRun> runs = {Rank(0, 0, 1000, 0), Rank(1, 0, 1000, 0)};
  runs[1].spans[0].role = Role::kBackground;
  runs[1].spans[0].bytes = 50'000'000;
  const Row row = AggregateRanks(runs, {}).rows[0];
  EXPECT_DOUBLE_EQ(FigureOf(row, "ranks").value.median, 1);
  EXPECT_NEAR(FigureOf(row, "bg_mb_s").value.median, 50e6 / kMB, 1e-9);
  EXPECT_EQ(row.FindFigure("mb_s"), nullptr);  // the measuring rank wrote no counted bytes
}

TEST(AlignSeries, EveryRanksSeriesCountsFromTheFirstRanksStart) {
  std::vector<RankRun> runs = {Rank(0, 1000, 2000, 8), Rank(1, 1500, 2500, 8)};
  for (RankRun& r : runs) {
    r.spans[0].origins["timeline"] = r.spans[0].start_ns;
    r.spans[0].written_from_origin = true;
    r.result.rows[0].series.push_back({"timeline",
                                       0,
                                       0.5,
                                       {{"t", "s"}, {"throughput", "MB/s"}, {"written", "bytes"}},
                                       {{0.5, 8e-6, 4}, {1.0, 8e-6, 8}}});
  }
  AlignSeries(runs);
  EXPECT_DOUBLE_EQ(runs[0].result.rows[0].series[0].points[0][0], 0.5);
  EXPECT_DOUBLE_EQ(runs[1].result.rows[0].series[0].points[0][0], 1.0);  // started 0.5 s later
  // The aggregate's timeline adds up what the ranks had written.
  ExperimentResult agg = AggregateRanks(runs, {});
  const Series* sum = nullptr;
  for (const Series& s : agg.rows[0].series)
    if (s.key == "timeline") sum = &s;
  ASSERT_NE(sum, nullptr);
  ASSERT_FALSE(sum->points.empty());
  EXPECT_DOUBLE_EQ(sum->points.back()[2], 16);
  EXPECT_DOUBLE_EQ(sum->points[0][2], 4);  // t = 0.5: rank 0 had 4, rank 1 had not begun
}

TEST(AlignSeries, ALoadsCountFromTheTrialsFirstSampleNotFromItsStart) {
  // fsync's background counter ran before the trial: its first sample in
  // the trial is the baseline, not bytes written in it.
  std::vector<RankRun> runs = {Rank(0, 1000, 2000, 0)};
  runs[0].spans[0].origins["timeline"] = 0;  // the phase's sampler began long before
  runs[0].result.rows[0].series.push_back(
      {"timeline",
       0,
       0.5,
       {{"t", "s"}, {"throughput", "MB/s"}, {"written", "bytes"}},
       {{1.0, 0, 900}, {1.5, 0, 1000}}});
  AlignSeries(runs);
  ExperimentResult agg = AggregateRanks(runs, {});
  const Series* sum = nullptr;
  for (const Series& s : agg.rows[0].series)
    if (s.key == "timeline") sum = &s;
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->points.back()[2], 100);
}

TEST(AlignSeries, TheSumEndsWhereTheLastRanksSeriesEndsOffTheGrid) {
  // Sampled every 0.1 s; the trials end between samples, at 0.53 and 0.47 s.
  std::vector<RankRun> runs = {Rank(0, 1000, 1530, 30), Rank(1, 1000, 1470, 20)};
  const std::vector<std::vector<double>> ends[] = {{{0.1, 0, 5}, {0.2, 0, 10}, {0.53, 0, 30}},
                                                   {{0.1, 0, 5}, {0.47, 0, 20}}};
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].spans[0].origins["timeline"] = runs[i].spans[0].start_ns;
    runs[i].spans[0].written_from_origin = true;
    runs[i].result.rows[0].series.push_back(
        {"timeline", 0, 0.1, {{"t", "s"}, {"throughput", "MB/s"}, {"written", "bytes"}}, ends[i]});
  }
  AlignSeries(runs);
  const Series* sum = nullptr;
  ExperimentResult agg = AggregateRanks(runs, {});
  for (const Series& s : agg.rows[0].series)
    if (s.key == "timeline") sum = &s;
  ASSERT_NE(sum, nullptr);
  ASSERT_EQ(sum->points.size(), 5u);  // 0.1, 0.2, 0.3, 0.4, then the end
  EXPECT_DOUBLE_EQ(sum->points.back()[0], 0.53);
  EXPECT_DOUBLE_EQ(sum->points.back()[2], 50);
  for (const auto& p : sum->points) EXPECT_GE(p[1], 0);  // no interval writes backwards
}

TEST(FirstRankFailure, NamesTheRankThatFailedNotThoseItStopped) {
  std::vector<RankRun> runs = {Rank(0, 0, 1, 0), Rank(1, 0, 1, 0), Rank(2, 0, 1, 0)};
  runs[0].error = "stopped: rank 2 failed";
  runs[0].stopped = true;
  runs[2].error = "window: write at 0: No space left on device";
  runs[2].host = "b";
  EXPECT_EQ(FirstRankFailure(runs), "rank 2 (b): window: write at 0: No space left on device");
  runs[2].error.clear();
  EXPECT_EQ(FirstRankFailure(runs), std::nullopt);
}

}  // namespace
}  // namespace writelab
