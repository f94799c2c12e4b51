// SPDX-License-Identifier: MIT
// `history changes`: the change points (history/changepoint.h) of each
// figure's series across the runs kept, and what else changed at each.
//
// A series is one row's figure on one host, run after run, oldest first:
// the run's test bed, scheduler and kernel are not part of it but what a
// change can be explained by, so that a run on a test bed with a smaller
// dirty limit continues the series of the runs before it and the change
// names the test bed. Where one run has the row several times (two test
// beds, two schedulers), the n-th of them continues the n-th series.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "history/changepoint.h"
#include "history/store.h"

namespace writelab {

struct ChangesQuery {
  std::string experiment;  // "fsync"
  std::string figure;      // "" for every figure of the experiment
  std::string row;         // "" for every row
  RunFilter runs;
  ChangePointOptions options;
};

struct SeriesChange {
  std::string experiment;
  std::string figure, figure_label, unit;
  std::string host, row;
  size_t runs = 0;  // points in the series
  ChangePoint change;
  int64_t run_before = 0, run_at = 0;  // the last run before the change, the first after
  // What differed between those two runs: "kernel 6.1.0 -> 6.18.0", "test
  // bed ext4:dirty=256M -> ext4:dirty=64M", "command line ...".
  std::vector<std::string> also_changed;
  // Runs among those tested each side that were made on a disturbed machine,
  // by their noise canary: "run 14: CPU loop 1.6x this host's median".
  std::vector<std::string> disturbed;
  // Which series of the search it is in (its figure's series in SplitSeries'
  // order, figure after figure): a row twice in a run is two series.
  size_t series = 0;
};

struct ChangesFound {
  std::vector<SeriesChange> changes;
  size_t series = 0, figures = 0;  // how many were looked at
  // The runs the search looked at that were made on a disturbed machine
  // (DisturbedRuns below): run id -> why.
  std::map<int64_t, std::string> disturbed;
};

// Every change of every series the query selects, in figure, host, row and
// run order.
Result<ChangesFound> FindChanges(const HistoryStore& store, const ChangesQuery& q);

// Runs made on a disturbed machine, by their noise canary: a CPU loop more
// than kCanaryCpuDrift times, or fdatasync more than kCanarySyncDrift times,
// the median of the same host's runs that the filter selects. Run id -> why
// ("CPU loop 1.6x this host's median").
inline constexpr double kCanaryCpuDrift = 1.3, kCanarySyncDrift = 3.0;
Result<std::map<int64_t, std::string>> DisturbedRuns(const HistoryStore& store,
                                                     const RunFilter& runs);

// The series of points, split as described above: each a run-ordered list
// of indexes into points.
std::vector<std::vector<size_t>> SplitSeries(const std::vector<TrendPoint>& points);

// What differs between two runs and their points of a series.
std::vector<std::string> WhatChanged(const StoredRun& before, const TrendPoint& a,
                                     const StoredRun& after, const TrendPoint& b);

// "fsync sync_max_ms: 1 change in 24 runs" and a paragraph per change.
std::string RenderChangesText(const ChangesQuery& q, const ChangesFound& found);
// One change's paragraph: where, its size with interval and p, what else changed.
std::string RenderChange(const SeriesChange& c);

// `history check` over the series: the change points of these experiments'
// series on one host, up to (and with) run up_to_run, that still hold there
// (each series' last change) and are recent: at most `recent` runs back from
// the end of the series, or, where after_run > 0, at a run after that one.
// A change can be found once min_segment runs follow it (3 by default), so
// it shows that many runs late, placed at the run where it began.
struct RecentChangesQuery {
  std::vector<std::string> experiments;
  std::string host;
  int64_t up_to_run = 0, after_run = 0;
  size_t recent = 5;
  ChangePointOptions options;
};
Result<ChangesFound> RecentChanges(const HistoryStore& store, const RecentChangesQuery& q);

}  // namespace writelab
