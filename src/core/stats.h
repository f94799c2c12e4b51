// SPDX-License-Identifier: MIT
// Summaries of repeated trials: a figure measured N times is reported as its
// median with min, max, mean and a 95% confidence interval of the mean
// (Student's t, two-sided). With one trial there is no interval: ci is empty
// and reporters say that one trial cannot tell.
#pragma once

#include <optional>
#include <vector>

namespace writelab {

struct Interval {
  double low = 0;
  double high = 0;
};

struct Summary {
  int n = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  std::optional<Interval> ci95;
  std::vector<double> samples;  // in trial order
};

Summary Summarize(std::vector<double> samples);

// Two-sided 95% Student t quantile for the given degrees of freedom (>= 1).
double StudentT95(int degrees_of_freedom);

}  // namespace writelab
