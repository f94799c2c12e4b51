// SPDX-License-Identifier: MIT
#include "history/changepoint.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace writelab {
namespace {

// The split step proposes a cut at this many times max_p (capped at
// kMaxSplitP): it only proposes, the merge step decides at max_p. Looser
// here finds more of the close pairs, at the cost of more candidates to test.
constexpr double kSplitPFactor = 10;
constexpr double kMaxSplitP = 0.05;

// The continued fraction of I_x(a, b) (DLMF 8.17.22) by the modified Lentz
// method: 1 / (1 + d1 / (1 + d2 / (1 + ...))), where
//   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),
//   d(2m)   = m(b-m) x / ((a+2m-1)(a+2m)).
// It converges fast for x < (a+1)/(a+b+2); the caller uses the symmetry
// I_x(a, b) = 1 - I_(1-x)(b, a) for larger x.
double BetaFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  double f = kTiny, c = kTiny, d = 0;
  for (int j = 1; j <= 2000; ++j) {
    double term = 1;  // the first numerator
    if (j > 1) {
      const int k = j - 1;
      const double m = static_cast<double>(k / 2);
      term = k % 2 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                   : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    }
    d = 1 + term * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    d = 1 / d;
    c = 1 + term / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return f;
}

// log Gamma(x) for x > 0. glibc's lgamma also writes the global signgam,
// which would make two threads finding change points a data race.
double LogGamma(double x) {
#if defined(__GLIBC__)
  int sign = 0;
  return lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

// I_x(a, b) given both x and y = 1 - x, so that neither loses digits to the
// subtraction (y is t^2 / (df + t^2) for Student's t).
double IncompleteBeta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const double log_front =
      a * std::log(x) + b * std::log(y) + LogGamma(a + b) - LogGamma(a) - LogGamma(b);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * BetaFraction(a, b, x) / a;
  return 1 - std::exp(log_front) * BetaFraction(b, a, y) / b;
}

// P(|T| >= |t|) for Student's t with df degrees of freedom.
double TwoSidedP(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return 1;
  if (std::isinf(t)) return 0;
  const double t2 = t * t;
  return std::clamp(IncompleteBeta(df / 2, 0.5, df / (df + t2), t2 / (df + t2)), 0.0, 1.0);
}

// Means (into r) and sample variances of a and b, about a[0] so that a
// constant side is exactly constant (mean its value, variance 0) whatever its
// length. False when a side has fewer than two values.
bool Moments(std::span<const double> a, std::span<const double> b, TTest& r, double& var_a,
             double& var_b) {
  if (a.size() < 2 || b.size() < 2) return false;
  const double shift = a[0];
  auto moments = [shift](std::span<const double> s, double& var) {
    double sum = 0;
    for (double v : s) sum += v - shift;
    const double local = sum / static_cast<double>(s.size());
    double squares = 0;
    for (double v : s) squares += (v - shift - local) * (v - shift - local);
    var = squares / static_cast<double>(s.size() - 1);
    return local;
  };
  const double local_a = moments(a, var_a), local_b = moments(b, var_b);
  r.mean_a = shift + local_a;
  r.mean_b = shift + local_b;
  r.diff = local_b - local_a;
  return true;
}

TTest BothConstant(TTest r, double df) {
  r.df = df;
  r.t = r.diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.diff);
  r.p = r.diff == 0 ? 1 : 0;
  return r;
}

TTest Finish(TTest r, double se, double df) {
  r.se = se;
  r.df = df;
  r.t = r.diff / se;
  r.p = TwoSidedP(r.t, df);
  return r;
}

// 100 * change / |base|, +-infinity (by the sign of change) for base 0.
double Percent(double change, double base) {
  if (base != 0) return 100 * change / std::fabs(base);
  if (change == 0) return 0;
  return std::copysign(std::numeric_limits<double>::infinity(), change);
}

struct Range {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// The sum of |v_i - v_j| over the pairs of a window [begin, end) of values
// that only moves right (both ends non-decreasing). A point's distance to all
// points in the window is read from two Fenwick trees over the values' ranks
// (count and sum of the values at or below it), so each step is O(log n)
// rather than O(window).
class PairSums {
 public:
  PairSums(std::span<const double> values, std::span<const size_t> rank)
      : values_(values),
        rank_(rank),
        count_tree_(values.size() + 1, 0),
        sum_tree_(values.size() + 1, 0) {}

  void MoveTo(size_t begin, size_t end) {
    if (count_ == 0) begin_ = end_ = begin;
    for (; end_ < end; ++end_) {
      pairs_ += Distances(end_);
      Update(end_, +1);
    }
    for (; begin_ < begin; ++begin_) {
      Update(begin_, -1);
      pairs_ -= Distances(begin_);
    }
  }

