// SPDX-License-Identifier: MIT
#include "history/changepoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace writelab {
namespace {

// A normal deviate from two uniform ones (Box-Muller), so that the series
// are the same on every standard library (std::normal_distribution is not).
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

struct Synthetic {
  std::vector<double> values;
  std::vector<size_t> changes;  // injected: the first run at the new level
};

// 40 runs of a figure of 1000 with normal noise of cv * 1000; with a step of
// `step` (a fraction, up for even seeds, down for odd) at a run drawn from
// 10..30.
Synthetic MakeSeries(uint64_t seed, double step, double cv, size_t length = 40) {
  std::mt19937_64 rng(seed);
  Synthetic s;
  const size_t at = length / 4 + rng() % (length / 2 + 1);
  const double sign = seed % 2 ? -1 : 1;
  if (step != 0) s.changes.push_back(at);
  for (size_t i = 0; i < length; ++i)
    s.values.push_back(1000 * (1 + (step != 0 && i >= at ? sign * step : 0)) +
                       1000 * cv * Normal(rng));
  return s;
}

// A run flagged within one run of an injected change finds it (each change
// found once); any other flag is a false alarm.
struct Score {
  size_t found = 0, false_alarms = 0, missed = 0;
  double Precision() const {
    return found + false_alarms
               ? static_cast<double>(found) / static_cast<double>(found + false_alarms)
               : 1;
  }
  double Recall() const {
    return found + missed ? static_cast<double>(found) / static_cast<double>(found + missed) : 1;
  }
  double F1() const {
    const double p = Precision(), r = Recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0;
  }
};

using Detector = std::function<std::vector<size_t>(std::span<const double>)>;

void Tally(const std::vector<size_t>& flagged, const std::vector<size_t>& truth, Score& score) {
  std::vector<bool> used(truth.size(), false);
  for (size_t f : flagged) {
    bool hit = false;
    for (size_t k = 0; k < truth.size() && !hit; ++k)
      if (!used[k] && f + 1 >= truth[k] && f <= truth[k] + 1) used[k] = hit = true;
    (hit ? score.found : score.false_alarms)++;
  }
  for (bool u : used) score.missed += !u;
}

std::vector<size_t> ChangePointRuns(std::span<const double> x) {
  std::vector<size_t> out;
  for (const ChangePoint& c : FindChangePoints(x)) out.push_back(c.index);
  return out;
}

// Naive 1: a run that differs from the previous one by more than 2 standard
// deviations of the whole series.
std::vector<size_t> PreviousRunJumps(std::span<const double> x) {
  double mean = 0, squares = 0;
  for (double v : x) mean += v / static_cast<double>(x.size());
  for (double v : x) squares += (v - mean) * (v - mean);
  const double sd = std::sqrt(squares / static_cast<double>(x.size() - 1));
  std::vector<size_t> out;
  for (size_t i = 1; i < x.size(); ++i)
    if (std::fabs(x[i] - x[i - 1]) > 2 * sd) out.push_back(i);
  return out;
}

// Naive 2: a run where the 5 runs from it differ from the 5 before by
// Welch's test at p < 0.001.
std::vector<size_t> SlidingTTest(std::span<const double> x) {
  constexpr size_t kRuns = 5;
  std::vector<size_t> out;
  for (size_t i = kRuns; i + kRuns <= x.size(); ++i)
    if (WelchTTest(x.subspan(i - kRuns, kRuns), x.subspan(i, kRuns)).p < 0.001) out.push_back(i);
  return out;
}

struct Evaluation {
  Score step10, step5, stationary;
};

// 100 series with a 10% step, 100 with 5%, 100 without (fixed seeds).
Evaluation Evaluate(const Detector& detect, double cv) {
  Evaluation e;
  for (uint64_t i = 0; i < 100; ++i) {
    const Synthetic a = MakeSeries(10000 + i, 0.10, cv);
    const Synthetic b = MakeSeries(20000 + i, 0.05, cv);
    const Synthetic c = MakeSeries(30000 + i, 0, cv);
    Tally(detect(a.values), a.changes, e.step10);
    Tally(detect(b.values), b.changes, e.step5);
    Tally(detect(c.values), c.changes, e.stationary);
  }
  return e;
}

void Print(const char* name, const Evaluation& e) {
  std::printf(
      "  %-20s 10%%: P %.2f R %.2f F1 %.2f | 5%%: P %.2f R %.2f F1 %.2f | %zu false "
      "alarms in 100 stationary\n",
      name, e.step10.Precision(), e.step10.Recall(), e.step10.F1(), e.step5.Precision(),
      e.step5.Recall(), e.step5.F1(), e.stationary.false_alarms);
}

// Hunter's evaluation, at noise of 3% of the figure: a 10% step is then 3.3
// noise standard deviations, which 40 runs can show.
TEST(ChangePointEvaluation, FindsStepsBetterThanComparingRuns) {
  const Evaluation cp = Evaluate(ChangePointRuns, 0.03);
  const Evaluation jumps = Evaluate(PreviousRunJumps, 0.03);
  const Evaluation sliding = Evaluate(SlidingTTest, 0.03);
  std::printf("noise 3%%, 40 runs, within 1 run:\n");
  Print("change points", cp);
  Print("previous run > 2 sd", jumps);
  Print("5 vs 5 runs t-test", sliding);
  EXPECT_GE(cp.step10.F1(), 0.9);
  EXPECT_LE(cp.stationary.false_alarms, 1u);
  for (const Evaluation* naive : {&jumps, &sliding}) {
    EXPECT_GT(cp.step10.F1(), naive->step10.F1());
    EXPECT_GT(cp.step5.F1(), naive->step5.F1());
    EXPECT_LT(cp.stationary.false_alarms, naive->stationary.false_alarms + 1);
  }
}

// At noise of 10% a 10% step is one standard deviation: even knowing where
// the step is and the noise exactly, a 20-vs-20 test at 1% false alarms
// finds it 72% of the time, and within one run far less often, so no method
// reaches F1 0.9 here. What must hold is that the method does not trade
// false alarms for it: it stays quiet on stationary series, and what it does
// report is mostly right, unlike the naive detectors.
TEST(ChangePointEvaluation, StaysQuietWhenNoiseHidesTheStep) {
  const Evaluation cp = Evaluate(ChangePointRuns, 0.10);
  const Evaluation jumps = Evaluate(PreviousRunJumps, 0.10);
  const Evaluation sliding = Evaluate(SlidingTTest, 0.10);
  std::printf("noise 10%%, 40 runs, within 1 run:\n");
  Print("change points", cp);
  Print("previous run > 2 sd", jumps);
  Print("5 vs 5 runs t-test", sliding);
  EXPECT_LE(cp.stationary.false_alarms, 1u);
  EXPECT_GT(jumps.stationary.false_alarms, 100u);
  EXPECT_GT(cp.step10.Precision(), jumps.step10.Precision());
  EXPECT_GT(cp.step10.Precision(), 0.5);
}

TEST(FindChangePoints, TwoCloseChangesAreBothFound) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> x;
    for (size_t i = 0; i < 40; ++i)
      x.push_back(100 * (i >= 17 && i < 23 ? 1.1 : 1.0) + 2 * Normal(rng));
    const std::vector<ChangePoint> found = FindChangePoints(x);
    ASSERT_EQ(found.size(), 2u) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(found[0].index), 17, 1) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(found[1].index), 23, 1) << "seed " << seed;
    EXPECT_GT(found[0].change_pct, 5);
    EXPECT_LT(found[1].change_pct, -5);
  }
}

