// SPDX-License-Identifier: MIT
#include "core/histogram.h"

#include <algorithm>
#include <cmath>

namespace writelab {

void Histogram::Merge(const Histogram& other) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Histogram::mean() const {
  return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

double Histogram::stddev() const {
  if (count_ < 2) return 0.0;
  double m = mean();
  double var = sum_squares_ / static_cast<double>(count_) - m * m;
  return var > 0 ? std::sqrt(var) : 0.0;
}

uint64_t Histogram::BucketLow(int index) {
  if (index < static_cast<int>(kSub)) return static_cast<uint64_t>(index);
  int shift = index / static_cast<int>(kSub) - 1;
  uint64_t sub = static_cast<uint64_t>(index) % kSub;
  return (kSub + sub) << shift;
}

uint64_t Histogram::BucketMid(int index) {
  if (index < static_cast<int>(kSub)) return static_cast<uint64_t>(index);
  int shift = index / static_cast<int>(kSub) - 1;
  uint64_t width = uint64_t{1} << shift;
  return BucketLow(index) + (width - 1) / 2;
}

uint64_t Histogram::BucketHigh(int index) {
  if (index + 1 >= kBuckets) return UINT64_MAX;
  return BucketLow(index + 1) - 1;
}

uint64_t Histogram::SamplesFor(double p) {
  if (p >= 100) return UINT64_MAX;
  // 100 / (100 - p), rounded to the nearest whole sample against the
  // binary fractions of 99.9 and the like.
  return static_cast<uint64_t>(std::llround(std::ceil(100.0 / (100.0 - p) - 1e-9)));
}

uint64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(BucketMid(i), min(), max_);
  }
  return max_;
}

}  // namespace writelab
