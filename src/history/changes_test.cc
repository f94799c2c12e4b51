// SPDX-License-Identifier: MIT
// `history changes` over a history of 24 runs: a 30% step in one figure at
// the 13th run, where the run's test bed changed, is found there and names
// the test bed; the same runs without the step report nothing (A/A); a run
// with a row twice continues two series.
#include "history/changes.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/document_json.h"
#include "core/stats.h"
#include "expect_ok.h"
#include "fixture.h"
#include "history/trend.h"
#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::TempDir;

// Noise of about 3% of the level, the same on every machine: a sum of
// uniform deviates from a fixed linear congruential generator.
double Noisy(double level, uint64_t& state) {
  double sum = 0;
  for (int i = 0; i < 12; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    sum += static_cast<double>(state >> 11) * 0x1.0p-53;
  }
  return level * (1 + 0.03 * (sum - 6));
}

// The fixed document as run `i` of a series: mb_s at `value`, on `testbed`.
Document RunWith(int i, double value, const std::string& testbed) {
  Document doc = FixedDocument();
  doc.started_at = fmt::format("2026-11-30T{:02}:{:02}:00Z", 10 + i / 60, i % 60);
  doc.command_line = "writelab stream --testbed " + testbed + " --size 1G";
  ExperimentResult& e = doc.experiments[0];
  e.testbed = testbed;
  e.rows[0].figures[0].value = Summarize({value * 0.99, value, value * 1.01});
  // The noise canary: the same but for run 14, made while the machine was busy.
  const double cpu = i == 13 ? 10 : 5 + 0.01 * (i % 3);
  doc.canary.figures = {{"cpu_loop_ms", "CPU loop", "ms", "", Summarize({cpu, cpu, cpu})},
                        {"fdatasync_us", "fdatasync", "us", "", Summarize({500, 510, 490})}};
  return doc;
}

HistoryStore Filled(const TempDir& dir, double step) {
  auto store = HistoryStore::Open({dir.path() + "/history.sqlite", false}, true);
  EXPECT_TRUE(store.has_value());
  uint64_t state = 42;
  for (int i = 0; i < 24; ++i) {
    const bool after = i >= 12;
    Document doc = RunWith(i, Noisy(after ? 1000 * (1 + step) : 1000, state),
                           after && step != 0 ? "ext4:dirty=64M" : "ext4:dirty=256M");
    EXPECT_TRUE(store->Append(ToJson(doc), doc, "run").has_value());
  }
  return std::move(*store);
}

TEST(HistoryChanges, AStepIsFoundWhereTheTestBedChangedAndNamesIt) {
  TempDir dir("changes");
  HistoryStore store = Filled(dir, 0.30);
  ChangesQuery q;
  q.experiment = "stream";
  auto found = FindChanges(store, q);
  ASSERT_OK(found);
  EXPECT_EQ(found->figures, 4u) << "mb_s, cached_end, probe_p99_ms, probe_calls_p50_ms";
  ASSERT_EQ(found->changes.size(), 1u) << RenderChangesText(q, *found);
  const SeriesChange& c = found->changes[0];
  EXPECT_EQ(c.figure, "mb_s");
  EXPECT_EQ(c.row, "plain");
  EXPECT_EQ(c.runs, 24u) << "one series across both test beds";
  EXPECT_EQ(c.change.index, 12u) << "the 13th run is the first after the change";
  EXPECT_EQ(c.run_at, c.run_before + 1);
  EXPECT_NEAR(c.change.change_pct, 30, 5);
  EXPECT_LE(c.change.ci_low_pct, c.change.change_pct);
  EXPECT_LT(c.change.p_value, 0.001);
  ASSERT_FALSE(c.also_changed.empty());
  EXPECT_EQ(c.also_changed[0], "test bed ext4:dirty=256M -> ext4:dirty=64M");
  ASSERT_EQ(c.disturbed.size(), 1u);
  EXPECT_EQ(c.disturbed[0], "run 14: CPU loop 2.0x this host's median");
  const std::string text = RenderChangesText(q, *found);
  EXPECT_NE(text.find("1 change in 4 series of 4 figures"), std::string::npos) << text;
  EXPECT_NE(text.find("at run 13 (after run 12)"), std::string::npos) << text;
  EXPECT_NE(text.find("also changed at that run: test bed"), std::string::npos) << text;
  EXPECT_NE(text.find("made on a disturbed machine, by their noise canary: run 14: CPU loop"),
            std::string::npos)
      << text;
  // The canary is a series of its own, kept and searched like any other.
  ChangesQuery canary;
  canary.experiment = "canary";
  auto machine = FindChanges(store, canary);
  ASSERT_OK(machine);
  EXPECT_EQ(machine->figures, 2u);
  EXPECT_TRUE(machine->changes.empty()) << "one busy run is not a change of level";
  // trend marks it on the same run.
  TrendQuery t{"stream", "mb_s", "plain", {}};
  auto points = store.Trend(t);
  ASSERT_OK(points);
  const auto marks = TrendChangePoints(*points);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ((*points)[marks.begin()->first].run_id, c.run_at);
  EXPECT_NE(RenderTrendText(t, *points).find("change point: +"), std::string::npos);
  // and draws it: a triangle at run 13, named with its size.
  const std::string page = RenderTrendHtml(t, *points, HtmlAssets{});
  EXPECT_NE(page.find("change points: plain"), std::string::npos);
  EXPECT_NE(page.find("% from this run on (p "), std::string::npos);
}

