// SPDX-License-Identifier: MIT
// Which charts the report draws, decided from the shape of the result tree
// alone so that an experiment the report does not know is plotted too.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "report/html.h"
#include "report/html_plan.h"

namespace writelab {
namespace {

using nlohmann::json;

json Axis(const std::string& id, const std::string& title, const std::string& type) {
  json a = json::object();
  a["id"] = id;
  a["title"] = title;
  a["type"] = type;  // "linear", "logarithmic", "category"
  return a;
}

json Chart(const std::string& title, const std::string& kind, json x) {
  json c = json::object();
  c["title"] = title;
  c["kind"] = kind;  // "line" or "bar"
  c["x"] = std::move(x);
  c["y"] = json::array();
  c["labels"] = json::array();
  c["datasets"] = json::array();
  return c;
}

std::string AxisTitle(const Column& c) {
  return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")";
}

// The y axis for a unit, added on first use; sides alternate.
std::string YAxisFor(json& chart, const std::string& unit, const std::string& type = "linear") {
  for (const json& a : chart["y"])
    if (a["unit"] == unit) return a["id"];
  std::string id = "y" + std::to_string(chart["y"].size());
  json a = Axis(id, unit, type);
  a["unit"] = unit;
  a["right"] = chart["y"].size() % 2 == 1;
  chart["y"].push_back(std::move(a));
  return id;
}

json Dataset(const std::string& label, const std::string& axis, json data) {
  json d = json::object();
  d["label"] = label;
  d["axis"] = axis;
  d["data"] = std::move(data);
  return d;
}

// Points (x, column) of one series; non-finite values are left out.
json XY(const Series& s, size_t column) {
  json data = json::array();
  for (const auto& p : s.points)
    if (p.size() > column && std::isfinite(p[0]) && std::isfinite(p[column]))
      data.push_back(json::array({p[0], p[column]}));
  return data;
}

// The first trial's series of each row with the given key.
std::vector<std::pair<const Row*, const Series*>> FirstTrials(const ExperimentResult& e,
                                                              const std::string& key) {
  std::vector<std::pair<const Row*, const Series*>> out;
  for (const Row& r : e.rows) {
    const Series* first = nullptr;
    for (const Series& s : r.series)
      if (s.key == key && (!first || s.trial < first->trial)) first = &s;
    if (first && !first->columns.empty()) out.push_back({&r, first});
  }
  return out;
}

void AddSeriesCharts(const ExperimentResult& e, const std::string& run, std::vector<json>& out) {
  std::vector<std::string> keys;
  for (const Row& r : e.rows)
    for (const Series& s : r.series)
      if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
  for (const std::string& key : keys) {
    auto rows = FirstTrials(e, key);
    if (rows.empty()) continue;
    const Series& shape = *rows.front().second;
    size_t width = shape.columns.size();
    if (width < 2) continue;
    int trials = 0;
    for (const Row& r : e.rows)
      for (const Series& s : r.series)
        if (s.key == key) trials = std::max(trials, s.trial + 1);
    std::string suffix = trials > 1 ? " (first of " + std::to_string(trials) + " trials)" : "";
    // Rows side by side on the first value column.
    if (rows.size() > 1 || width == 2) {
      json c = Chart(e.name + " " + key + ": " + shape.columns[1].name + " per " + e.row_label +
                         suffix + " — " + run,
                     "line", Axis("x", AxisTitle(shape.columns[0]), "linear"));
      std::string y = YAxisFor(c, shape.columns[1].unit);
      for (const auto& [r, s] : rows) c["datasets"].push_back(Dataset(r->name, y, XY(*s, 1)));
      out.push_back(std::move(c));
    }
    if (width == 2) continue;
    // Each row with all its columns: a chart per two units (a y axis each on
    // the left and right), so throughput shares a chart with Dirty/Writeback.
    std::vector<std::string> units;
    for (size_t i = 1; i < width; ++i)
      if (std::find(units.begin(), units.end(), shape.columns[i].unit) == units.end())
        units.push_back(shape.columns[i].unit);
    for (const auto& [r, s] : rows) {
      for (size_t u = 0; u < units.size(); u += 2) {
        json c = Chart(e.name + " " + key + ": " + r->name + suffix + " — " + run, "line",
                       Axis("x", AxisTitle(s->columns[0]), "linear"));
        for (size_t i = 1; i < s->columns.size(); ++i) {
          const std::string& unit = s->columns[i].unit;
          if (unit == units[u] || (u + 1 < units.size() && unit == units[u + 1]))
            c["datasets"].push_back(Dataset(s->columns[i].name, YAxisFor(c, unit), XY(*s, i)));
        }
        if (!c["datasets"].empty()) out.push_back(std::move(c));
      }
    }
  }
}

std::string PercentileLabel(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

// A percentile plot per latency key: a line per row, log y axis in ms.
void AddLatencyCharts(const ExperimentResult& e, const std::string& run, std::vector<json>& out) {
  std::vector<std::string> keys;
  for (const Row& r : e.rows)
    for (const Latency& l : r.latencies)
      if (std::find(keys.begin(), keys.end(), l.key) == keys.end()) keys.push_back(l.key);
  for (const std::string& key : keys) {
    std::set<double> ps;
    std::string label = key;
    for (const Row& r : e.rows)
      if (const Latency* l = r.FindLatency(key)) {
        label = l->label;
        for (const auto& [p, ns] : l->percentiles_ns) ps.insert(p);
      }
    json c = Chart(e.name + " latency: " + label + " — " + run, "line",
                   Axis("x", "percentile", "category"));
    for (double p : ps) c["labels"].push_back(PercentileLabel(p));
    std::string y = YAxisFor(c, "ms", "logarithmic");
    for (const Row& r : e.rows) {
      const Latency* l = r.FindLatency(key);
      if (!l || l->count == 0) continue;
      json data = json::array();
      for (double p : ps) {
        auto ns = l->At(p);
        data.push_back(ns && *ns > 0 ? json(static_cast<double>(*ns) / 1e6) : json(nullptr));
      }
      c["datasets"].push_back(Dataset(r.name, y, std::move(data)));
    }
    if (!c["datasets"].empty()) out.push_back(std::move(c));
  }
}

// A row name as a positive finite number ("16"), or 0 when it is not one.
// Row names come from result files: "1e999", "nan" and " 5" are not numbers.
double RowNumber(const std::string& name) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  bool whole = !name.empty() && ec == std::errc() && ptr == name.data() + name.size();
  return whole && std::isfinite(v) && v > 0 ? v : 0;
}

bool NumericRows(const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (RowNumber(n) == 0) return false;
  return !names.empty();
}

// Per table figure: the rows of every run side by side; a line over a log x
// axis when the rows are positive numbers (stride's steps), else grouped bars.
std::vector<json> FigureCharts(const std::vector<const RunPlan*>& runs) {
  const ExperimentResult& first = *runs.front()->run;
  std::vector<std::string> rows;
  for (const RunPlan* p : runs)
    for (const Row& r : p->run->rows)
      if (std::find(rows.begin(), rows.end(), r.name) == rows.end()) rows.push_back(r.name);
  bool numeric = NumericRows(rows);
  std::vector<json> out;
  for (const std::string& key : first.table) {
    const Figure* shape = nullptr;
    for (const Row& r : first.rows)
      if (!shape) shape = r.FindFigure(key);
    if (!shape) continue;
    std::string title = first.name + ": " + shape->label;
    json c = numeric ? Chart(title, "line", Axis("x", first.row_label, "logarithmic"))
                     : Chart(title, "bar", Axis("x", first.row_label, "category"));
    if (!numeric) c["labels"] = rows;
    std::string y = YAxisFor(c, shape->unit);
    for (const RunPlan* p : runs) {
      json data = json::array();
      for (const std::string& name : rows) {
        const Row* row = nullptr;
        for (const Row& r : p->run->rows)
          if (r.name == name) row = &r;
        const Figure* f = row && row->status == RowStatus::kOk ? row->FindFigure(key) : nullptr;
        bool finite = f && std::isfinite(f->value.median);
        if (numeric && finite) data.push_back(json::array({RowNumber(name), f->value.median}));
        if (!numeric) data.push_back(finite ? json(f->value.median) : json(nullptr));
      }
      c["datasets"].push_back(Dataset(runs.size() > 1 ? p->label : shape->label, y, data));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// --explain: a stacked bar per row of what its time went to, for each
// family of attribution figures the rows have.
void AddExplainCharts(const ExperimentResult& e, const std::string& run, std::vector<json>& out) {
  struct Part {
    const char* key;
    const char* label;
  };
  struct Family {
    const char* title;
    const char* unit;
    std::vector<Part> parts;
  };
  const Family families[] = {
      {"where the write and sync calls' time went",
       "%",
       {{"x_journal_pct", "journal commit"},
        {"x_flush_pct", "cache flush"},
        {"x_data_pct", "device writes"},
        {"x_other_pct", "other"}}},
      {"time throttled in balance_dirty_pages", "%", {{"x_throttled_pct", "throttled"}}},
      {"where a write request's time went",
       "ms",
       {{"x_queue_ms", "queue (insert to issue)"}, {"x_device_ms", "device (issue to complete)"}}},
  };
  for (const Family& fam : families) {
    std::vector<std::string> rows;
    for (const Row& r : e.rows)
      if (r.status == RowStatus::kOk && r.FindFigure(fam.parts[0].key)) rows.push_back(r.name);
    if (rows.empty()) continue;
    json c = Chart(e.name + ": " + fam.title + " (--explain, " + run + ")", "bar",
                   Axis("x", e.row_label, "category"));
    c["labels"] = rows;
    c["stacked"] = true;
    std::string y = YAxisFor(c, fam.unit);
    for (const Part& part : fam.parts) {
      json data = json::array();
      for (const std::string& name : rows) {
        const Figure* f = nullptr;
        for (const Row& r : e.rows)
          if (r.name == name) f = r.FindFigure(part.key);
        data.push_back(f ? json(f->value.median) : json(nullptr));
      }
      c["datasets"].push_back(Dataset(part.label, y, data));
    }
    out.push_back(std::move(c));
  }
}

std::string RunLabel(const ExperimentResult& e, size_t doc, size_t docs) {
  std::string label = e.testbed.empty() ? e.target.path : e.testbed;
  if (!e.scheduler.empty()) label += "/" + e.scheduler;
  if (docs > 1) label += " (file " + std::to_string(doc + 1) + ")";
  return label;
}

}  // namespace

std::vector<GroupPlan> PlanReport(const std::vector<Document>& docs) {
  std::vector<GroupPlan> groups;
  for (size_t d = 0; d < docs.size(); ++d) {
    for (const ExperimentResult& e : docs[d].experiments) {
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const GroupPlan& p) { return p.name == e.name; });
      if (g == groups.end()) {
        groups.push_back(GroupPlan{});
        g = groups.end() - 1;
        g->name = e.name;
      }
      RunPlan run;
      run.run = &e;
      run.label = RunLabel(e, d, docs.size());
      AddSeriesCharts(e, run.label, run.charts);
      AddLatencyCharts(e, run.label, run.charts);
      AddExplainCharts(e, run.label, run.charts);
      g->runs.push_back(std::move(run));
    }
  }
  for (GroupPlan& g : groups) {
    std::vector<const RunPlan*> runs;
    for (const RunPlan& r : g.runs) runs.push_back(&r);
    g.charts = FigureCharts(runs);
  }
  return groups;
}

std::string ChartSpecsJson(const std::vector<Document>& docs) {
  json all = json::array();
  for (const GroupPlan& g : PlanReport(docs)) {
    for (const json& c : g.charts) all.push_back(c);
    for (const RunPlan& r : g.runs)
      for (const json& c : r.charts) all.push_back(c);
  }
  return all.dump(-1, ' ', true, json::error_handler_t::replace);
}

}  // namespace writelab
