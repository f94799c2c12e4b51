// SPDX-License-Identifier: MIT
// The spec of `writelab fsync` and the tables its options choose from: the
// types its own files share (sync_loop.cc), apart from the orchestrator's
// Validate and Run, so that the arrows between its files run one way.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>
#include "core/choice.h"
#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "experiments/background.h"
#include "io/engine.h"
#include "writelab/error.h"

namespace writelab {

enum class SyncMethod { kFsync, kFdatasync, kSfr, kOsync, kOdsync, kRwfDsync };

struct SyncMethodInfo {
  SyncMethod id;
  const char* name;
  const char* summary;
  int open_flags;      // added to O_WRONLY|O_CREAT
  int rwf_flags;       // pwritev2 flags on every write (0: plain pwrite)
  bool separate_sync;  // a sync call follows the write
};

const SyncMethodInfo& InfoOf(SyncMethod m);
std::span<const SyncMethodInfo> SyncMethods();

using BackgroundInfo = Choice<BackgroundKind>;
std::span<const BackgroundInfo> Backgrounds();

struct FsyncSpec {
  std::string dir;   // the test file and background files are made here...
  std::string file;  // ...or the test file is this path (backgrounds beside it)
  uint64_t write_size = 1u << 20;
  int count = 20;  // iterations per trial
  int rounds = 1;  // trials per row, under the same background; methods rotate each round
  uint64_t interval_ns = 500'000'000;
  std::vector<SyncMethod> methods;          // empty: fsync
  std::vector<BackgroundKind> backgrounds;  // empty: none, random, stream
  std::string bg_command;
  uint64_t bg_size = 0;  // stream bound; 0: min(8 GiB, a quarter of free space)
  uint64_t bg_span = 256u << 20;
  uint64_t bg_warmup_ns = 2'000'000'000;
  uint64_t sample_interval_ns = 1'000'000'000;  // telemetry
  bool verbose = false;                         // per-iteration listing
  // Under MPI: --roles as given ("" for none: every rank measures), and
  // whether this rank only runs the background loads while others measure.
  std::string roles;
  bool background_rank = false;
};

}  // namespace writelab
