// SPDX-License-Identifier: MIT
// writelab's exit codes (also in README.md and writelab --help):
//   0  success
//   1  run failed or interrupted (results measured before it are still written)
//   2  usage: bad option, bad value, missing directory
//   3  compare --fail-on-regression or history check found a regression
#pragma once

namespace writelab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRegression = 3;

}  // namespace writelab
