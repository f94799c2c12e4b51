// SPDX-License-Identifier: MIT
// compare on fixed documents: percent change, significance from the 95%
// intervals, one trial, and documents that share nothing.
#include "report/compare.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

Document OneFigure(std::vector<double> samples, const std::string& testbed = "") {
  Document doc;
  ExperimentResult e;
  e.name = "stream";
  e.testbed = testbed;
  e.row_label = "strategy";
  Row r;
  r.name = "plain";
  r.figures = {{"mb_s", "MB/s", "MB/s", "all", Summarize(std::move(samples))}};
  e.rows.push_back(r);
  doc.experiments.push_back(e);
  return doc;
}

TEST(Compare, PercentChange) {
  EXPECT_EQ(PercentChange(100, 112.34), "+12.3%");
  EXPECT_EQ(PercentChange(200, 150), "-25.0%");
  EXPECT_EQ(PercentChange(0, 5), "-");
}

TEST(Compare, VerdictFromTheIntervals) {
  Summary a = Summarize({100, 101, 102}), b = Summarize({200, 201, 202});
  EXPECT_EQ(CompareSummaries(a, b), Verdict::kSignificant);
  Summary c = Summarize({90, 110, 130}), d = Summarize({100, 120, 140});
  EXPECT_EQ(CompareSummaries(c, d), Verdict::kWithinNoise);
  EXPECT_EQ(CompareSummaries(Summarize({100}), b), Verdict::kCannotTell);
}

TEST(Compare, SideBySideText) {
  auto text = CompareDocuments(OneFigure({100, 101, 102}), OneFigure({200, 201, 202}));
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("+99.0%"), std::string::npos) << *text;
  EXPECT_NE(text->find("significant"), std::string::npos) << *text;
  auto one = CompareDocuments(OneFigure({100}), OneFigure({110}));
  ASSERT_TRUE(one);
  EXPECT_NE(one->find("+10.0%"), std::string::npos) << *one;
  EXPECT_NE(one->find("one trial: cannot tell"), std::string::npos) << *one;
}

TEST(Compare, UnmatchedExperimentsAndRows) {
  EXPECT_FALSE(CompareDocuments(OneFigure({1}), OneFigure({1}, "xfs")));
  Document a = OneFigure({1}), b = OneFigure({1});
  b.experiments[0].rows[0].name = "direct";
  auto text = CompareDocuments(a, b);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("only in A: plain"), std::string::npos);
  EXPECT_NE(text->find("only in B: direct"), std::string::npos);
}

}  // namespace
}  // namespace writelab
