// SPDX-License-Identifier: MIT
// How `writelab records` turns passes into rows: each method's passes, and
// each group-commit row's trials, are accumulated and become one row with
// medians and min-max; speedups are then set against the write row (methods)
// or fdatasync/T (commit). Internal to the records experiment; its own file so
// that the row building is tested without writing a file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "experiments/records/corpus.h"
#include "experiments/records/methods.h"
#include "explain/explainer.h"

namespace writelab {

// One method and sync choice, across its passes.
struct RecordsAccumulator {
  Outcome outcome;  // the first trial that did not succeed
  std::map<std::string, std::vector<double>> figures;
  std::map<std::string, std::vector<double>> explained;  // keys of kExplainFigures
  std::vector<std::string> notes;                        // each distinct note of the passes, once
};

// Adds one pass that wrote plan's lines. A pass that did not succeed sets the
// outcome and adds nothing.
void AddMethodRun(const MethodRun& m, const OutputPlan& plan, RecordsAccumulator& acc);

// The method's row; moves the notes into it.
Row RecordsRow(const std::string& name, RecordsAccumulator& acc);

// Adds `speedup` to every row with lines/s: its median over that of the
// `write` row with the same sync suffix ("write/osync" for "fwrite/osync").
void AddSpeedups(ExperimentResult& out);

// The four ways a commit row commits: alone (each thread pwrite + fdatasync)
// or through one group-commit RecordWriter; appending to a growing file, or
// overwriting zeros written ahead (prealloc).
struct CommitWay {
  bool group;
  bool prealloc;
  const char* name;
};

// One trial of one commit row: T threads for --commit-time.
// What --explain attributes in the synchronous rows: the write and sync
// calls split by where their time went, and the journal's commits.
inline constexpr std::initializer_list<ExplainProbe> kRecordsExplains = {ExplainProbe::kSyncParts,
                                                                         ExplainProbe::kJournal};

struct CommitRun {
  Outcome outcome;
  uint64_t start_ns = 0;  // when the threads were let go (NowNs), for MPI's aggregate
  uint64_t ns = 0;
  uint64_t commits = 0;
  uint64_t syncs = 0;
  uint64_t sync_ns = 0;
  uint64_t zero_bytes = 0;                // written ahead, not timed for fdatasync-prealloc
  std::optional<uint64_t> wait_timeouts;  // group rows
  Histogram latency;
  std::map<std::string, double> explained;  // --explain: keys of kExplainFigures
};

// One commit row's trials.
struct CommitAcc {
  std::string name;
  Outcome outcome;  // the first trial that did not succeed
  std::map<std::string, std::vector<double>> figures;
  Histogram latency;
  std::map<std::string, std::vector<double>> explained = {};  // --explain, per trial
};

// Adds a trial of `threads` threads. Group rows also get the ceiling: threads
// over the mean fdatasync time, the most commits/s one sync per batch allows.
void AddCommitTrial(const CommitRun& r, const CommitWay& way, int threads, CommitAcc& acc);

// The row; base is the median commits/s of fdatasync/T, 0 for that row itself
// (no speedup).
Row CommitRow(CommitAcc& acc, double base);

}  // namespace writelab
