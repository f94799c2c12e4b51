// SPDX-License-Identifier: MIT
// The building blocks of the experiments' pictures (each experiment draws its
// own, src/experiments/NAME/picture.cc), and the page's call to them.
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

json RowBars(const RunPlan& p, const std::string& title, const std::vector<Bars>& figures,
             const std::string& id, bool (*take)(const Row&)) {
  const ExperimentResult& e = *p.run;
  json c = Picture(title, "bar", Axis("x", e.row_label, "category"), id);
  std::vector<const Row*> rows;
  for (const Row& r : e.rows)
    if (!take || take(r)) rows.push_back(&r);
  for (const Row* r : rows) c["labels"].push_back(RowLabel(c, *r));
  for (const Bars& b : figures) {
    const Figure* shape = nullptr;
    for (const Row* r : rows)
      if (!shape) shape = FigureOf(*r, b.key);
    if (!shape) continue;
    json d = Dataset(b.name, YAxisFor(c, shape->unit, "linear", b.name), json::array());
    for (const Row* r : rows) AddValue(d, FigureOf(*r, b.key));
    c["datasets"].push_back(std::move(d));
    c["covers"].push_back(b.key);
  }
  if (c["datasets"].empty() || rows.empty()) return nullptr;
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
