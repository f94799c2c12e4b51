// SPDX-License-Identifier: MIT
// `writelab run --strategy S -- CMD`: what to run and how.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"
#include "shim/protocol.h"
#include "writelab/window.h"

namespace writelab {

// One way to run CMD, as --strategy names it: a strategy, paced at a
// target of its own (paced:10ms), or CMD as it is in a memory cgroup
// (memcg:256M: plain for the shim and the supervisor).
struct RunVariant {
  RunStrategy strategy = RunStrategy::kWindowDrop;
  uint64_t pace_target_ns = 20'000'000;  // paced: --target, or its own after the colon
  uint64_t memcg_bytes = 0;              // memcg: the cgroup's limit (0: no cgroup)
  std::string label;                     // its rows' name: "window-drop", "paced:10ms"
};

struct RunSpec {
  std::vector<std::string> command;  // CMD and its arguments
  // The strategy of the run under way (RunOnce sets it from its variant):
  // what the supervisor and the shim apply.
  RunStrategy strategy = RunStrategy::kWindowDrop;
  // --strategy's list, in its order (--compare puts plain first).
  std::vector<RunVariant> variants;
  uint64_t window = kDefaultWindowBytes;    // as StreamWriter's
  uint64_t min_file = kDefaultWindowBytes;  // files smaller than this are left alone
  uint64_t pace_target_ns = 20'000'000;     // paced: other programs' fsync under this (--target)
  std::string path_glob;                    // only files whose path matches ("": all)
  std::string user;               // run CMD as ("": the invoking user, SUDO_USER under sudo)
  bool measure = false;           // the stream experiment's bystander probe beside CMD
  std::string probe_dir;          // where the probe writes ("": the current directory)
  bool compare = false;           // plain and the strategies, side by side
  bool all_files = false;         // list the files below min_file too (else summed in one row)
  int rounds = 1;                 // with --compare: runs of each, the order rotating
  uint64_t poll_ns = 50'000'000;  // the supervisor's look at CMD's files
  uint64_t sample_interval_ns = 250'000'000;  // telemetry
  bool quiet = false;
};

}  // namespace writelab
