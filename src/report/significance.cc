// SPDX-License-Identifier: MIT
#include "report/significance.h"

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
// is at least as far from its mean as the observed one.
double ExactP(const std::vector<double>& rank, size_t na, double observed) {
  const size_t n = rank.size();
  const double mean = static_cast<double>(na) * static_cast<double>(n + 1) / 2;
  const double dist = std::fabs(observed - mean) - 1e-9;
  std::vector<bool> pick(n, false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(na), true);
  uint64_t total = 0, extreme = 0;
  do {
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      if (pick[i]) sum += rank[i];
    ++total;
    extreme += std::fabs(sum - mean) >= dist;
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return static_cast<double>(extreme) / static_cast<double>(total);
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
  auto resample = [&](std::span<const double> s) {
    std::uniform_int_distribution<size_t> pick(0, s.size() - 1);
    std::vector<double> r(s.size());
    for (double& v : r) v = s[pick(rng)];
    return Median(std::move(r));
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
