// SPDX-License-Identifier: MIT
#include "writelab/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace writelab {

// Values below 8 have a bucket each; from 8 on, each power of two 2^e is
// split into 8 buckets of width 2^(e-3).
int LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < 8) return static_cast<int>(ns);
  const int e = std::bit_width(ns) - 1;  // 3..63
  const int b = (e - 2) * 8 + static_cast<int>((ns >> (e - 3)) & 7);
  return std::min(b, kBuckets - 1);
}

uint64_t LatencyHistogram::Lower(int bucket) {
  if (bucket < 8) return static_cast<uint64_t>(bucket);
  const int e = bucket / 8 + 2;
  return (uint64_t{8} + static_cast<uint64_t>(bucket % 8)) << (e - 3);
}

uint64_t LatencyHistogram::Percentile(double p) const {
  if (count == 0) return 0;
  const auto rank = static_cast<uint64_t>(
      std::max(1.0, std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(count))));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets[static_cast<size_t>(b)];
    if (seen >= rank) return b + 1 < kBuckets ? std::min(Lower(b + 1) - 1, max_ns) : max_ns;
  }
  return max_ns;
}

}  // namespace writelab
