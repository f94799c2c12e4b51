// SPDX-License-Identifier: MIT
// Whether two sets of trials differ, for `writelab compare`: the two-sided
// Mann-Whitney U test (exact by enumeration for up to 20 trials in all,
// else the normal approximation with the tie correction), which assumes no
// distribution and suits small, skewed samples such as throughput with
// first-touch outliers; and a percentile bootstrap of the ratio of the
// medians (B / A) for the change's 95% interval. docs/report.md explains.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace writelab {

// Two-sided p-value that a and b come from the same distribution; 1 when
// either is empty.
double MannWhitneyP(std::span<const double> a, std::span<const double> b);

// The smallest p-value MannWhitneyP can give for samples of these sizes
// (untied): with 2 and 2 trials it is 1/3, so no difference can be shown.
double SmallestMannWhitneyP(size_t na, size_t nb);

struct RatioInterval {
  double low = 0, high = 0;  // B's median / A's median, 2.5th and 97.5th percentile
};

// Percentile bootstrap (resamples of each side, fixed seed: the same input
// gives the same interval); nullopt when a side is empty or A's medians can
// be 0.
std::optional<RatioInterval> BootstrapMedianRatio(std::span<const double> a,
                                                  std::span<const double> b, int resamples = 4000,
                                                  uint64_t seed = 2009);

}  // namespace writelab
