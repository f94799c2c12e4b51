// SPDX-License-Identifier: MIT
// The measured loop of `writelab fsync`: one sync method's iterations.
// Internal to the fsync experiment (fsync.cc runs it per method and
// background); exposed for tests.
#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/run_context.h"
#include "experiments/fsync/spec.h"
#include "explain/explainer.h"
#include "io/engine.h"

namespace writelab {

// One sync method's iterations through engine (writes and syncs both): exposed
// for tests that inject faults (io/fault_engine.h). Fills the latencies, per-iteration
// samples (start, write ns, sync ns) and, on error, status and message.
struct SyncRun {
  Outcome outcome;
  uint64_t start_ns = 0;  // the loop's start (NowNs): samples' t = 0
  uint64_t end_ns = 0;    // the last iteration's end
  Histogram write_latency;
  Histogram sync_latency;
  Histogram total_latency;
  std::vector<std::array<double, 3>> samples;  // t (s), write (s), sync (s)
  std::map<std::string, double> explained;     // --explain: keys of kExplainFigures
};

// What --explain attributes in the loop.
inline constexpr std::initializer_list<ExplainProbe> kFsyncExplains = {
    ExplainProbe::kSyncParts, ExplainProbe::kJournal, ExplainProbe::kBlock,
    ExplainProbe::kWriteback, ExplainProbe::kWbt};
// fd: the test file's descriptor, which reopen opens afresh each iteration.
SyncRun MeasureSyncMethod(const FsyncSpec& spec, const SyncMethodInfo& method, WriteEngine& engine,
                          const void* data, const RunContext& ctx, int fd = -1);

}  // namespace writelab