  // Never below 0, whatever the rounding of many steps.
  double sum() const { return std::max(pairs_, 0.0); }

 private:
  // Sum of |v_i - v_j| over the points j now in the window.
  double Distances(size_t i) const {
    const double v = values_[i];
    double below_sum = 0;
    long below = 0;
    for (size_t k = rank_[i] + 1; k > 0; k -= k & (~k + 1)) {
      below += count_tree_[k];
      below_sum += sum_tree_[k];
    }
    const double above = static_cast<double>(count_ - below);
    return v * static_cast<double>(below) - below_sum + (total_ - below_sum) - v * above;
  }

  void Update(size_t i, int sign) {
    const double v = values_[i];
    for (size_t k = rank_[i] + 1; k < count_tree_.size(); k += k & (~k + 1)) {
      count_tree_[k] += sign;
      sum_tree_[k] += sign * v;
    }
    count_ += sign;
    total_ += sign * v;
  }

  std::span<const double> values_;
  std::span<const size_t> rank_;
  std::vector<long> count_tree_;
  std::vector<double> sum_tree_;
  size_t begin_ = 0, end_ = 0;
  long count_ = 0;
  double total_ = 0;
  double pairs_ = 0;
};

// The side windows of a cut at `at` inside `segment`: up to `window` points
// each side (all when 0).
Range Before(Range segment, size_t at, size_t window) {
  if (window == 0 || at - segment.begin <= window) return {segment.begin, at};
  return {at - window, at};
}
Range After(Range segment, size_t at, size_t window) {
  if (window == 0 || segment.end - at <= window) return {at, segment.end};
  return {at, at + window};
}

// A segment's values (the series less its median, so that the sums keep
// their digits for large figures) and their ranks, for BestCut.
struct RankedSegment {
  Range range;
  std::span<const double> values;
  std::vector<size_t> rank;
};

RankedSegment Rank(std::span<const double> centered, Range range) {
  RankedSegment s{range, centered.subspan(range.begin, range.size()), {}};
  std::vector<size_t> order(range.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return s.values[x] < s.values[y]; });
  s.rank.resize(order.size());
  for (size_t r = 0; r < order.size(); ++r) s.rank[order[r]] = r;
  return s;
}

// EnergyCut (changepoint.h) of a segment, up to `scale` points each side
// (0: all). Three windows slide right as the cut does: before it, after it,
// and both; the pairs across the cut are those of both less those of each.
// O(n log n) for any scale.
size_t BestCut(const RankedSegment& s, size_t min_segment, size_t scale) {
  PairSums left(s.values, s.rank), right(s.values, s.rank), both(s.values, s.rank);
  const Range local{0, s.values.size()};
  double best_q = 0;
  size_t best = 0;
  for (size_t at = min_segment; at + min_segment <= s.values.size(); ++at) {
    const Range x = Before(local, at, scale), y = After(local, at, scale);
    left.MoveTo(x.begin, x.end);
    right.MoveTo(y.begin, y.end);
    both.MoveTo(x.begin, y.end);
    const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size());
    const double cross = both.sum() - left.sum() - right.sum();
    const double energy =
        2 * cross / (n * m) - 2 * left.sum() / (n * (n - 1)) - 2 * right.sum() / (m * (m - 1));
    const double q = n * m / (n + m) * energy;
    if (q > best_q) best_q = q, best = at;
  }
  return best == 0 ? 0 : s.range.begin + best;
}

// Whether the two sides differ: Student's test, which is exact (for normal
// noise) under the hypothesis that nothing changed, since then both sides
// share one variance. Welch's test is too bold for this: the cut with the
// largest distance is often where a side of 3 points happens to sit tight,
// Welch trusts that side's small variance, and 1.3% of stationary series of
// 40 show a change at max_p 0.001 (0.075% with Student's). It is also too
// timid for a short step of 6 runs (5 degrees of freedom however long the
// series). Welch gives the change's interval instead (Describe): once there
// is a change, the variance may have changed with it.
TTest TestSides(std::span<const double> series, Range before, Range after) {
  return StudentTTest(series.subspan(before.begin, before.size()),
                      series.subspan(after.begin, after.size()));
}

struct Cut {
  size_t at = 0;  // 0: none
  double p = 1;   // of the test over the points the cut was chosen from
};

