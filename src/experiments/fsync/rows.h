// SPDX-License-Identifier: MIT
// How a `writelab fsync` (background, method) run becomes a row: the sync
// loop's latencies as percentiles, the background's and the device's
// throughput, Dirty and Writeback peaks, and the per-iteration and telemetry
// series. Internal to the fsync experiment; its own file so that the row
// building is tested without a background load.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "experiments/fsync/spec.h"
#include "experiments/fsync/sync_loop.h"
#include "telemetry/sampler.h"

namespace writelab {

// What one (background, method) row measured, besides the loop's own data.
struct FsyncRowContext {
  std::string bg_name;
  double seconds = 0;
  std::optional<uint64_t> bg_bytes;  // the background's bytes (none: no byte count)
  bool device = false;
  uint64_t device_bytes = 0;
  uint64_t dirty_peak = 0;
  uint64_t writeback_peak = 0;
  std::vector<SamplePoint> points;
  std::string bg_failure;  // a background that failed fails the row
};

// Takes the sample points with t0 <= t_s <= t1 into rc: the series, the peaks
// and, with device counters, the bytes the device wrote between the first and
// the last.
void FillTelemetry(const std::vector<SamplePoint>& all, double t0, double t1, FsyncRowContext& rc);

// The row "BACKGROUND/METHOD". A run without a single write has no figures.
Row FsyncRow(const SyncMethodInfo& m, const SyncRun& run, const FsyncRowContext& rc,
             double interval_s);

// One trial of a row: its iterations and what was sampled around them.
struct FsyncTrial {
  SyncRun run;
  FsyncRowContext rc;
};
// Over rounds: each figure a median with min-max over the trials (a trial's
// percentiles are over its iterations), latencies merged over all
// iterations, each trial's series with its round as its trial. The first
// trial that failed (or whose background failed) decides the row's status;
// the figures of the trials before it, and of its iterations, are kept.
Row FsyncRow(const SyncMethodInfo& m, const std::vector<FsyncTrial>& trials, double interval_s);

// Under MPI with --roles, a background rank's row `name`: per trial, what
// its load wrote (bg_mb_s) and what it saw (device MB/s, Dirty, Writeback)
// while the measuring ranks ran that trial; no latencies of its own.
Row BackgroundRankRow(const std::string& name, const std::vector<FsyncRowContext>& trials,
                      double interval_s);

}  // namespace writelab