// The case the small scales are for: over 1000 runs the energy distance of
// the whole series peaks wherever the noise puts it, not at a 6-run bump.
TEST(FindChangePoints, ShortExcursionInLongSeries) {
  std::mt19937_64 rng(7);
  std::vector<double> x;
  for (size_t i = 0; i < 1000; ++i)
    x.push_back(100 * (i >= 497 && i < 503 ? 1.1 : 1.0) + 1 * Normal(rng));
  const std::vector<ChangePoint> found = FindChangePoints(x);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 497u);
  EXPECT_EQ(found[1].index, 503u);
}

TEST(FindChangePoints, ShorterThanTwoSegmentsHasNone) {
  EXPECT_TRUE(FindChangePoints(std::vector<double>{1, 1, 9, 9, 9}).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>{}).empty());
  ChangePointOptions huge;
  huge.min_segment = SIZE_MAX / 2 + 1;  // 2 * min_segment would wrap to 0
  EXPECT_TRUE(FindChangePoints(std::vector<double>{1, 1, 1, 9, 9, 9}, huge).empty());
  EXPECT_EQ(EnergyCut(std::vector<double>{1, 1, 1, 9, 9, 9}, SIZE_MAX / 2 + 1), 0u);
  ChangePointOptions wide;
  wide.min_segment = 10;
  std::vector<double> x(19, 1.0);
  for (size_t i = 10; i < x.size(); ++i) x[i] = 5;
  EXPECT_TRUE(FindChangePoints(x, wide).empty());
  // Exactly two segments: one place to cut, and it is found.
  const auto six = FindChangePoints(std::vector<double>{1, 1, 1, 9, 9, 9});
  ASSERT_EQ(six.size(), 1u);
  EXPECT_EQ(six[0].index, 3u);
}

