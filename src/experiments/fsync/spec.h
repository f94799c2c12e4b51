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
#include "experiments/fsync/background.h"
#include "io/engine.h"
#include "writelab/error.h"

namespace writelab {

enum class SyncMethod { kFsync, kFdatasync, kSfr, kOsync, kOdsync, kRwfDsync, kReopen };

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

// --mitigation (experiments/fsync/mitigation.h).
enum class MitigationKind { kNone, kWbt, kBdi, kBackground, kScheduler, kCgroup };

struct Mitigation {
  MitigationKind kind = MitigationKind::kNone;
  std::string name = "none";                // as given: "wbt=2ms"
  uint64_t wbt_usec = 0;                    // wbt: 0 turns it off
  uint64_t bdi_bytes = 0;                   // bdi
  StreamStyle style = StreamStyle::kPlain;  // bg
  std::string scheduler;                    // scheduler
  std::string cgroup_file;                  // cgroup: "io.latency" or "io.max"
  std::string cgroup_value;                 // cgroup: "target=10000" (µs), "wbps=104857600"
};

struct FsyncSpec {
  std::string dir;   // the test file and background files are made here...
  std::string file;  // ...or the test file is this path (backgrounds beside it)
  uint64_t write_size = 1u << 20;
  int count = 20;  // iterations per trial
  int rounds = 0;  // trials per row, the cells rotating each round; 0: 1, or 5 with mitigations
  uint64_t interval_ns = 500'000'000;
  std::vector<SyncMethod> methods;          // empty: fsync
  std::vector<BackgroundKind> backgrounds;  // empty: none, random, stream
  std::vector<Mitigation> mitigations;      // empty: none alone (rows without the suffix)
  std::string bg_command;
  uint64_t bg_size = 0;      // stream bound; 0: past the dirty background threshold (fsync.cc)
  std::string bg_size_from;  // how bg_size was chosen, for the parameters ("": no stream)
  // The random background's file; 0: auto, sized in RunFsync past the
  // device's dirty background threshold (bg_span_from then says how).
  uint64_t bg_span = 0;
  std::string bg_span_from;  // "--bg-span", or how auto chose it ("": no random background)
  uint64_t bg_warmup_ns = 2'000'000'000;  // with bg_warmup_auto (the command's default): at least
  // --bg-warmup auto: after bg_warmup_ns, go on warming up until Dirty and
  // Writeback together reach the device's dirty background threshold
  // (writeback has begun), for at most kAutoWarmupCap; the threshold is
  // filled in by RunFsync.
  bool bg_warmup_auto = false;
  uint64_t warmup_threshold = 0;
  uint64_t sample_interval_ns = 1'000'000'000;  // telemetry
  bool verbose = false;                         // per-iteration listing
  // Under MPI: --roles as given ("" for none: every rank measures), and
  // whether this rank only runs the background loads while others measure.
  std::string roles;
  bool background_rank = false;
};

}  // namespace writelab
