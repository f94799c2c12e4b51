// SPDX-License-Identifier: MIT
#include "core/significance.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace writelab {
namespace {

// Ranks of all values pooled, ties given their average rank.
std::vector<double> PooledRanks(std::span<const double> a, std::span<const double> b) {
  std::vector<double> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return all[x] < all[y]; });
  std::vector<double> rank(all.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && all[order[j + 1]] == all[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) + 2) / 2;
    i = j + 1;
  }
  return rank;
}

// Exact: the share of all ways to choose na of the pooled ranks whose sum
// is at least as far from its mean as the observed one. Counted by dynamic
// programming over doubled ranks (integers, ties included): ways[k][s] is
// the number of k-subsets of the ranks seen so far whose doubled sum is s.
// O(n * na * n^2) instead of enumerating C(n, na) subsets.
double ExactP(const std::vector<double>& rank, size_t na, double observed) {
  const size_t n = rank.size();
  std::vector<size_t> doubled(n);
  size_t total_sum = 0;
  for (size_t i = 0; i < n; ++i) total_sum += doubled[i] = static_cast<size_t>(rank[i] * 2 + 0.5);
  std::vector<std::vector<double>> ways(na + 1, std::vector<double>(total_sum + 1, 0));
  ways[0][0] = 1;
  for (size_t i = 0; i < n; ++i)
    for (size_t k = std::min(na, i + 1); k >= 1; --k)
      for (size_t sum = total_sum; sum >= doubled[i]; --sum)  // doubled ranks are >= 2
        ways[k][sum] += ways[k - 1][sum - doubled[i]];
  const double mean = static_cast<double>(na) * static_cast<double>(n + 1);  // doubled
  const double dist = std::fabs(observed * 2 - mean) - 1e-9;
  double all = 0, extreme = 0;
  for (size_t sum = 0; sum <= total_sum; ++sum) {
    all += ways[na][sum];
    if (std::fabs(static_cast<double>(sum) - mean) >= dist) extreme += ways[na][sum];
  }
  return extreme / all;
}

double NormalP(const std::vector<double>& rank, size_t na, size_t nb, double observed) {
  const double n = static_cast<double>(na + nb);
  const double mean = static_cast<double>(na) * (n + 1) / 2;
  std::vector<double> sorted = rank;
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;  // sum of t^3 - t over groups of tied ranks
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double var =
      static_cast<double>(na) * static_cast<double>(nb) / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (var <= 0) return 1;
  const double z = (std::fabs(observed - mean) - 0.5) / std::sqrt(var);  // continuity
  return std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
}

// The median of v, reordering it: O(n) (nth_element), not a sort.
double MedianInPlace(std::vector<double>& v) {
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  const double upper = v[mid];
  if (n % 2) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<long>(mid)) + upper) / 2;
}

}  // namespace

double MannWhitneyP(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return 1;
  const std::vector<double> rank = PooledRanks(a, b);
  const double observed =
      std::accumulate(rank.begin(), rank.begin() + static_cast<long>(a.size()), 0.0);
  if (a.size() + b.size() <= 20) return ExactP(rank, a.size(), observed);
  return NormalP(rank, a.size(), b.size(), observed);
}

double SmallestMannWhitneyP(size_t na, size_t nb) {
  if (na == 0 || nb == 0) return 1;
  double ways = 1;  // C(na + nb, na)
  for (size_t i = 1; i <= na; ++i)
    ways = ways * static_cast<double>(nb + i) / static_cast<double>(i);
  return std::min(1.0, 2 / ways);
}

std::optional<RatioInterval> BootstrapMedianRatio(std::span<const double> a,
                                                  std::span<const double> b, int resamples,
                                                  uint64_t seed) {
  if (a.empty() || b.empty() || resamples < 1) return std::nullopt;
  std::mt19937_64 rng(seed);
  std::vector<double> scratch;  // one resample at a time, reused
  auto resample = [&](std::span<const double> s) {
    std::uniform_int_distribution<size_t> pick(0, s.size() - 1);
    scratch.resize(s.size());
    for (double& v : scratch) v = s[pick(rng)];
    return MedianInPlace(scratch);
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ma = resample(a), mb = resample(b);
    if (ma == 0 || !std::isfinite(ma) || !std::isfinite(mb)) return std::nullopt;
    ratios.push_back(mb / ma);
  }
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) {
    return ratios[static_cast<size_t>(q * static_cast<double>(ratios.size() - 1) + 0.5)];
  };
  return RatioInterval{at(0.025), at(0.975)};
}

}  // namespace writelab
