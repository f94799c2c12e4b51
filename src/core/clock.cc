// SPDX-License-Identifier: MIT
#include "core/clock.h"

#include <ctime>

namespace writelab {

std::string UtcNowIso8601() {
  time_t now = time(nullptr);
  tm utc;
  gmtime_r(&now, &utc);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace writelab
