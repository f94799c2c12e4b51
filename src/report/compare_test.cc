// SPDX-License-Identifier: MIT
// compare on fixed documents: percent change and its interval, verdicts from
// the Mann-Whitney U test (significant, within noise, too few trials, one
// trial), the JSON form, regressions of headline figures, and documents that
// share nothing.
#include "report/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/document_json.h"
#include "report/csv.h"
#include "report/text.h"

namespace writelab {
namespace {

Document OneFigure(std::vector<double> samples, const std::string& testbed = "",
                   const std::string& unit = "MB/s") {
  Document doc;
  ExperimentResult e;
  e.name = "stream";
  e.testbed = testbed;
  e.row_label = "strategy";
  e.table = {"mb_s"};
  Row r;
  r.name = "plain";
  r.figures = {{"mb_s", "MB/s", unit, "all", Summarize(std::move(samples))}};
  e.rows.push_back(r);
  doc.experiments.push_back(e);
  return doc;
}

// Issue 27: many rows of A all matching one row of B with the most samples
// a figure may have. Every figure gets its verdict; the bootstrap stops at
// its budget, and the comparison says for how many figures it did.
TEST(Compare, TheBootstrapStopsAtItsBudgetAndSaysSo) {
  std::vector<double> many;
  for (int i = 0; i < 1000; ++i) many.push_back(100 + i % 17);
  Document b = OneFigure(many), a = OneFigure({90, 91});
  for (int i = 0; i < 200; ++i) a.experiments[0].rows.push_back(a.experiments[0].rows[0]);
  const uint64_t budget = 20'000'000, per_figure = 4000 * (2 + 1000);
  auto c = Compare(a, b, budget);
  ASSERT_TRUE(c);
  ASSERT_EQ(c->figures.size(), 201u);
  EXPECT_EQ(c->intervals_left_out, 201 - budget / per_figure);
  EXPECT_TRUE(c->figures.front().change_low_pct);
  EXPECT_FALSE(c->figures.back().change_low_pct);
  for (const FigureComparison& f : c->figures) EXPECT_TRUE(f.p) << "every verdict is complete";
  EXPECT_NE(c->only.back().find("95% intervals left out for"), std::string::npos);
}

// Issue 27: a row name that would retitle the terminal and rewrite the
// verdict line, through compare's text, the text tables and the CSV.
TEST(Compare, ADocumentsControlCharactersNeverReachTheTerminal) {
  const std::string evil =
      "\x1b]0;PWNED\x07\r\x1b[2Kfake line\xc2\x9b"
      "2J";
  Document a = OneFigure({1, 2, 3}), b = OneFigure({4, 5, 6});
  // Through a file, as compare reads it.
  for (Document* d : {&a, &b}) {
    d->experiments[0].rows[0].name = evil;
    d->label = evil;
    auto read = FromJson(ToJson(*d));
    ASSERT_TRUE(read) << read.error();
    *d = *read;
  }
  auto c = Compare(a, b);
  ASSERT_TRUE(c);
  for (const std::string& out : {RenderComparisonText(*c), RenderText(a), RenderCsv(a)}) {
    for (char bad : {'\x1b', '\x07', '\r'}) EXPECT_EQ(out.find(bad), std::string::npos) << out;
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos);
    EXPECT_NE(out.find("?]0;PWNED??"), std::string::npos) << out;
  }
  // And what a run itself prints: a device model with an escape.
  a.experiments[0].target.model = "disk\x1b[31m";
  EXPECT_EQ(RenderText(a).find('\x1b'), std::string::npos);
}

TEST(Compare, PercentChange) {
  EXPECT_EQ(PercentChange(100, 112.34), "+12.3%");
  EXPECT_EQ(PercentChange(200, 150), "-25.0%");
  EXPECT_EQ(PercentChange(0, 5), "-");
}

TEST(Compare, VerdictFromTheTrials) {
  Summary a = Summarize({100, 101, 102, 99, 98}), b = Summarize({200, 201, 202, 199, 198});
  EXPECT_EQ(CompareSummaries(a, b), Verdict::kSignificant);
  Summary c = Summarize({90, 130, 100, 140, 120}), d = Summarize({100, 120, 95, 135, 125});
  EXPECT_EQ(CompareSummaries(c, d), Verdict::kWithinNoise);
  EXPECT_EQ(CompareSummaries(Summarize({1, 2, 3}), Summarize({7, 8, 9})), Verdict::kTooFewTrials)
      << "3 and 3 trials cannot reach p < 0.05";
  EXPECT_EQ(CompareSummaries(Summarize({100}), b), Verdict::kCannotTell);
}

TEST(Compare, SideBySideTextWithTheIntervalAndP) {
  auto text =
      CompareDocuments(OneFigure({100, 101, 102, 99, 98}), OneFigure({200, 201, 202, 199, 198}));
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("+100.0%"), std::string::npos) << *text;
  EXPECT_NE(text->find("significant"), std::string::npos) << *text;
  EXPECT_NE(text->find("0.00794"), std::string::npos) << "2/252: " << *text;
  EXPECT_NE(text->find("* MB/s"), std::string::npos) << "the headline figure is marked";
  auto one = CompareDocuments(OneFigure({100}), OneFigure({110}));
  ASSERT_TRUE(one);
  EXPECT_NE(one->find("+10.0%"), std::string::npos) << *one;
  EXPECT_NE(one->find("one trial: cannot tell"), std::string::npos) << *one;
}

