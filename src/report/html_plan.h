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

namespace writelab {

struct RunPlan {
  const ExperimentResult* run = nullptr;
  std::string label;                   // "ext4:data=ordered/bfq", "/home/x (file 2)"
  std::vector<nlohmann::json> charts;  // series and latency charts of this run
};

struct GroupPlan {
  std::string name;                    // experiment name
  std::vector<nlohmann::json> charts;  // figures compared across the runs
  std::vector<RunPlan> runs;
};

std::vector<GroupPlan> PlanReport(const std::vector<Document>& docs);

}  // namespace writelab
