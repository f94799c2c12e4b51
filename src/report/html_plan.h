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

namespace writelab {

struct RunPlan {
  const ExperimentResult* run = nullptr;
  std::string label;                   // "ext4:data=ordered/bfq", "/home/x (file 2)"
  std::vector<nlohmann::json> charts;  // series and latency charts of this run
};

struct GroupPlan {
  std::string name;                      // experiment name
  std::vector<nlohmann::json> pictures;  // what the original post is about (html_pictures.cc)
  std::vector<nlohmann::json> charts;    // figures compared across the runs
  std::vector<RunPlan> runs;
};

// With a comparison: figures are drawn with both runs side by side even where
// a picture draws them per run, and significant changes are marked.
std::vector<GroupPlan> PlanReport(const std::vector<Document>& docs,
                                  const Comparison* comparison = nullptr);
// The planned charts as the JSON array the page draws, in page order.
std::string ChartSpecsJson(const std::vector<GroupPlan>& groups);

// The pictures of the experiment of runs (its ExperimentDef::picture):
// what the original post showed. Empty for an experiment it does not know.
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
// A bar chart, a bar per row (those take accepts), of the given figures,
// each on its own axis; null when nothing is drawn.
struct Bars {
  const char* key;
  const char* name;  // the axis name: "throughput"
};
nlohmann::json RowBars(const RunPlan& p, const std::string& title, const std::vector<Bars>& figures,
                       const std::string& id, bool (*take)(const Row&) = nullptr);
}  // namespace spec

// The top of the page: the hosts, the recommendations linking to their
// experiments, a summary of each experiment's headline figure, and contents.
std::string TopHtml(const std::vector<Document>& docs, const std::vector<GroupPlan>& groups);
// compare -o: the comparison's table, significant changes first.
std::string ComparisonHtml(const Comparison& c);
// "<dt>term</dt><dd>value</dd>", escaped; "" when value is empty.
std::string HtmlItem(const std::string& term, const std::string& value);
// What a document's runs are called beside another's: its --label, else
// its host and kernel.
std::string DocLabel(const std::vector<Document>& docs, size_t d);

// Units a person reads, per axis: bytes as KiB..TiB, ms as µs or s, chosen by
// the largest value; drops line charts with fewer than 5 points.
void FinishCharts(std::vector<nlohmann::json>& charts);

}  // namespace writelab
