// SPDX-License-Identifier: MIT
// The layout of the HTML report, shared by its page writer (html.cc) and its
// chart planner (html_charts.cc): experiments grouped by name across all
// documents, each group with its cross-run charts and, per run, the run's own
// charts. Chart specs are JSON objects that web/report.js turns into Chart.js
// configurations.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/result.h"
#include "report/compare.h"
#include "report/hooks.h"
#include "report/html.h"

namespace writelab {

// A chart spec may say "fold": true (drawn under the experiment's closed
// "more charts", html.cc) with "fold_why", and carries a "caption" that
// says what to look at.
struct RunPlan {
  const ExperimentResult* run = nullptr;
  const ReportHooks* hooks = nullptr;  // of the command that wrote it (null: one not known)
  size_t doc = 0;                      // the document it comes from
  std::string label;                   // "ext4:data=ordered/bfq", "/home/x (file 2)"
  std::vector<nlohmann::json> charts;  // series and latency charts of this run
};

struct GroupPlan {
  std::string name;                      // experiment name
  std::vector<nlohmann::json> pictures;  // what the original post is about (html_pictures.cc)
  std::vector<nlohmann::json> charts;    // figures compared across the runs
  std::vector<RunPlan> runs;
  std::vector<std::string> gone;  // charts not drawn: every series 0 throughout
};

// A group's charts in page order: open ones where the page draws them
// (pictures, cross-run charts, each run's), then the folded ones under the
// group's "more charts". The page (html.cc) and the specs follow it.
std::vector<const nlohmann::json*> OpenCharts(const std::vector<nlohmann::json>& charts);
std::vector<const nlohmann::json*> FoldedCharts(const GroupPlan& g);

// With a comparison: figures are drawn with both runs side by side even where
// a picture draws them per run, and significant changes are marked.
std::vector<GroupPlan> PlanReport(const std::vector<Document>& docs, const ReportBook& book,
                                  const Comparison* comparison = nullptr);
// The planned charts as the JSON array the page draws, in page order.
std::string ChartSpecsJson(const std::vector<GroupPlan>& groups);

// The pictures of the command of runs (its ReportHooks::picture): what the
// original post showed. Empty for a command it does not know.
std::vector<nlohmann::json> ExperimentPictures(const std::vector<const RunPlan*>& runs);

// Building blocks of a chart spec (see web/report.js for the fields).
namespace spec {
nlohmann::json Axis(const std::string& id, const std::string& title, const std::string& type);
nlohmann::json Chart(const std::string& title, const std::string& kind, nlohmann::json x);
// The y axis for a unit, added on first use (sides alternate); its id.
std::string YAxisFor(nlohmann::json& chart, const std::string& unit,
                     const std::string& type = "linear", const std::string& name = "");
nlohmann::json Dataset(const std::string& label, const std::string& axis, nlohmann::json data);
// A figure's median as a bar or point, with its min-max as whiskers ("lo",
// "hi") when the trials differ; null when the row has no such figure.
void AddValue(nlohmann::json& dataset, const Figure* f);
// "write-zeroes (unsupported)" for a row that was not measured, with a note
// on the chart giving the errno and message.
std::string RowLabel(nlohmann::json& chart, const Row& r);

// What the experiments' pictures are made of (html_pictures.cc).
// An ok row's figure, or null.
const Figure* FigureOf(const Row& r, const std::string& key);
// A chart marked as a picture: id is its anchor, and what the screenshot
// test looks for ("" for none).
nlohmann::json Picture(const std::string& title, const std::string& kind, nlohmann::json x,
                       const std::string& id);
// "LABEL " before a dataset's name when several runs share the chart.
std::string RunPrefix(const std::vector<const RunPlan*>& runs, const RunPlan& p);
// Bar charts, a bar per row (those take accepts), of the given figures: a
// chart per unit (small multiples, never two units on one chart), the id on
// the first; none when nothing is drawn.
struct Bars {
  const char* key;
  const char* name;  // the figure's name: "throughput"
};
std::vector<nlohmann::json> RowBars(const RunPlan& p, const std::string& title,
                                    const std::vector<Bars>& figures, const std::string& id,
                                    bool (*take)(const Row&) = nullptr);
// The trade-off of a streamer: one point per trial and row, the
// bystander's fsync (x, figure x_key, a log axis) against the row's
// throughput (y, figure y_key); the trials of a row are paired by their
// order. Null when no row has both figures in every trial.
nlohmann::json TradeOff(const RunPlan& p, const std::string& title, const char* x_key,
                        const char* y_key, const std::string& id);
}  // namespace spec

// The top of the page: the findings, the hosts, the recommendations linking
// to their experiments, a summary of each experiment's headline figure, and contents.
std::string TopHtml(const std::vector<Document>& docs, const std::vector<GroupPlan>& groups);
// compare -o: the comparison's table, significant changes first.
std::string ComparisonHtml(const Comparison& c);
// "<dt>term</dt><dd>value</dd>", escaped; "" when value is empty.
std::string HtmlItem(const std::string& term, const std::string& value);
// What a document's runs are called beside another's: its --label, else
// its host and kernel.
std::string DocLabel(const std::vector<Document>& docs, size_t d);

// The charts of a run's series (html_series.cc): a line per row per
// series key, and each row's columns; each marked "fold" when it shows no
// more than the tables (see there), with a "caption".
void AddSeriesCharts(const ExperimentResult& e, const std::string& run,
                     std::vector<nlohmann::json>& out);
// A series column for a person: "Dirty (page cache)" for "dirty".
std::string ColumnLabel(const std::string& key);
// Takes out of a chart each dataset that is 0 throughout (a line on 0 of a
// -1..1 axis says nothing a caption cannot), and the axes left without one,
// and says so in its caption ("Not drawn, 0 throughout: device write
// merges."); its "zero" lists them.
void DropZeroSeries(nlohmann::json& chart);

// Units a person reads, per axis: bytes as KiB..TiB, ms as µs or s, chosen by
// the largest value; drops line charts with fewer than 5 points.
// A chart whose every series was 0 throughout is not drawn at all: gone,
// if given, gets a line for it ("TITLE: X, Y 0 throughout").
void FinishCharts(std::vector<nlohmann::json>& charts, std::vector<std::string>* gone = nullptr);
// The units part of FinishCharts, for one chart.
void ScaleAxes(nlohmann::json& chart);

// The divs the charts are drawn in, numbered from next on (the chart's place
// in the page's specs), each with its captions.
std::string ChartsHtml(const std::vector<nlohmann::json>& charts, int& next);
std::string ChartsHtml(const std::vector<const nlohmann::json*>& charts, int& next);
// A page of the report's kind around charts of another command's making
// (history trend): intro, the charts, then outro (HTML, escaped by the caller).
std::string RenderChartsPage(const std::string& title, const std::string& intro,
                             const std::vector<nlohmann::json>& charts, const std::string& outro,
                             const HtmlAssets& assets);

}  // namespace writelab
