// SPDX-License-Identifier: MIT
// The picture of `writelab explain -- CMD` on the report page: every slow
// or durability call over time, coloured by what its thread did most, and
// each type of call's time split into its parts (stacked).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "explain/wait_functions.h"
#include "program/explain/def.h"
#include "program/explain/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace {

constexpr long kSeriesColumns = 2 + SPLIT_PARTS;  // t, call, then a share per part (split_parts.h)

// Calls over time: a cloud of points per cause (the largest part of each).
json Timeline(const RunPlan& p, const std::vector<const RunPlan*>& runs, bool first) {
  json c = spec::Picture("explain: each slow or durability call over time, by what it waited for " +
                             std::string(runs.size() > 1 ? "— " + p.label : ""),
                         "line", spec::Axis("x", "time (s)", "linear"), first ? "explain" : "");
  c["caption"] =
      "Each point is one call, colored by what its thread did for most of its time: clusters "
      "high up are the stalls, and their color says whether a journal commit, a cache flush, "
      "its own writes, dirty throttling or a busy CPU held them.";
  const std::string y = spec::YAxisFor(c, "ms", "logarithmic", "call");
  std::array<json, SPLIT_PARTS> points;
  for (json& d : points) d = json::array();
  for (const Row& r : p.run->rows)
    for (const Series& s : r.series) {
      if (s.key != "calls" || s.columns.size() != kSeriesColumns) continue;
      for (const auto& pt : s.points) {
        if (pt.size() != kSeriesColumns || pt[1] <= 0) continue;  // 0 is on no log axis
        const auto most = std::max_element(pt.begin() + 2, pt.end()) - (pt.begin() + 2);
        points[static_cast<size_t>(most)].push_back(json::array({pt[0], pt[1]}));
      }
    }
  for (size_t i = 0; i < SPLIT_PARTS; ++i) {
    if (points[i].empty()) continue;
    json d = spec::Dataset(SplitPartName(static_cast<int>(i)), y, std::move(points[i]));
    d["points"] = true;
    c["datasets"].push_back(std::move(d));
  }
  return c["datasets"].empty() ? json(nullptr) : c;
}

// Each type of call's time, split into its parts (split_parts.h).
json Split(const RunPlan& p, const std::vector<const RunPlan*>& runs) {
  json c = spec::Picture("explain: where each type of call's time went " +
                             std::string(runs.size() > 1 ? "— " + p.label : ""),
                         "bar", spec::Axis("x", "call", "category"), "");
  c["stacked"] = true;
  c["caption"] =
      "Each type of call's time, split by what its threads did (on CPU, waiting for one, or "
      "asleep, by what for): the largest share is what to change first (docs/explain.md).";
  const std::string y = spec::YAxisFor(c, "%", "linear", "share of the calls' time");
  const auto& keys = kPartKeys;
  std::vector<const Row*> rows;
  for (const Row& r : p.run->rows)
    if (spec::FigureOf(r, keys[SPLIT_JOURNAL].name)) rows.push_back(&r);
  if (rows.empty()) return nullptr;
  for (const Row* r : rows) c["labels"].push_back(r->name);
  for (size_t i = 0; i < std::size(keys); ++i) {
    json d = spec::Dataset(SplitPartName(static_cast<int>(i)), y, json::array());
    for (const Row* r : rows) spec::AddValue(d, spec::FigureOf(*r, keys[i].name));
    c["datasets"].push_back(std::move(d));
    c["covers"].push_back(keys[i].name);
  }
  return c;
}

}  // namespace

void ProgramPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    if (json t = Timeline(*p, runs, out.empty()); !t.is_null()) out.push_back(std::move(t));
    if (json s = Split(*p, runs); !s.is_null()) out.push_back(std::move(s));
  }
}

}  // namespace writelab
