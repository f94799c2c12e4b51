// SPDX-License-Identifier: MIT
// The one clock experiments measure with: CLOCK_MONOTONIC in nanoseconds
// (vDSO, about 20 ns a read, never steps backwards).
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace writelab {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Wall-clock time as an ISO 8601 UTC string, for result documents.
std::string UtcNowIso8601();

}  // namespace writelab
