// SPDX-License-Identifier: MIT
// The self-check of the state the overlaps are read from (split.bpf.h): at
// the end of a run, the counts of requests and commits in flight must be
// those the maps hold, and what the programs repaired or gave up on is
// said, never hidden (docs/explain.md, "The self-check").
#pragma once

#include <linux/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "explain/split_parts.h"

struct bpf_map;

namespace writelab {

struct SplitSelfCheck {
  split_check check{};                  // counted by the programs
  int64_t counts[SPLIT_OVERLAPS] = {};  // the state's counts at the read
  uint64_t held[SPLIT_OVERLAPS] = {};   // commits and requests the maps held then
  uint64_t stale = 0;                   // of those, in flight longer than SPLIT_RQ_LOST_NS
  bool read = false;                    // false: the maps could not be read
  bool Balanced() const;
};

// Reads the check from a loaded program's maps (split.bpf.h: split_state,
// split_rqs, split_commits) at CLOCK_MONOTONIC now_ns. The BPF build only.
SplitSelfCheck ReadSplitCheck(const bpf_map* state, const bpf_map* rqs, const bpf_map* commits,
                              uint64_t now_ns);

// The lines a document carries about it: what was lost and which figures
// it touches; when nothing was, one line saying the check held, with what
// was repaired on the way (requeues, reissues: normal), unless
// only_problems.
std::vector<std::string> SplitCheckNotes(const SplitSelfCheck& c, bool only_problems = false);

}  // namespace writelab
