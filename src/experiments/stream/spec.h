// SPDX-License-Identifier: MIT
// The spec of `writelab stream` and the tables its options choose from: the
// types its own files share (trial.h), apart from the orchestrator's
// Validate and Run, so that the arrows between its files run one way.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>
#include "core/choice.h"
#include "core/result.h"
#include "writelab/error.h"

namespace writelab {

enum class StreamStrategy { kPlain, kWindow, kWindowDrop, kDontcache, kDirect, kLibrary };

using StreamStrategyInfo = Choice<StreamStrategy>;

// The table that feeds --help, --strategy parsing and the default order.
inline constexpr StreamStrategyInfo kStreamStrategies[] = {
    {StreamStrategy::kPlain, "plain", "pwrite() only, one fsync at the end (what dd does)"},
    {StreamStrategy::kWindow, "window",
     "Torvalds: sync_file_range WRITE on this block, WAIT+WRITE+WAIT on the previous one"},
    {StreamStrategy::kWindowDrop, "window-drop",
     "Garzik: window plus posix_fadvise DONTNEED on each completed block"},
    {StreamStrategy::kDontcache, "dontcache", "pwritev2 RWF_DONTCACHE (Linux 6.14+)"},
    {StreamStrategy::kDirect, "direct", "O_DIRECT from aligned buffers"},
    {StreamStrategy::kLibrary, "library",
     "writelab::StreamWriter: the first of dontcache, window-drop, direct the kernel accepts"},
};

const char* StreamStrategyName(StreamStrategy s);

struct StreamSpec {
  std::string dir;   // a new file is made here...
  std::string file;  // ...or this path is written (exactly one of the two)
  bool keep = false;
  uint64_t size = uint64_t{1} << 30;
  uint64_t block = 8u << 20;
  std::vector<StreamStrategy> strategies;  // empty: all, in table order
  uint64_t interval_ns = 1'000'000'000;
  bool probe = true;
  uint64_t probe_period_ns = 100'000'000;
  int rounds = 3;  // trials of each strategy
};

}  // namespace writelab
