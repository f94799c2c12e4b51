// SPDX-License-Identifier: MIT
// Whether a percentile of a latency moved between two runs, from the
// histograms merged over each run's trials (core/result.h's Latency buckets):
// the tails compare and history check test beside the per-trial medians.
//
// The test is Mood's median test carried to any quantile: pool both
// histograms, find the pooled p-th percentile t, count each side's calls
// above t, and test the 2 x 2 table (Fisher's exact test, or the two-
// proportion z-test with continuity correction when the exact sum would be
// long). It assumes no distribution but treats every call as an
// independent sample, so it sees a run's calls, not its trials: a machine
// whose tail drifts from trial to trial shows in the per-trial percentile
// figures (p99_ms per trial, tested by Mann-Whitney), not here.
//
// Each side's percentile has a 95% order-statistic interval (the ranks
// n p -+ 1.96 sqrt(n p (1 - p))); the change's interval is B's interval
// over A's, a conservative bound (wider than 95%). A side with fewer than
// kTailBeyond expected calls above the percentile is not tested: p99 needs
// 1000 calls a side, p99.9 10000 (docs/report.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/result.h"

namespace writelab {

// Fewest calls each side must expect above a percentile for it to be tested.
inline constexpr double kTailBeyond = 10;

// The percentiles tested, and the level each is tested at: 0.05 over the
// three (Bonferroni), so that two runs of the same machine are called
// different on one of them at most 5% of the time.
inline constexpr double kTailPercentiles[] = {50.0, 99.0, 99.9};
inline constexpr double kTailLevel = 0.05 / 3;

struct TailTest {
  double percentile = 0;                    // 99.0
  uint64_t n_a = 0, n_b = 0;                // calls
  uint64_t a_ns = 0, b_ns = 0;              // each side's percentile
  double beyond_a = 0, beyond_b = 0;        // calls each side has above it (n (1 - p))
  std::optional<double> p;                  // nullopt: too few calls to test
  std::optional<double> change_pct;         // 100 (b - a) / a
  std::optional<double> low_pct, high_pct;  // the change's conservative interval
  bool significant = false;                 // p < kTailLevel
  // Why there is no test: "too few calls for p99.9 (needs 10000 a side; A 5000, B 5000)".
  std::string why_not;
};

// The percentile (0..100) of one histogram, nearest rank over its buckets,
// each bucket read at the middle of its range and clamped to min and max.
uint64_t BucketPercentile(std::span<const Latency::Bucket> buckets, double percentile,
                          uint64_t min_ns, uint64_t max_ns);

// The test of one percentile between two merged latencies.
TailTest CompareTail(const Latency& a, const Latency& b, double percentile);

// Two-sided p of Fisher's exact test on the 2 x 2 table [[x, n1 - x], [y,
// n2 - y]] (the z-test with continuity correction past a million terms).
double TwoByTwoP(uint64_t x, uint64_t n1, uint64_t y, uint64_t n2);

}  // namespace writelab
