// SPDX-License-Identifier: MIT
// The aggregate of an experiment run on many ranks (docs/mpi.md), made on
// rank 0 from what every rank sent: its own result, its trials' spans on
// rank 0's clock, and the histograms merged across ranks. Pure functions of
// their inputs, tested without MPI (aggregate_test.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/result.h"
#include "mpi/team.h"

namespace writelab {

// What one rank sent after an experiment.
struct RankRun {
  int rank = 0;
  std::string host;              // its hostname, for messages
  ExperimentResult result;       // its own rows, as it measured them
  std::string error;             // why it failed ("" when it did not)
  bool stopped = false;          // it stopped because another rank failed or was interrupted
  bool idle = false;             // it only took the steps (the survey's one-rank rows)
  std::vector<TrialSpan> spans;  // its trials, on rank 0's clock
};

// (row, latency key) -> the histogram merged over every rank.
using MergedHistograms = std::map<std::pair<std::string, std::string>, Histogram>;

// The aggregate: one row per row of the ranks' results (in the order of the
// first rank's), with kRanksFigures over the measuring ranks' spans, per
// trial (a median over trials, as every row), the merged latencies, and a
// timeline whose throughput is the sum of the ranks'. A row no rank measured
// takes its status from the ranks' rows; a rank whose row is unsupported or
// failed where others measured it is named in a note.
ExperimentResult AggregateRanks(const std::vector<RankRun>& runs, const MergedHistograms& merged);

// Puts every rank's time series of a trial on one axis: t in seconds on rank
// 0's clock since the first rank started that trial (a series whose origin
// its rank did not record is left as it is).
void AlignSeries(std::vector<RankRun>& runs);

// The errors line of a run where ranks failed: "rank 2 (host b): window:
// pwrite at 0: No space left on device". Ranks that only stopped because of
// it are not named; nothing when no rank failed on its own.
std::optional<std::string> FirstRankFailure(const std::vector<RankRun>& runs);

}  // namespace writelab