void ExpectNoNan(const ChangePoint& c) {
  for (double v :
       {c.before_mean, c.after_mean, c.change_pct, c.ci_low_pct, c.ci_high_pct, c.p_value})
    EXPECT_FALSE(std::isnan(v));
}

TEST(FindChangePoints, ConstantSeriesHasNone) {
  EXPECT_TRUE(FindChangePoints(std::vector<double>(100, 42.0)).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>(1000, 1.2e9)).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>(50, 0.1)).empty());  // sums of 0.1 round
  EXPECT_TRUE(FindChangePoints(std::vector<double>(50, 0.0)).empty());
}

TEST(FindChangePoints, ZeroVarianceOnOneSide) {
  std::mt19937_64 rng(3);
  std::vector<double> x(20, 5.0);
  for (size_t i = 0; i < 20; ++i) x.push_back(6 + 0.1 * Normal(rng));
  const auto found = FindChangePoints(x);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 20u);
  EXPECT_DOUBLE_EQ(found[0].before_mean, 5.0);
  EXPECT_LT(found[0].ci_low_pct, found[0].change_pct);
  EXPECT_GT(found[0].ci_high_pct, found[0].change_pct);
  ExpectNoNan(found[0]);
}

TEST(FindChangePoints, BothSidesConstant) {
  std::vector<double> x(20, 5.0);
  x.resize(40, 7.0);
  const auto found = FindChangePoints(x);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 20u);
  EXPECT_DOUBLE_EQ(found[0].change_pct, 40);
  EXPECT_DOUBLE_EQ(found[0].ci_low_pct, 40);  // no noise: no width
  EXPECT_DOUBLE_EQ(found[0].ci_high_pct, 40);
  EXPECT_EQ(found[0].p_value, 0);
  ExpectNoNan(found[0]);
}

TEST(FindChangePoints, FromZeroIsInfiniteNotNan) {
  std::vector<double> x(10, 0.0);
  x.resize(20, 1.0);
  const auto found = FindChangePoints(x);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 10u);
  EXPECT_EQ(found[0].change_pct, std::numeric_limits<double>::infinity());
  ExpectNoNan(found[0]);
}

TEST(FindChangePoints, NonFiniteValuesGiveNone) {
  std::vector<double> x(20, 1.0);
  x.resize(40, 2.0);
  x[5] = std::nan("");
  EXPECT_TRUE(FindChangePoints(x).empty());
  x[5] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(FindChangePoints(x).empty());
}

TEST(FindChangePoints, DescribesTheChange) {
  std::mt19937_64 rng(11);
  std::vector<double> x;
  for (size_t i = 0; i < 60; ++i) x.push_back((i < 25 ? 100 : 110) + Normal(rng));
  const auto found = FindChangePoints(x);
  ASSERT_EQ(found.size(), 1u);
  const ChangePoint& c = found[0];
  EXPECT_EQ(c.index, 25u);
  EXPECT_EQ(c.before_n, 25u);
  EXPECT_EQ(c.after_n, 35u);
  EXPECT_NEAR(c.before_mean, 100, 1);
  EXPECT_NEAR(c.after_mean, 110, 1);
  EXPECT_NEAR(c.change_pct, 100 * (c.after_mean - c.before_mean) / c.before_mean, 1e-9);
  EXPECT_LT(c.ci_low_pct, 10);
  EXPECT_GT(c.ci_high_pct, 10);
  EXPECT_GT(c.ci_low_pct, 8);
  EXPECT_LT(c.p_value, 1e-10);
}

TEST(FindChangePoints, WindowBoundsThePointsUsed) {
  std::mt19937_64 rng(5);
  std::vector<double> x;
  for (size_t i = 0; i < 3000; ++i)
    x.push_back((i < 1000 ? 100 : i < 2000 ? 110 : 104) + 2 * Normal(rng));
  ChangePointOptions options;
  options.window = 50;
  const auto found = FindChangePoints(x, options);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_NEAR(static_cast<double>(found[0].index), 1000, 1);
  EXPECT_NEAR(static_cast<double>(found[1].index), 2000, 1);
  for (const ChangePoint& c : found) {
    EXPECT_EQ(c.before_n, 50u);
    EXPECT_EQ(c.after_n, 50u);
  }
}