// The best cut of a segment over the scales tried: E-divisive's cut with all
// of the segment (or `window` points) each side, then half as many points,
// and so on down to min_segment, each tested over its own points; the one
// with the smallest p. A short step (up, then down 6 runs later) inside a
// long segment shows only at the small scales: over the whole segment the
// distance peaks wherever the noise puts it.
Cut BestCutOverScales(std::span<const double> series, const RankedSegment& s, size_t min_segment,
                      size_t window) {
  Cut best;
  size_t scale = window >= s.range.size() ? 0 : window, scales = 0;
  while (true) {
    ++scales;
    if (const size_t at = BestCut(s, min_segment, scale); at != 0) {
      const double p = TestSides(series, Before(s.range, at, scale), After(s.range, at, scale)).p;
      if (best.at == 0 || p < best.p) best = {at, p};
    }
    scale = (scale == 0 ? s.range.size() : scale) / 2;
    if (scale < min_segment) break;
  }
  best.p = std::min(1.0, best.p * static_cast<double>(scales));  // the best of `scales` tries
  return best;
}

// Step 1: the candidates, in index order.
std::vector<size_t> Split(std::span<const double> series, std::span<const double> centered,
                          size_t min_segment, size_t window, double split_p) {
  std::vector<size_t> cuts;
  std::vector<Range> pending = {{0, series.size()}};
  while (!pending.empty()) {
    const Range segment = pending.back();
    pending.pop_back();
    if (segment.size() < 2 * min_segment) continue;
    const Cut cut = BestCutOverScales(series, Rank(centered, segment), min_segment, window);
    if (cut.at == 0 || !(cut.p < split_p)) continue;
    cuts.push_back(cut.at);
    pending.push_back({segment.begin, cut.at});
    pending.push_back({cut.at, segment.end});
  }
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

struct Candidate {
  size_t index = 0;
  Range before, after;
  TTest test;
  double change_pct = 0;
};

// Step 2: the candidates in index order, each placed where E-divisive puts
// the cut between its neighbours and tested against them; the weakest that
// fails is dropped and its neighbours placed and tested again over the
// segments it joined, until none fails. Placing again mends a cut that the
// split step made one run off at a scale that mixed both sides.
class Merger {
 public:
  Merger(std::span<const double> series, std::span<const double> centered,
         const ChangePointOptions& options, size_t min_segment)
      : series_(series), centered_(centered), options_(options), min_segment_(min_segment) {}

  std::vector<Candidate> Run(const std::vector<size_t>& cuts) {
    kept_.resize(cuts.size());
    for (size_t k = 0; k < cuts.size(); ++k) kept_[k].index = cuts[k];
    for (size_t k = 0; k < kept_.size(); ++k) Place(k);
    for (size_t k = 0; k < kept_.size(); ++k) Test(k);
    while (true) {
      size_t worst = kept_.size();
      for (size_t k = 0; k < kept_.size(); ++k)
        if (Fails(kept_[k]) && (worst == kept_.size() || Weaker(kept_[k], kept_[worst]))) worst = k;
      if (worst == kept_.size()) return std::move(kept_);
      kept_.erase(kept_.begin() + static_cast<long>(worst));
      // The two that met, then the two whose neighbour they are (an index
      // that wrapped below 0 is past the end, and skipped).
      for (size_t k : {worst - 1, worst})
        if (k < kept_.size()) Place(k), Test(k);
      for (size_t k : {worst - 2, worst + 1})
        if (k < kept_.size()) Test(k);
    }
  }

 private:
  size_t Previous(size_t k) const { return k ? kept_[k - 1].index : 0; }
  size_t Next(size_t k) const { return k + 1 < kept_.size() ? kept_[k + 1].index : series_.size(); }

  void Place(size_t k) {
    const Range between{Previous(k), Next(k)};
    if (between.size() < 2 * min_segment_) return;
    const size_t at = BestCut(Rank(centered_, between), min_segment_, options_.window);
    if (at != 0) kept_[k].index = at;
  }

  // Its p is multiplied by the number of places the cut could have taken
  // between its neighbours (Bonferroni): the cut is the best of them, and
  // without the factor 1.9% of stationary series of 40 show a change at
  // max_p 0.001.
  void Test(size_t k) {
    Candidate& c = kept_[k];
    const Range between{Previous(k), Next(k)};
    c.before = Before(between, c.index, options_.window);
    c.after = After(between, c.index, options_.window);
    c.test = TestSides(series_, c.before, c.after);
    const size_t places = between.size() + 1 - 2 * min_segment_;
    c.test.p = std::min(1.0, c.test.p * static_cast<double>(std::max<size_t>(places, 1)));
    c.change_pct = Percent(c.test.diff, c.test.mean_a);
  }

  bool Fails(const Candidate& c) const {
    return !(c.test.p < options_.max_p) || std::fabs(c.change_pct) < options_.min_relative;
  }

  static bool Weaker(const Candidate& a, const Candidate& b) {
    if (a.test.p != b.test.p) return a.test.p > b.test.p;
    return std::fabs(a.change_pct) < std::fabs(b.change_pct);
  }

  std::span<const double> series_, centered_;
  const ChangePointOptions options_;
  size_t min_segment_;
  std::vector<Candidate> kept_;
};

// The series less its median: the sums of distances then keep their digits
// for figures such as 1.2e9 bytes/s that move by a few percent.
std::vector<double> Centered(std::span<const double> series) {
  std::vector<double> out(series.begin(), series.end());
  if (out.empty()) return out;
  std::nth_element(out.begin(), out.begin() + static_cast<long>(out.size() / 2), out.end());
  const double median = out[out.size() / 2];
  for (size_t i = 0; i < series.size(); ++i) out[i] = series[i] - median;
  return out;
}

ChangePoint Describe(std::span<const double> series, const Candidate& c) {
  const TTest welch = WelchTTest(series.subspan(c.before.begin, c.before.size()),
                                 series.subspan(c.after.begin, c.after.size()));
  ChangePoint p;
  p.index = c.index;
  p.before_mean = c.test.mean_a;
  p.after_mean = c.test.mean_b;
  p.change_pct = c.change_pct;
  const double half = welch.se > 0 ? StudentTQuantile(0.975, welch.df) * welch.se : 0;
  p.ci_low_pct = Percent(welch.diff - half, welch.mean_a);
  p.ci_high_pct = Percent(welch.diff + half, welch.mean_a);
  p.p_value = c.test.p;
  p.before_n = c.before.size();
  p.after_n = c.after.size();
  return p;
}

}  // namespace

