// SPDX-License-Identifier: MIT
// A log-linear latency histogram in integer nanoseconds (after fio's
// plat_val_to_idx, without its 17 s ceiling).
//
// Values below 64 ns each have a bucket of their own. Above, each power of
// two [2^k, 2^(k+1)) is split into 64 equal buckets, so a bucket is at most
// 1/64 of its lower bound wide. A value is reported as its bucket's midpoint:
//
//   relative error of any reported value or percentile <= 1/128 (0.79%) < 1%.
//
// The whole uint64_t range is covered (3776 buckets, 30 KiB): nothing
// saturates, an hour-long stall is recorded as faithfully as a 1 us write.
// Record() is O(1), allocation-free and not thread-safe: keep one histogram
// per thread and Merge() them at the end. Min, max, count and mean are exact;
// stddev is computed from exact sums.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace writelab {

__extension__ typedef unsigned __int128 Uint128;

class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;  // buckets per power of two
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;
  static constexpr double kMaxRelativeError = 1.0 / (2 * kSub);

  void Record(uint64_t ns) {
    ++buckets_[Index(ns)];
    ++count_;
    sum_ += ns;
    sum_squares_ += static_cast<double>(ns) * static_cast<double>(ns);
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }
  // n values of ns at once (a histogram read from the kernel's coarser
  // buckets, each at its midpoint).
  void RecordN(uint64_t ns, uint64_t n) {
    if (n == 0) return;
    buckets_[Index(ns)] += n;
    count_ += n;
    sum_ += static_cast<Uint128>(ns) * n;
    sum_squares_ += static_cast<double>(ns) * static_cast<double>(ns) * static_cast<double>(n);
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }
  void Merge(const Histogram& other);
  void Reset() { *this = Histogram(); }

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const;
  double stddev() const;  // population standard deviation
  // Nearest-rank percentile, p in [0, 100]: the smallest recorded value v
  // such that at least p% of the samples are <= v, within kMaxRelativeError
  // and clamped to [min, max]. 0 when empty.
  uint64_t Percentile(double p) const;
  // The fewest samples for which percentile p says more than the maximum:
  // at least one sample must lie above it (p99 needs 100, p99.9 needs 1000).
  static uint64_t SamplesFor(double p);
  // Percentile(p) when count() >= SamplesFor(p), else nothing: a p99.9 of 12
  // samples is the slowest sample under another name.
  std::optional<uint64_t> SupportedPercentile(double p) const {
    if (count_ == 0 || count_ < SamplesFor(p)) return std::nullopt;
    return Percentile(p);
  }

  // Bucket geometry, public for tests and for reporters that plot buckets.
  static int Index(uint64_t ns) {
    if (ns < kSub) return static_cast<int>(ns);
    int msb = 63 - __builtin_clzll(ns);
    int shift = msb - kSubBits;
    return (shift + 1) * static_cast<int>(kSub) + static_cast<int>((ns >> shift) - kSub);
  }
  static uint64_t BucketLow(int index);
  static uint64_t BucketMid(int index);
  static uint64_t BucketHigh(int index);  // the largest value in the bucket
  uint64_t bucket_count(int index) const { return buckets_[index]; }

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  Uint128 sum_ = 0;
  double sum_squares_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace writelab
