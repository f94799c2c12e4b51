// SPDX-License-Identifier: MIT
#include "core/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace writelab {
namespace {

// The exact nearest-rank percentile of sorted samples.
uint64_t Exact(const std::vector<uint64_t>& sorted, double p) {
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

void ExpectWithinBound(std::vector<uint64_t> samples, const char* what) {
  Histogram h;
  for (uint64_t v : samples) h.Record(v);
  std::sort(samples.begin(), samples.end());
  for (double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    double exact = static_cast<double>(Exact(samples, p));
    double got = static_cast<double>(h.Percentile(p));
    EXPECT_LE(std::fabs(got - exact), exact * Histogram::kMaxRelativeError + 0.5)
        << what << " p" << p << ": exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.count(), samples.size());
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
}

TEST(Histogram, StatedBoundIsBelowOnePercent) { EXPECT_LT(Histogram::kMaxRelativeError, 0.01); }

TEST(Histogram, ErrorBoundHoldsOnSeveralDistributions) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> uniform, lognormal, bimodal, exponential;
  std::uniform_int_distribution<uint64_t> u(1, 50'000'000);
  std::lognormal_distribution<double> ln(10.0, 2.0);
  std::exponential_distribution<double> ex(1.0 / 200'000);
  std::normal_distribution<double> fast(800, 50), slow(40e6, 5e6);
  for (int i = 0; i < 200'000; ++i) {
    uniform.push_back(u(rng));
    lognormal.push_back(static_cast<uint64_t>(ln(rng)) + 1);
    exponential.push_back(static_cast<uint64_t>(ex(rng)) + 1);
    bimodal.push_back(static_cast<uint64_t>(std::max(1.0, i % 10 ? fast(rng) : slow(rng))));
  }
  ExpectWithinBound(uniform, "uniform");
  ExpectWithinBound(lognormal, "lognormal");
  ExpectWithinBound(exponential, "exponential");
  ExpectWithinBound(bimodal, "bimodal");
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 0; v < 64; ++v) h.Record(v);
  for (uint64_t v = 0; v < 64; ++v) EXPECT_EQ(Histogram::BucketMid(Histogram::Index(v)), v);
  EXPECT_EQ(h.Percentile(50), 31u);
}

TEST(Histogram, DoesNotSaturateAtAnHourOrBeyond) {
  Histogram h;
  const uint64_t hour = 3600ull * 1'000'000'000ull;
  h.Record(1);
  h.Record(hour);
  h.Record(UINT64_MAX);
  EXPECT_EQ(h.max(), UINT64_MAX);
  uint64_t p66 = h.Percentile(66);
  EXPECT_NEAR(static_cast<double>(p66), static_cast<double>(hour),
              static_cast<double>(hour) * Histogram::kMaxRelativeError);
  EXPECT_LT(Histogram::Index(UINT64_MAX), Histogram::kBuckets);
  EXPECT_NE(Histogram::Index(hour), Histogram::Index(hour * 2));
}

TEST(Histogram, BucketsAreContiguousAndMonotonic) {
  for (int i = 1; i < Histogram::kBuckets; ++i) {
    ASSERT_GT(Histogram::BucketLow(i), Histogram::BucketLow(i - 1)) << i;
    ASSERT_EQ(Histogram::Index(Histogram::BucketLow(i)), i) << i;
    ASSERT_EQ(Histogram::Index(Histogram::BucketLow(i) - 1), i - 1) << i;
  }
}

TEST(Histogram, MergeEqualsRecordingEverything) {
  std::mt19937_64 rng(3);
  Histogram a, b, all;
  for (int i = 0; i < 10'000; ++i) {
    uint64_t v = rng() % 1'000'000'000;
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  EXPECT_NEAR(a.stddev(), all.stddev(), all.stddev() * 1e-9);
  for (double p : {50.0, 99.0, 99.9}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));
}

TEST(Histogram, MeanAndStddevAreExact) {
  Histogram h;
  for (uint64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) h.Record(v);
  EXPECT_DOUBLE_EQ(h.mean(), 5.0);
  EXPECT_DOUBLE_EQ(h.stddev(), 2.0);
}

TEST(Histogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(99), 0u);
  EXPECT_EQ(h.min(), 0u);
}

TEST(Histogram, APercentileNeedsASampleAboveIt) {
  EXPECT_EQ(Histogram::SamplesFor(50), 2u);
  EXPECT_EQ(Histogram::SamplesFor(90), 10u);
  EXPECT_EQ(Histogram::SamplesFor(99), 100u);
  EXPECT_EQ(Histogram::SamplesFor(99.9), 1000u);
  Histogram h;
  EXPECT_FALSE(h.SupportedPercentile(50));
  for (uint64_t v = 1; v <= 99; ++v) h.Record(v * 1000);
  EXPECT_TRUE(h.SupportedPercentile(90));
  EXPECT_FALSE(h.SupportedPercentile(99)) << "p99 of 99 samples is only the maximum";
  h.Record(100'000);
  ASSERT_TRUE(h.SupportedPercentile(99));
  EXPECT_EQ(*h.SupportedPercentile(99), h.Percentile(99));
  EXPECT_FALSE(h.SupportedPercentile(99.9));
}

}  // namespace
}  // namespace writelab