TEST(HistoryChanges, TheSameRunsWithoutTheStepReportNothing) {
  TempDir dir("changes-aa");
  HistoryStore store = Filled(dir, 0);
  ChangesQuery q;
  q.experiment = "stream";
  q.figure = "mb_s";
  auto found = FindChanges(store, q);
  ASSERT_OK(found);
  EXPECT_EQ(found->series, 1u);
  EXPECT_TRUE(found->changes.empty()) << RenderChangesText(q, *found);
  EXPECT_NE(RenderChangesText(q, *found).find("0 changes in 1 series of 1 figure "),
            std::string::npos);
}

// history check over the series (issue 46): the step at run 13 is found
// once three runs follow it, placed at run 13; at run 24 it is 12 runs back,
// no longer recent, unless the baseline is older than it.
TEST(HistoryChanges, CheckFindsAChangeUpToTheRunCheckedWhileItIsRecent) {
  TempDir dir("changes-check");
  HistoryStore store = Filled(dir, -0.30);
  RecentChangesQuery q;
  q.experiments = {"stream"};
  q.host = FixedDocument().host.hostname;
  auto at = [&](int64_t up_to, int64_t after = 0) {
    q.up_to_run = up_to, q.after_run = after;
    auto found = RecentChanges(store, q);
    EXPECT_TRUE(found.has_value());
    return found ? found->changes : std::vector<SeriesChange>{};
  };
  EXPECT_TRUE(at(12).empty()) << "nothing changed yet";
  EXPECT_TRUE(at(14).empty()) << "two runs after the change cannot show it";
  EXPECT_EQ(at(15).size(), 1u) << "three can";
  const auto found = at(16);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].experiment, "stream");
  EXPECT_EQ(found[0].figure, "mb_s");
  EXPECT_EQ(found[0].run_at, 13);
  EXPECT_NEAR(found[0].change.change_pct, -30, 5);
  EXPECT_EQ(found[0].runs, 16u) << "the series stops at the run checked";
  EXPECT_NE(RenderChange(found[0]).find("at run 13 (after run 12)"), std::string::npos);
  EXPECT_TRUE(at(24).empty()) << "12 runs back: not among the last 5";
  ASSERT_EQ(at(24, 10).size(), 1u) << "after the baseline, run 10";
  EXPECT_TRUE(at(24, 13).empty()) << "the baseline is already past the change";
  q.host = "another-host";
  EXPECT_TRUE(at(16).empty());
}

// Two series of one row (the run has it on two test beds), each with its
// step: check keeps the last change of each, not one for the row.
TEST(HistoryChanges, CheckKeepsTheChangeOfEachSeriesOfARow) {
  TempDir dir("changes-two");
  auto store = HistoryStore::Open({dir.path() + "/history.sqlite", false}, true);
  ASSERT_OK(store);
  uint64_t state = 7;
  for (int i = 0; i < 16; ++i) {
    Document doc = RunWith(i, Noisy(i >= 12 ? 700 : 1000, state), "ext4:data=ordered");
    ExperimentResult other = doc.experiments[0];
    other.testbed = "ext4:data=journal";
    const double v = Noisy(i >= 10 ? 400 : 600, state);
    other.rows[0].figures[0].value = Summarize({v * 0.99, v, v * 1.01});
    doc.experiments.push_back(other);
    ASSERT_OK(store->Append(ToJson(doc), doc, "run"));
  }
  RecentChangesQuery q;
  q.experiments = {"stream"};
  q.host = FixedDocument().host.hostname;
  q.up_to_run = 16;
  q.recent = 8;
  auto found = RecentChanges(*store, q);
  ASSERT_OK(found);
  std::vector<int64_t> at;
  for (const SeriesChange& c : found->changes)
    if (c.figure == "mb_s") at.push_back(c.run_at);
  std::sort(at.begin(), at.end());
  EXPECT_EQ(at, (std::vector<int64_t>{11, 13})) << "one change per series";
}

TEST(HistoryChanges, ARowTwiceInARunContinuesTwoSeries) {
  std::vector<TrendPoint> points;
  for (int64_t run = 1; run <= 3; ++run)
    for (const char* bed : {"ext4:data=ordered", "ext4:data=journal"}) {
      TrendPoint p;
      p.run_id = run, p.hostname = "box", p.row = "none/fsync", p.testbed = bed;
      points.push_back(p);
    }
  const auto series = SplitSeries(points);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0], (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(series[1], (std::vector<size_t>{1, 3, 5}));
  points[0].hostname = "other";  // another host: a series of its own
  EXPECT_EQ(SplitSeries(points).size(), 3u);
}

}  // namespace
}  // namespace writelab