TEST(FindChangePoints, MinRelativeDropsSmallChanges) {
  std::mt19937_64 rng(9);
  std::vector<double> x;
  for (size_t i = 0; i < 40; ++i) x.push_back((i < 20 ? 100 : 103) + 0.3 * Normal(rng));
  EXPECT_EQ(FindChangePoints(x).size(), 1u);
  ChangePointOptions options;
  options.min_relative = 5;
  EXPECT_TRUE(FindChangePoints(x, options).empty());
}

// The sums of distances kept by Fenwick trees over sliding windows, against
// the formula summed pair by pair.
size_t BruteEnergyCut(const std::vector<double>& x, size_t min_segment, size_t window) {
  double best_q = 0;
  size_t best = 0;
  for (size_t at = min_segment; at + min_segment <= x.size(); ++at) {
    const size_t a = window && at > window ? at - window : 0;
    const size_t b = window && x.size() - at > window ? at + window : x.size();
    double cross = 0, left = 0, right = 0;
    for (size_t i = a; i < b; ++i)
      for (size_t j = i + 1; j < b; ++j)
        (j < at ? left : i >= at ? right : cross) += std::fabs(x[i] - x[j]);
    const double n = static_cast<double>(at - a), m = static_cast<double>(b - at);
    const double q = n * m / (n + m) *
                     (2 * cross / (n * m) - left / (n * (n - 1) / 2) - right / (m * (m - 1) / 2));
    if (q > best_q + 1e-9 * std::fabs(best_q)) best_q = q, best = at;
  }
  return best;
}

TEST(EnergyCut, MatchesThePairwiseSums) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> x(8 + rng() % 50);
    const double level = trial % 3 ? 1e6 : 0;
    for (double& v : x) v = rng() % 4 ? level + Normal(rng) : static_cast<double>(rng() % 3);
    const size_t min_segment = 2 + rng() % 3, window = trial % 2 ? 0 : 3 + rng() % 10;
    EXPECT_EQ(EnergyCut(x, min_segment, window), BruteEnergyCut(x, min_segment, window))
        << "trial " << trial;
  }
  EXPECT_EQ(EnergyCut(std::vector<double>(30, 2.0), 3), 0u);
  EXPECT_EQ(EnergyCut(std::vector<double>{1, 1, 1, 5, 5, 5, 5}, 3), 3u);
}

TEST(StudentT, KnownValues) {
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.5), 11.0 / 16, 1e-13);     // binomial sum
  EXPECT_NEAR(RegularizedIncompleteBeta(0.5, 0.5, 0.25), 1.0 / 3, 1e-13);  // arcsine law
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 0), 0);
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 1), 1);
  EXPECT_NEAR(StudentTCdf(0, 7.5), 0.5, 1e-15);
  EXPECT_NEAR(StudentTCdf(1, 1), 0.75, 1e-13);  // Cauchy: 1/2 + atan(1)/pi
  EXPECT_NEAR(StudentTCdf(-1, 2), 0.5 * (1 - 1 / std::sqrt(3.0)), 1e-13);  // closed form, df 2
  EXPECT_NEAR(StudentTCdf(2, 10), 0.963306, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.228139, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706205, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.025, 30), -2.042272, 1e-6);
  EXPECT_NEAR(StudentTCdf(StudentTQuantile(0.999, 3.7), 3.7), 0.999, 1e-12);
}

TEST(TTests, AgreeWithHandComputation) {
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {3, 4, 5, 6, 7, 8};
  // Means 3 and 5.5; variances 2.5 and 3.5.
  const TTest welch = WelchTTest(a, b);
  EXPECT_DOUBLE_EQ(welch.diff, 2.5);
  EXPECT_NEAR(welch.se, std::sqrt(2.5 / 5 + 3.5 / 6), 1e-12);
  const double va = 0.5, vb = 3.5 / 6;
  EXPECT_NEAR(welch.df, (va + vb) * (va + vb) / (va * va / 4 + vb * vb / 5), 1e-9);
  EXPECT_NEAR(welch.p, 2 * StudentTCdf(-welch.t, welch.df), 1e-12);
  const TTest student = StudentTTest(a, b);
  EXPECT_NEAR(student.se, std::sqrt((2.5 * 4 + 3.5 * 5) / 9 * (1.0 / 5 + 1.0 / 6)), 1e-12);
  EXPECT_EQ(student.df, 9);
  EXPECT_EQ(WelchTTest(std::vector<double>{1}, b).p, 1);
  EXPECT_EQ(StudentTTest(std::vector<double>{4, 4}, std::vector<double>{4, 4, 4}).p, 1);
  EXPECT_EQ(StudentTTest(std::vector<double>{4, 4}, std::vector<double>{5, 5, 5}).p, 0);
}

}  // namespace
}  // namespace writelab