size_t EnergyCut(std::span<const double> series, size_t min_segment, size_t window) {
  min_segment = std::max<size_t>(min_segment, 2);
  if (series.size() / 2 < min_segment) return 0;
  const std::vector<double> centered = Centered(series);
  return BestCut(Rank(centered, {0, series.size()}), min_segment, window);
}

double RegularizedIncompleteBeta(double a, double b, double x) {
  return IncompleteBeta(a, b, x, 1 - x);
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double tail = TwoSidedP(t, df) / 2;
  return t > 0 ? 1 - tail : tail;
}

double StudentTQuantile(double prob, double df) {
  if (!(prob > 0 && prob < 1) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (prob == 0.5) return 0;
  // Bisection on the two-sided p of |t|, which falls from 1 at t = 0.
  const double target = 2 * std::min(prob, 1 - prob);
  double low = 0, high = 1;
  while (TwoSidedP(high, df) > target && high < 1e300) low = high, high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-15 * high; ++i) {
    const double mid = (low + high) / 2;
    (TwoSidedP(mid, df) > target ? low : high) = mid;
  }
  const double t = (low + high) / 2;
  return prob > 0.5 ? t : -t;
}

TTest WelchTTest(std::span<const double> a, std::span<const double> b) {
  TTest r;
  double var_a = 0, var_b = 0;
  if (!Moments(a, b, r, var_a, var_b)) return r;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double va = var_a / na, vb = var_b / nb, v = va + vb;
  if (!(v > 0)) return BothConstant(r, na + nb - 2);
  const double share_a = va / v, share_b = vb / v;  // as shares: no underflow
  return Finish(r, std::sqrt(v), 1 / (share_a * share_a / (na - 1) + share_b * share_b / (nb - 1)));
}

TTest StudentTTest(std::span<const double> a, std::span<const double> b) {
  TTest r;
  double var_a = 0, var_b = 0;
  if (!Moments(a, b, r, var_a, var_b)) return r;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double pooled = (var_a * (na - 1) + var_b * (nb - 1)) / (na + nb - 2);
  if (!(pooled > 0)) return BothConstant(r, na + nb - 2);
  return Finish(r, std::sqrt(pooled * (1 / na + 1 / nb)), na + nb - 2);
}

std::vector<ChangePoint> FindChangePoints(std::span<const double> series,
                                          const ChangePointOptions& options) {
  const size_t min_segment = std::max<size_t>(options.min_segment, 2);
  if (series.size() / 2 < min_segment) return {};  // also keeps 2 * min_segment from wrapping
  if (!std::all_of(series.begin(), series.end(), [](double v) { return std::isfinite(v); }))
    return {};
  const std::vector<double> centered = Centered(series);
  const double split_p = std::min(kMaxSplitP, options.max_p * kSplitPFactor);
  const std::vector<size_t> cuts = Split(series, centered, min_segment, options.window, split_p);
  std::vector<ChangePoint> out;
  for (const Candidate& c : Merger(series, centered, options, min_segment).Run(cuts))
    out.push_back(Describe(series, c));
  return out;
}

}  // namespace writelab
