// SPDX-License-Identifier: MIT
// `history trend`: one figure across the runs of the history, as a terminal
// table and as an offline page (the report's page machinery: Chart.js and
// web/report.js inlined). Each point is compared with the series' previous
// one by compare's test (core/significance.h): the change and whether it
// is significant.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/changepoint.h"
#include "history/store.h"
#include "report/compare.h"
#include "report/html.h"

namespace writelab {

// A point's change from the previous point of its series.
struct TrendStep {
  std::optional<double> change_pct;  // median against the previous median
  std::optional<double> p;           // Mann-Whitney over the two runs' trials
  bool significant = false;          // p < 0.05
  // compare's verdict on the same trials, so that trend, compare and check
  // say the same of one pair of runs ("too few trials to tell").
  Verdict verdict = Verdict::kCannotTell;
};

// The step of each point (nullopt for a series' first point), in order.
std::vector<std::optional<TrendStep>> TrendSteps(const std::vector<TrendPoint>& points);

// The change points of each series as `history changes` splits them (one
// row on one host, whatever its test bed: history/changes.h), by the index
// of the first point after the change.
std::map<size_t, ChangePoint> TrendChangePoints(const std::vector<TrendPoint>& points);

// "records seconds (seconds, s), row write: 4 runs" and a line per point:
// run, start, kernel, label, series, median, min-max, n, change (and the
// change points, marked where they are).
std::string RenderTrendText(const TrendQuery& q, const std::vector<TrendPoint>& points);

// The page: a line per series over the runs in order, its min-max band
// shaded, each run on the x axis named by its id, kernel and label; the
// table below.
std::string RenderTrendHtml(const TrendQuery& q, const std::vector<TrendPoint>& points,
                            const HtmlAssets& assets);

}  // namespace writelab
