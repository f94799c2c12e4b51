// SPDX-License-Identifier: MIT
// The noise canary (core/result.h's Canary): before a run's first step, a
// fixed CPU loop timed 5 times (about 5 ms each here) and 16 calls of a
// 4 KiB pwrite + fdatasync into an unnamed file (O_TMPFILE) in the run's
// directory, after one call not counted (it allocates the block). The same
// work in every run, so that on one host a run whose canary is slower than
// usual was made on a busier machine (docs/history.md). About 0.05 s here.
#pragma once

#include <string>

#include "core/result.h"

namespace writelab {

inline constexpr int kCanaryLoops = 5;
inline constexpr int kCanarySyncs = 16;

// The canary measured in dir (a directory; a block device or a file system
// without O_TMPFILE gets the CPU part only, with a note saying why).
Canary MeasureCanary(const std::string& dir);

}  // namespace writelab
