// SPDX-License-Identifier: MIT
// Mann-Whitney U against values worked by hand and from tables, and the
// bootstrap interval of the median ratio.
#include "report/significance.h"

#include <gtest/gtest.h>

#include <vector>

namespace writelab {
namespace {

TEST(MannWhitney, ExactPValues) {
  // Complete separation of 5 and 5: 2 of the C(10,5) = 252 splits are as
  // extreme (all lower or all higher).
  std::vector<double> a = {1, 2, 3, 4, 5}, b = {6, 7, 8, 9, 10};
  EXPECT_NEAR(MannWhitneyP(a, b), 2.0 / 252, 1e-12);
  EXPECT_NEAR(MannWhitneyP(b, a), 2.0 / 252, 1e-12);
  // 2 and 2, separated: 2 of 6.
  EXPECT_NEAR(MannWhitneyP(std::vector<double>{1, 2}, std::vector<double>{3, 4}), 1.0 / 3, 1e-12);
  // Interleaved: no evidence at all.
  EXPECT_NEAR(MannWhitneyP(std::vector<double>{1, 4, 5, 8}, std::vector<double>{2, 3, 6, 7}), 1.0,
              1e-12);
  // Identical samples: every split ties, p = 1.
  EXPECT_NEAR(MannWhitneyP(std::vector<double>{5, 5, 5}, std::vector<double>{5, 5, 5}), 1.0, 1e-12);
  EXPECT_EQ(MannWhitneyP(std::vector<double>{}, a), 1.0);
}

TEST(MannWhitney, SmallestPossibleP) {
  EXPECT_NEAR(SmallestMannWhitneyP(2, 2), 1.0 / 3, 1e-12);
  EXPECT_NEAR(SmallestMannWhitneyP(5, 5), 2.0 / 252, 1e-12);
  EXPECT_NEAR(SmallestMannWhitneyP(3, 3), 0.1, 1e-12) << "3 and 3 can never reach 0.05";
}

TEST(MannWhitney, NormalApproximationForLargeSamples) {
  std::vector<double> a, b;
  for (int i = 0; i < 15; ++i) {
    a.push_back(100 + i);
    b.push_back(110 + i);
  }
  const double p = MannWhitneyP(a, b);
  EXPECT_LT(p, 0.01);
  EXPECT_GT(p, 0.0);
  std::vector<double> c(a.begin(), a.end());
  EXPECT_GT(MannWhitneyP(a, c), 0.9);
}

TEST(Bootstrap, MedianRatioIntervalCoversTheChange) {
  std::vector<double> a = {100, 102, 98, 101, 99}, b = {150, 153, 147, 152, 148};
  auto r = BootstrapMedianRatio(a, b);
  ASSERT_TRUE(r);
  EXPECT_LE(r->low, 1.5);
  EXPECT_GE(r->high, 1.5);
  EXPECT_GT(r->low, 1.4);
  EXPECT_LT(r->high, 1.6);
  auto again = BootstrapMedianRatio(a, b);
  EXPECT_EQ(again->low, r->low) << "fixed seed: the same interval every time";
  EXPECT_FALSE(BootstrapMedianRatio(std::vector<double>{0, 0}, b)) << "A's median 0";
}

}  // namespace
}  // namespace writelab
