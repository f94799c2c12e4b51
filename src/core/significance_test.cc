// SPDX-License-Identifier: MIT
// Mann-Whitney U against values worked by hand and from tables, and the
// bootstrap interval of the median ratio.
#include "core/significance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// The exact p-value counts subsets by dynamic programming; here it is set
// against the enumeration of every subset it replaced, ties included.
double EnumeratedP(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  const size_t n = all.size();
  std::vector<double> rank(n);
  for (size_t i = 0; i < n; ++i) {
    double below = 0, equal = 0;
    for (double v : all) below += v < all[i], equal += v == all[i];
    rank[i] = below + (equal + 1) / 2;
  }
  double observed = 0;
  for (size_t i = 0; i < a.size(); ++i) observed += rank[i];
  const double mean = static_cast<double>(a.size()) * static_cast<double>(n + 1) / 2;
  std::vector<bool> pick(n, false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(a.size()), true);
  double total = 0, extreme = 0;
  do {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += pick[i] ? rank[i] : 0;
    ++total;
    extreme += std::fabs(sum - mean) >= std::fabs(observed - mean) - 1e-9;
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return extreme / total;
}

TEST(MannWhitney, ExactPEqualsTheEnumerationOfEverySubset) {
  uint64_t x = 2009;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  for (int round = 0; round < 200; ++round) {
    std::vector<double> a(2 + next() % 8), b(2 + next() % 8);
    for (double& v : a) v = static_cast<double>(next() % 7);  // few values: many ties
    for (double& v : b) v = static_cast<double>(next() % 7 + next() % 2);
    EXPECT_NEAR(MannWhitneyP(a, b), EnumeratedP(a, b), 1e-12) << round;
  }
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
