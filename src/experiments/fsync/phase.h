// SPDX-License-Identifier: MIT
// The mechanisms of `writelab fsync` that RunFsync (fsync.cc) puts
// together, one file each: the plain phase under a background with its MPI
// background ranks (phase.cc), and the mitigation study (mitigated.cc).
// Internal to src/experiments/fsync.
#pragma once

#include <string>
#include <vector>

#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/fsync/fsync.h"
#include "experiments/fsync/mitigation.h"
#include "experiments/fsync/rows.h"
#include "experiments/fsync/sync_loop.h"
#include "io/file.h"
#include "telemetry/sampler.h"

namespace writelab {

// Where the test files go: --file's directory, or --dir.
std::string DirOf(const FsyncSpec& spec);

struct PhaseResult {
  std::vector<Row> rows;
  Status status;
};

// One method's trial under a background.
struct Measured {
  const SyncMethodInfo* method;
  SyncRun run;
  FsyncRowContext rc;
  // For the trial loop: the run's, or failed when the background died
  // during it (that ends the rounds too).
  Outcome outcome;
  const Mitigation* mitigation = nullptr;  // with --mitigation: the one in force
  std::vector<std::string> notes;          // what it said when applied
};

// One method's row under the running background (load: null for none):
// its own file, its iterations, the background's bytes and the sampler's
// span around it.
Measured MeasureOne(const FsyncSpec& spec, const SyncMethodInfo& info, const std::string& bg_name,
                    BackgroundLoad* load, Sampler& sampler, const AlignedBuffer& data,
                    const RunContext& ctx);

// One background: start it, warm up, run every sync method --rounds times,
// stop it (phase.cc). Under MPI with --roles, background ranks run the load
// and measuring ranks sync.
PhaseResult RunPhase(const FsyncSpec& spec, BackgroundKind bg, const RunContext& ctx,
                     const std::string& device, const AlignedBuffer& data);

// With --mitigation (mitigated.cc): every mitigation and method under bg,
// each cell its own warm-up; AppliesTo says which mitigations have rows
// under which background; CompareWithNone sets each mitigation row beside
// its background's none row by the rank test compare uses.
PhaseResult RunMitigatedPhase(const FsyncSpec& spec, BackgroundKind bg, const RunContext& ctx,
                              const std::string& device, const AlignedBuffer& data);
bool AppliesTo(const Mitigation& m, BackgroundKind bg);
void CompareWithNone(std::vector<Row>& rows);

}  // namespace writelab
