// SPDX-License-Identifier: MIT
// The building blocks of the experiments' pictures (each experiment draws its
// own, src/experiments/NAME/picture.cc), and the page's call to them.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace spec {

const Figure* FigureOf(const Row& r, const std::string& key) {
  return r.status == RowStatus::kOk ? r.FindFigure(key) : nullptr;
}

json Picture(const std::string& title, const std::string& kind, json x, const std::string& id) {
  json c = Chart(title, kind, std::move(x));
  c["picture"] = id;  // an anchor, and what the screenshot test looks for
  return c;
}

std::string RunPrefix(const std::vector<const RunPlan*>& runs, const RunPlan& p) {
  return runs.size() > 1 ? p.label + " " : "";
}

std::vector<json> RowBars(const RunPlan& p, const std::string& title,
                          const std::vector<Bars>& figures, const std::string& id,
                          bool (*take)(const Row&)) {
  const ExperimentResult& e = *p.run;
  std::vector<const Row*> rows;
  for (const Row& r : e.rows)
    if (!take || take(r)) rows.push_back(&r);
  // The figures some row has, grouped by unit in their order.
  std::vector<std::pair<std::string, std::vector<std::pair<Bars, const Figure*>>>> units;
  for (const Bars& b : figures) {
    const Figure* shape = nullptr;
    for (const Row* r : rows)
      if (!shape) shape = FigureOf(*r, b.key);
    if (!shape) continue;
    auto at = std::find_if(units.begin(), units.end(),
                           [&](const auto& u) { return u.first == shape->unit; });
    if (at == units.end()) at = units.insert(units.end(), {shape->unit, {}});
    at->second.push_back({b, shape});
  }
  std::vector<json> out;
  if (rows.empty()) return out;
  for (const auto& [unit, bars] : units) {
    std::string names;
    for (const auto& [b, shape] : bars) names += (names.empty() ? "" : ", ") + std::string(b.name);
    json c = Picture(units.size() > 1 ? title + ": " + names : title, "bar",
                     Axis("x", e.row_label, "category"), out.empty() ? id : "");
    for (const Row* r : rows) c["labels"].push_back(RowLabel(c, *r));
    const std::string y = YAxisFor(c, unit, "linear", bars.size() == 1 ? bars[0].first.name : "");
    for (const auto& [b, shape] : bars) {
      json d = Dataset(b.name, y, json::array());
      for (const Row* r : rows) AddValue(d, FigureOf(*r, b.key));
      c["datasets"].push_back(std::move(d));
      c["covers"].push_back(b.key);
    }
    out.push_back(std::move(c));
  }
  return out;
}

json TradeOff(const RunPlan& p, const std::string& title, const char* x_key, const char* y_key,
              const std::string& id) {
  json c;
  std::string y;
  for (const Row& r : p.run->rows) {
    const Figure* x = FigureOf(r, x_key);
    const Figure* v = FigureOf(r, y_key);
    if (!x || !v || x->value.samples.size() != v->value.samples.size()) continue;
    if (c.is_null()) {
      c = Picture(title, "line", Axis("x", x->label + " (" + x->unit + ")", "logarithmic"), id);
      y = YAxisFor(c, v->unit, "linear", v->label);
      c["covers"] = json::array({x_key, y_key});
    }
    json pts = json::array();
    for (size_t i = 0; i < x->value.samples.size(); ++i)
      if (x->value.samples[i] > 0)
        pts.push_back(json::array({x->value.samples[i], v->value.samples[i]}));
    json d = Dataset(r.name, y, std::move(pts));
    d["points"] = true;
    c["datasets"].push_back(std::move(d));
  }
  if (!c.is_null())
    c["caption"] =
        "Each point one trial of a row: further left, the bystander's fsync was calmer; higher, "
        "the writer was faster. A row whose points lie left of and above another's is better on "
        "both.";
  return c;
}

}  // namespace spec

std::vector<json> ExperimentPictures(const std::vector<const RunPlan*>& runs) {
  std::vector<json> out;
  const ReportHooks* hooks = runs.front()->hooks;
  if (hooks && hooks->picture) hooks->picture(runs, out);
  return out;
}

}  // namespace writelab
