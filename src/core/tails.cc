// SPDX-License-Identifier: MIT
#include "core/tails.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace writelab {
namespace {

// The value at 1-based rank r of a histogram: its bucket's middle, clamped.
uint64_t ValueAtRank(std::span<const Latency::Bucket> buckets, uint64_t r, uint64_t min_ns,
                     uint64_t max_ns) {
  uint64_t seen = 0;
  for (const Latency::Bucket& b : buckets) {
    seen += b.count;
    if (seen >= r) return std::clamp(b.low_ns + (b.high_ns - b.low_ns) / 2, min_ns, max_ns);
  }
  return max_ns;
}

uint64_t CountOf(std::span<const Latency::Bucket> buckets) {
  uint64_t n = 0;
  for (const Latency::Bucket& b : buckets) n += b.count;
  return n;
}

// The low end of the bucket that holds the pooled percentile of a and b:
// both histograms share one bucketing (core/histogram.h), so a bucket is
// named by where it starts.
uint64_t PooledThreshold(std::span<const Latency::Bucket> a, std::span<const Latency::Bucket> b,
                         double percentile) {
  std::vector<std::pair<uint64_t, uint64_t>> all;  // (low, count)
  for (auto side : {a, b})
    for (const Latency::Bucket& x : side) all.emplace_back(x.low_ns, x.count);
  std::sort(all.begin(), all.end());
  const uint64_t n = CountOf(a) + CountOf(b);
  const auto rank = std::clamp<uint64_t>(
      static_cast<uint64_t>(std::ceil(percentile / 100 * static_cast<double>(n))), 1, n);
  uint64_t seen = 0;
  for (const auto& [low, count] : all)
    if ((seen += count) >= rank) return low;
  return all.empty() ? 0 : all.back().first;
}

uint64_t Above(std::span<const Latency::Bucket> buckets, uint64_t threshold_low) {
  uint64_t n = 0;
  for (const Latency::Bucket& b : buckets)
    if (b.low_ns > threshold_low) n += b.count;
  return n;
}

double LogChoose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

double ZTestP(double x, double n1, double y, double n2) {
  const double pooled = (x + y) / (n1 + n2);
  const double se = std::sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se <= 0) return 1;
  const double diff = std::fabs(x / n1 - y / n2) - 0.5 * (1 / n1 + 1 / n2);
  return std::min(1.0, std::erfc(std::max(0.0, diff / se) / std::sqrt(2.0)));
}

// The 95% order-statistic interval of a percentile of n calls.
std::pair<uint64_t, uint64_t> PercentileInterval(const Latency& l, double percentile) {
  const double n = static_cast<double>(CountOf(l.buckets)), q = percentile / 100;
  const double half = 1.96 * std::sqrt(n * q * (1 - q));
  const auto lo = static_cast<uint64_t>(std::clamp(std::floor(n * q - half), 1.0, n));
  const auto hi = static_cast<uint64_t>(std::clamp(std::ceil(n * q + half) + 1, 1.0, n));
  return {ValueAtRank(l.buckets, lo, l.min_ns, l.max_ns),
          ValueAtRank(l.buckets, hi, l.min_ns, l.max_ns)};
}

std::string PercentileName(double percentile) { return fmt::format("p{:g}", percentile); }

}  // namespace

uint64_t BucketPercentile(std::span<const Latency::Bucket> buckets, double percentile,
                          uint64_t min_ns, uint64_t max_ns) {
  const uint64_t n = CountOf(buckets);
  if (n == 0) return 0;
  const auto rank = std::clamp<uint64_t>(
      static_cast<uint64_t>(std::ceil(percentile / 100 * static_cast<double>(n))), 1, n);
  return ValueAtRank(buckets, rank, min_ns, max_ns);
}

double TwoByTwoP(uint64_t x, uint64_t n1, uint64_t y, uint64_t n2) {
  const uint64_t n = n1 + n2, k = x + y;
  if (n1 == 0 || n2 == 0 || k == 0 || k == n) return 1;
  const uint64_t from = n1 > n - k ? n1 - (n - k) : 0, to = std::min(k, n1);
  if (to - from > 1'000'000)
    return ZTestP(static_cast<double>(x), static_cast<double>(n1), static_cast<double>(y),
                  static_cast<double>(n2));
  const double dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double d1 = static_cast<double>(n1), all = LogChoose(dn, d1);
  auto log_p = [&](uint64_t i) {
    const double di = static_cast<double>(i);
    return LogChoose(dk, di) + LogChoose(dn - dk, d1 - di) - all;
  };
  const double observed = log_p(x) + 1e-7;  // ties within rounding count as extreme
  double p = 0;
  for (uint64_t i = from; i <= to; ++i)
    if (const double l = log_p(i); l <= observed) p += std::exp(l);
  return std::min(1.0, p);
}

TailTest CompareTail(const Latency& a, const Latency& b, double percentile) {
  TailTest t;
  t.percentile = percentile;
  t.n_a = CountOf(a.buckets);
  t.n_b = CountOf(b.buckets);
  t.a_ns = BucketPercentile(a.buckets, percentile, a.min_ns, a.max_ns);
  t.b_ns = BucketPercentile(b.buckets, percentile, b.min_ns, b.max_ns);
  const double beyond = 1 - percentile / 100;
  t.beyond_a = static_cast<double>(t.n_a) * beyond;
  t.beyond_b = static_cast<double>(t.n_b) * beyond;
  if (t.a_ns > 0)
    t.change_pct = 100 * (static_cast<double>(t.b_ns) - static_cast<double>(t.a_ns)) /
                   static_cast<double>(t.a_ns);
  if (std::min(t.beyond_a, t.beyond_b) < kTailBeyond - 1e-6) {  // 1e-6: 10000 x 0.001
    t.why_not = fmt::format("too few calls for {} (needs {:.0f} a side; A {}, B {})",
                            PercentileName(percentile), std::ceil(kTailBeyond / beyond - 1e-6),
                            t.n_a, t.n_b);
    return t;
  }
  const uint64_t threshold = PooledThreshold(a.buckets, b.buckets, percentile);
  t.p = TwoByTwoP(Above(a.buckets, threshold), t.n_a, Above(b.buckets, threshold), t.n_b);
  t.significant = *t.p < kTailLevel;
  const auto [a_lo, a_hi] = PercentileInterval(a, percentile);
  const auto [b_lo, b_hi] = PercentileInterval(b, percentile);
  if (a_lo > 0 && a_hi > 0) {
    t.low_pct = 100 * (static_cast<double>(b_lo) / static_cast<double>(a_hi) - 1);
    t.high_pct = 100 * (static_cast<double>(b_hi) / static_cast<double>(a_lo) - 1);
  }
  return t;
}

}  // namespace writelab
