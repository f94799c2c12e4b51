// SPDX-License-Identifier: MIT
#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace writelab {
namespace {

TEST(Summarize, MedianMinMaxMean) {
  Summary s = Summarize({5, 1, 3, 2, 4});
  EXPECT_EQ(s.n, 5);
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.mean, 3);
  EXPECT_EQ(s.samples, (std::vector<double>{5, 1, 3, 2, 4}));  // trial order kept
  EXPECT_EQ(Summarize({1, 2, 3, 10}).median, 2.5);
}

TEST(Summarize, ConfidenceIntervalUsesStudentT) {
  // sample sd of {1..5} is sqrt(2.5); t(4) = 2.776.
  Summary s = Summarize({1, 2, 3, 4, 5});
  ASSERT_TRUE(s.ci95.has_value());
  double half = 2.776 * std::sqrt(2.5) / std::sqrt(5.0);
  EXPECT_NEAR(s.ci95->low, 3 - half, 1e-9);
  EXPECT_NEAR(s.ci95->high, 3 + half, 1e-9);
}

TEST(Summarize, OneTrialHasNoInterval) {
  Summary s = Summarize({42});
  EXPECT_FALSE(s.ci95.has_value());
  EXPECT_EQ(s.median, 42);
  EXPECT_EQ(Summarize({}).n, 0);
}

TEST(StudentT95, KnownQuantiles) {
  EXPECT_DOUBLE_EQ(StudentT95(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT95(10), 2.228);
  EXPECT_DOUBLE_EQ(StudentT95(1000), 1.960);
}

}  // namespace
}  // namespace writelab
