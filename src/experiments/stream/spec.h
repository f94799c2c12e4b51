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

enum class StreamStrategy {
  kPlain,
  kWindow,
  kWindowDrop,
  kDontcache,
  kDirect,
  kPaced,
  kLibrary,
  kMemcg
};

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
    {StreamStrategy::kPaced, "paced",
     "fdatasync + DONTNEED after each window, the window sized so that its flushes stay "
     "under half of --target: other programs' fsync calm (issue 44)"},
    {StreamStrategy::kLibrary, "library",
     "writelab::StreamWriter: the first of dontcache, window-drop, direct the kernel accepts"},
    {StreamStrategy::kMemcg, "memcg",
     "memcg:SIZE, an anchor (not in the default set; root): plain's writes from a process of "
     "their own in a memory cgroup of that limit, as users confine a copy"},
};

const char* StreamStrategyName(StreamStrategy s);

struct StreamSpec {
  std::string dir;   // a new file is made here...
  std::string file;  // ...or this path is written (exactly one of the two)
  bool keep = false;
  uint64_t size = uint64_t{1} << 30;
  // --size auto (the default): sized when the run knows its target, by
  // AutoStreamSize; size_from then says how.
  bool size_auto = false;
  std::string size_from = "--size";
  uint64_t block = 8u << 20;
  std::vector<StreamStrategy> strategies;  // empty: all but memcg, in table order
  // memcg: the cgroup's limit, and as typed ("256M": the row is memcg:256M).
  uint64_t memcg_bytes = 0;
  std::string memcg_size;
  uint64_t interval_ns = 1'000'000'000;
  bool probe = true;
  uint64_t probe_period_ns = 100'000'000;
  int rounds = 3;  // trials of each strategy
  // paced: the latency other programs' fsync should stay under (--target).
  uint64_t pace_target_ns = 20'000'000;
  // A trial stops writing after this long (0: never): the bytes written
  // are then fewer than size, and the row says so.
  uint64_t time_limit_ns = 0;
  // A trial that has written size bytes before this long writes its file
  // again from the start, pass after pass, until it has (0: never; not for
  // the library strategy). The survey's bystander trials use it so that a
  // fast device still gives the bystander time to probe.
  uint64_t min_time_ns = 0;
  // Filled by RunStream: the device's dirty background threshold
  // (telemetry/dirty_threshold.h) and how it was found, for the parameters
  // and vs_threshold.
  uint64_t threshold = 0;
  std::string threshold_from;
};

// A strategy's row name: its name, memcg's with its size ("memcg:256M").
std::string StreamRowName(const StreamSpec& spec, StreamStrategy s);

}  // namespace writelab
