// SPDX-License-Identifier: MIT
#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace writelab {

double StudentT95(int df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  if (df <= 30) return kTable[df - 1];
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  return 1.960;
}

Summary Summarize(std::vector<double> samples) {
  Summary s;
  s.n = static_cast<int>(samples.size());
  s.samples = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (n >= 2) {
    double ss = 0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    double sd = std::sqrt(ss / static_cast<double>(n - 1));
    double half = StudentT95(static_cast<int>(n) - 1) * sd / std::sqrt(static_cast<double>(n));
    s.ci95 = Interval{s.mean - half, s.mean + half};
  }
  return s;
}

}  // namespace writelab
