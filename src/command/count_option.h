// SPDX-License-Identifier: MIT
// A CLI11 check for whole-number options (--writes, --rounds, --qd...).
// CLI11's own conversion reads "-1" as 2^64-1 for a uint64_t, "010" as 8
// and "0x10" as 16; this check runs first on the text as typed and refuses
// all of those, and any value outside [min, max], with one line:
// "--writes: '1.5' is not a whole number (1 to 10000000)", "--writes: must be at least 1" (for -1),
// "--threads: must be at least 1", "--qd: must be at most 4096".
#pragma once

#include "command/cli_fwd.h"

#include <cstdint>

namespace writelab {

CLI::Validator Count(uint64_t min, uint64_t max);

}  // namespace writelab
