// SPDX-License-Identifier: MIT
// Change points in a series of benchmark figures (one value per run, oldest
// first): the runs after which the figure moved to a new level and stayed
// there, as opposed to noise from run to run. After Hunter and Apache Otava
// (DataStax, "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", ICPE 2023): E-divisive means (Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of Multivariate
// Data", JASA 2014) with the permutation test replaced by a t-test, so that
// the answer is deterministic. Two steps:
//
//  1. Split. A segment is cut where the energy distance between the points
//     before and after the cut (alpha = 1, weighted by n m / (n + m)) is
//     largest, searched with all the segment's points each side, then half
//     as many, and so on down to min_segment; the cut of the scale whose
//     t-test is strongest is taken, if its p (times the number of scales)
//     is below 10 * max_p (at most 0.05), and both halves are split again.
//     This step only proposes; it may propose too many.
//  2. Merge. Each candidate is placed again where the energy distance peaks
//     between its neighbouring candidates and tested against the points
//     between them; the weakest that fails (p >= max_p, or |change_pct| <
//     min_relative) is dropped, its neighbours are placed and tested again
//     over the longer segments, and so on until every candidate passes.
//
// The small scales of step 1 find a short excursion (a step up, then down 6
// runs later) that one test over a long segment would average away; step 2
// then judges each change against its own neighbours only.
//
// The test is Student's (pooled variance), whose p is exact for normal noise
// when nothing changed, times the number of places the cut could have taken
// between its neighbours (Bonferroni), since the cut is the best of those
// places. Without that factor 1.9% of stationary series of 40 runs show a
// change at max_p 0.001; with it (measured at the defaults), 0.075% of
// series of 40 runs, 0.125% of 200 and 0.5% of 1000. The price is power:
// with 40 runs, a step is found reliably (F1 0.97, within one run) once it
// is about 3 noise standard deviations, and a 1-sd step mostly not at all.
//
// Not incremental (as Ingo et al., ICPE 2025, make Otava's on each new run):
// at the cost below, a new run means a new call.
//
// Pure: no I/O, no randomness, no state. Cost: O(n log n) per scale per
// segment split (Fenwick trees keep the sums of absolute differences over
// sliding windows); 50 series of 1000 runs take about 0.2 s on one core
// (0.35 s with a change every 20 runs).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace writelab {

struct ChangePointOptions {
  // A change is reported when the test between the points before and after
  // it gives p below this (p as described above: for the whole stretch
  // between the neighbouring changes, not for one fixed place).
  double max_p = 0.001;
  // Fewest points on each side of a change (values below 2 are taken as 2:
  // a side needs two points for a variance). Also the shortest excursion
  // that can be told from noise.
  size_t min_segment = 3;
  // Most points considered on each side of a candidate, for the distance, the
  // tests and the reported means; 0: all points up to the neighbouring
  // change (or the series' ends).
  size_t window = 0;
  // Smallest |change_pct| reported, in percent (2.0: changes under 2% are
  // dropped however significant).
  double min_relative = 0.0;
};

struct ChangePoint {
  size_t index = 0;  // the first point after the change
  // Means of the points tested on each side: from the previous change (or the
  // start, or `window` points back) to index, and from index to the next
  // change (or the end, or `window` points on).
  double before_mean = 0, after_mean = 0;
  // 100 * (after_mean - before_mean) / |before_mean|, and its 95% interval
  // from Welch's t (the variance may change with the level; before_mean is
  // taken as exact). With before_mean 0 these are +-infinity by the sign of
  // the change.
  double change_pct = 0, ci_low_pct = 0, ci_high_pct = 0;
  // Student's two-sided p for the points described above, times the places
  // the change could have taken between its neighbours (at most 1).
  double p_value = 1;
  size_t before_n = 0, after_n = 0;
};

// The change points of series, in index order. Empty when the series is
// shorter than 2 * min_segment, is constant, or holds a non-finite value
// (NaN or infinity: no level can be told for it). Never NaN in the result.
std::vector<ChangePoint> FindChangePoints(std::span<const double> series,
                                          const ChangePointOptions& options = {});

// E-divisive's cut of the whole series: the index that maximises
//   q = n m / (n + m) * (2/(n m) sum|x - y| - sum|x - x'| / C(n, 2)
//                        - sum|y - y'| / C(m, 2))
// over the n points x before it and the m points y from it on, at least
// min_segment (2 or more) and at most window (0: all) each side. 0 when no
// cut scores above 0 (a constant series) or the series is too short.
size_t EnergyCut(std::span<const double> series, size_t min_segment, size_t window = 0);

// Two-sample t-tests of mean(b) - mean(a). A side with fewer than two
// values gives p = 1. Both sides constant: p = 1 when their values are
// equal, else 0 (t infinite); one side constant is fine.
struct TTest {
  double mean_a = 0, mean_b = 0;
  double diff = 0;  // mean_b - mean_a
  double se = 0;    // standard error of diff
  double df = 0;    // degrees of freedom
  double t = 0;
  double p = 1;  // two-sided
};
// Welch's: unequal variances, Welch-Satterthwaite degrees of freedom.
TTest WelchTTest(std::span<const double> a, std::span<const double> b);
// Student's: one pooled variance, na + nb - 2 degrees of freedom.
TTest StudentTTest(std::span<const double> a, std::span<const double> b);

// P(T <= t) for Student's t with df > 0 degrees of freedom (need not be
// whole), through the regularized incomplete beta function.
double StudentTCdf(double t, double df);

// The t for which StudentTCdf(t, df) == prob, for 0 < prob < 1.
double StudentTQuantile(double prob, double df);

// I_x(a, b) for a, b > 0 and 0 <= x <= 1 (DLMF 8.17.2), by its continued
// fraction (DLMF 8.17.22), to about 1e-13.
double RegularizedIncompleteBeta(double a, double b, double x);

}  // namespace writelab
