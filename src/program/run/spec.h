// SPDX-License-Identifier: MIT
// `writelab run --strategy S -- CMD`: what to run and how.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"

namespace writelab {

enum class RunStrategy { kPlain, kWindow, kWindowDrop, kDontcache, kDropBehind };

using RunStrategyInfo = Choice<RunStrategy>;
// The strategies, as the stream experiment measures them (plain: CMD as it
// is, for --compare).
inline constexpr RunStrategyInfo kRunStrategies[] = {
    {RunStrategy::kWindowDrop, "window-drop",
     "sync_file_range a window behind the writer, wait for it, then POSIX_FADV_DONTNEED it "
     "(overwrite.c with Garzik's drop; the stream experiment's window-drop)"},
    {RunStrategy::kDontcache, "dontcache",
     "the writes become pwritev2 RWF_DONTCACHE (Linux 6.14+): the kernel drops the pages once "
     "written back"},
    {RunStrategy::kWindow, "window",
     "sync_file_range a window behind the writer and wait for it; the pages stay cached"},
    {RunStrategy::kDropBehind, "drop-behind",
     "POSIX_FADV_DONTNEED a window behind the writer, without waiting (nocache at close, done "
     "as the file grows)"},
    {RunStrategy::kPlain, "plain",
     "CMD as it is, its files only counted (what --compare sets the strategy beside)"},
};

struct RunSpec {
  std::vector<std::string> command;  // CMD and its arguments
  RunStrategy strategy = RunStrategy::kWindowDrop;
  uint64_t window = 8u << 20;     // as StreamWriter's
  uint64_t min_file = 8u << 20;   // files smaller than this are left alone
  std::string path_glob;          // only files whose path matches ("": all)
  std::string user;               // run CMD as ("": the invoking user, SUDO_USER under sudo)
  bool measure = false;           // the stream experiment's bystander probe beside CMD
  std::string probe_dir;          // where the probe writes ("": the current directory)
  bool compare = false;           // plain and the strategy, side by side
  int rounds = 1;                 // with --compare: runs of each, the order rotating
  uint64_t poll_ns = 50'000'000;  // the supervisor's look at CMD's files
  uint64_t sample_interval_ns = 250'000'000;  // telemetry
  bool quiet = false;
};

}  // namespace writelab