TEST(Compare, JsonCarriesEveryFigureAndItsVerdict) {
  auto c = Compare(OneFigure({100, 101, 102, 99, 98}), OneFigure({110, 111, 100, 109, 95}));
  ASSERT_TRUE(c);
  auto j = nlohmann::json::parse(RenderComparisonJson(*c));
  ASSERT_EQ(j["figures"].size(), 1u);
  const auto& f = j["figures"][0];
  EXPECT_EQ(f["key"], "mb_s");
  EXPECT_EQ(f["headline"], true);
  EXPECT_EQ(f["verdict"], "within-noise");
  EXPECT_DOUBLE_EQ(f["a"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(f["b"].get<double>(), 109);
  ASSERT_TRUE(f["change_interval_pct"].is_array());
  EXPECT_LE(f["change_interval_pct"][0].get<double>(), 9);
  EXPECT_GE(f["change_interval_pct"][1].get<double>(), 9);
  EXPECT_GT(f["p"].get<double>(), 0.05);
}

TEST(Compare, RegressionsAreSignificantWorseningsOfHeadlines) {
  const Document base = OneFigure({100, 101, 102, 99, 98});
  auto slower = Compare(base, OneFigure({80, 81, 82, 79, 78}));  // -20% MB/s
  ASSERT_TRUE(slower);
  EXPECT_EQ(Regressions(*slower, 10).size(), 1u);
  EXPECT_TRUE(Regressions(*slower, 25).empty()) << "worse, but by less than 25%";
  auto faster = Compare(base, OneFigure({120, 121, 122, 119, 118}));
  ASSERT_TRUE(faster);
  EXPECT_TRUE(Regressions(*faster, 0).empty()) << "better is not a regression";
  auto noisy = Compare(base, OneFigure({60, 140, 70, 130, 99}));
  ASSERT_TRUE(noisy);
  EXPECT_TRUE(Regressions(*noisy, 0).empty()) << "not significant";
  // A latency that grew is worse: smaller is better for times.
  auto later =
      Compare(OneFigure({10, 11, 12, 9, 8}, "", "ms"), OneFigure({20, 21, 22, 19, 18}, "", "ms"));
  ASSERT_TRUE(later);
  EXPECT_EQ(Regressions(*later, 50).size(), 1u);
}

TEST(Compare, UnmatchedExperimentsAndRows) {
  EXPECT_FALSE(CompareDocuments(OneFigure({1}), OneFigure({1}, "xfs")));
  Document a = OneFigure({1}), b = OneFigure({1});
  b.experiments[0].rows[0].name = "direct";
  auto text = CompareDocuments(a, b);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("only in A: stream: plain"), std::string::npos) << *text;
  EXPECT_NE(text->find("only in B: stream: direct"), std::string::npos) << *text;
}

TEST(Compare, TheTextShowsHeadlinesAndChangesSaysTheTrialsAndLeavesInvariantsOut) {
  Document a = OneFigure({100, 101, 102, 99, 98}), b = OneFigure({100, 102, 101, 98, 99});
  for (Document* d : {&a, &b}) {
    Row& r = d->experiments[0].rows[0];
    r.figures.push_back(
        {"calls", "write calls", "calls", "", Summarize({32, 32, 32, 32, 32})});  // invariant
    r.figures.push_back({"cached", "cached", "bytes", "", Summarize({1, 2, 3, 4, 5})});
  }
  b.experiments[0].rows[0].figures.push_back({"p99_ms", "p99", "ms", "", Summarize({1})});
  a.experiments[0].rows[0].figures.push_back(
      {"p99_ms", "p99", "ms", "", Summarize({9, 9.1, 9.2, 9.3, 9.4})});
  b.experiments[0].rows[0].figures.back().value = Summarize({1, 1.1, 1.2, 1.3, 1.4});
  auto c = Compare(a, b);
  ASSERT_TRUE(c);
  const std::string text = RenderComparisonText(*c);
  EXPECT_NE(text.find("trials: A 5, B 5 per figure"), std::string::npos) << text;
  EXPECT_NE(text.find("* MB/s"), std::string::npos) << "the headline, though within noise";
  EXPECT_NE(text.find("p99 (ms)"), std::string::npos) << "a significant change";
  EXPECT_EQ(text.find("cached"), std::string::npos) << text;
  EXPECT_NE(text.find("1 more figures with no significant change not shown"), std::string::npos);
  EXPECT_EQ(text.find("write calls"), std::string::npos) << text;
  EXPECT_NE(text.find("1 figures left out: the same value on every trial"), std::string::npos);
  const std::string every = RenderComparisonText(*c, true);
  EXPECT_NE(every.find("cached"), std::string::npos) << every;
  EXPECT_EQ(every.find("write calls"), std::string::npos) << "an invariant says nothing";
  auto few = Compare(OneFigure({1, 2, 3}), OneFigure({4, 5, 6}));
  ASSERT_TRUE(few);
  EXPECT_NE(RenderComparisonText(*few).find("with these, none can (p is 0.1 at best)"),
            std::string::npos)
      << RenderComparisonText(*few);
}

}  // namespace
}  // namespace writelab
