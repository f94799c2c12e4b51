// `writelab stream`: streaming-write strategies, after overwrite.c (LKML
// "Linux 2.6.29", April 2009; Linus Torvalds, Jeff Garzik). docs/stream.md
// explains every row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/result.h"
#include "experiments/context.h"
#include "experiments/stream_figures.h"
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
  int repeat = 3;
};

// Checks the spec and fills defaults; an error is a usage error (exit 2).
std::expected<void, std::string> ValidateStreamSpec(StreamSpec& spec);

// Runs every strategy `repeat` times in rotated order and fills out. On a
// run failure out holds every row measured so far and the error says why.
Status RunStream(const StreamSpec& spec, const RunContext& ctx, ExperimentResult& out);

}  // namespace writelab
