// SPDX-License-Identifier: MIT
// LatencyHistogram: a distribution of latencies in nanoseconds, in
// log-linear buckets (8 per power of two), as RecordWriter's commit latency.
// A percentile is the upper end of its bucket: never below the true value,
// and at most 12.5% above it. count, sum_ns and max_ns are exact.
#pragma once

#include <array>
#include <cstdint>

namespace writelab {

struct LatencyHistogram {
  // Values from 0 to 2^44 ns (about 4.9 hours); larger ones land in the
  // last bucket.
  static constexpr int kBuckets = 336;

  uint64_t count = 0;
  uint64_t sum_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kBuckets> buckets{};  // buckets[b]: values in [Lower(b), Lower(b + 1))

  static int BucketOf(uint64_t ns);
  static uint64_t Lower(int bucket);
  // The p-th percentile (0 < p <= 100), 0 when empty; at most max_ns.
  uint64_t Percentile(double p) const;
  double MeanNs() const { return count ? static_cast<double>(sum_ns) / count : 0.0; }
};

}  // namespace writelab
