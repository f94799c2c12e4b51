// SPDX-License-Identifier: MIT
// Which charts the report draws, decided from the shape of the result tree
// alone so that an experiment the report does not know is plotted too.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "report/html.h"
#include "report/html_plan.h"
#include "writelab/error.h"

namespace writelab {

using nlohmann::json;

namespace spec {

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
  c["kind"] = kind;  // "line", "bar" or "scatter"
  c["x"] = std::move(x);
  c["y"] = json::array();
  c["labels"] = json::array();
  c["datasets"] = json::array();
  c["notes"] = json::array();
  return c;
}

std::string YAxisFor(json& chart, const std::string& unit, const std::string& type,
                     const std::string& name) {
  for (const json& a : chart["y"])
    if (a["unit"] == unit && a["name"] == name) return a["id"];
  std::string id = "y" + std::to_string(chart["y"].size());
  json a = Axis(id, name.empty() ? unit : name + " (" + unit + ")", type);
  a["unit"] = unit;
  a["name"] = name;
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

void AddValue(json& d, const Figure* f) {
  bool value = f && std::isfinite(f->value.median);
  d["data"].push_back(value ? json(f->value.median) : json(nullptr));
  bool spread = value && f->value.n >= 2 && f->value.min != f->value.max;
  if (!d.contains("lo")) d["lo"] = json::array(), d["hi"] = json::array();
  d["lo"].push_back(spread ? json(f->value.min) : json(nullptr));
  d["hi"].push_back(spread ? json(f->value.max) : json(nullptr));
}

std::string RowLabel(json& chart, const Row& r) {
  if (r.status == RowStatus::kOk) return r.name;
  std::string why =
      r.error_code ? std::string(ErrnoName(r.error_code)) + ": " + r.message : r.message;
  std::string note = r.name + ": " + RowStatusName(r.status) + " (" + why + ")";
  if (std::find(chart["notes"].begin(), chart["notes"].end(), note) == chart["notes"].end())
    chart["notes"].push_back(note);
  return r.name + " (" + RowStatusName(r.status) + ")";
}

}  // namespace spec

namespace {

using spec::Axis;
using spec::Chart;
using spec::Dataset;
using spec::YAxisFor;

std::string PercentileLabel(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

// A row's distribution as (latency ms, % of samples at or below) at each
// non-empty bucket's upper end.
json CdfPoints(const Latency& l) {
  json data = json::array();
  uint64_t seen = 0;
  for (const Latency::Bucket& b : l.buckets) {
    seen += b.count;
    double ms = static_cast<double>(std::max<uint64_t>(std::min(b.high_ns, l.max_ns), 1)) / 1e6;
    data.push_back(
        json::array({ms, 100.0 * static_cast<double>(seen) / static_cast<double>(l.count)}));
  }
  return data;
}

// A CDF per latency key, a line per row on a log latency axis, with each
// row's p50/p99/p99.9 marked (those its samples support).
void AddLatencyCharts(const ExperimentResult& e, const std::string& run, std::vector<json>& out) {
  std::vector<std::string> keys;
  for (const Row& r : e.rows)
    for (const Latency& l : r.latencies)
      if (std::find(keys.begin(), keys.end(), l.key) == keys.end()) keys.push_back(l.key);
  for (const std::string& key : keys) {
    std::string label = key;
    for (const Row& r : e.rows)
      if (const Latency* l = r.FindLatency(key)) label = l->label;
    json c = Chart(e.name + " latency: " + label + " — " + run, "line",
                   Axis("x", "latency (ms)", "logarithmic"));
    c["x"]["unit"] = "ms";
    c["x"]["name"] = "latency";
    std::string y = YAxisFor(c, "%", "linear", "samples at or below");
    json marks = Dataset("p50 / p99 / p99.9", y, json::array());
    marks["marks"] = true;
    marks["names"] = json::array();
    for (const Row& r : e.rows) {
      const Latency* l = r.FindLatency(key);
      if (!l || l->count == 0 || l->buckets.empty()) continue;
      c["datasets"].push_back(Dataset(r.name, y, CdfPoints(*l)));
      for (const auto& [p, ns] : l->percentiles_ns) {
        if (p != 50 && p != 99 && p != 99.9) continue;
        marks["data"].push_back(
            json::array({static_cast<double>(std::max<uint64_t>(ns, 1)) / 1e6, p}));
        marks["names"].push_back(r.name + " " + PercentileLabel(p));
      }
    }
    if (c["datasets"].empty()) continue;
    if (!marks["data"].empty()) c["datasets"].push_back(std::move(marks));
    c["caption"] =
        "How many calls (y) took at most this long (x, log scale), all trials together: a line "
        "further left is faster, and its top right is the slowest calls (p99 and p99.9 marked).";
    out.push_back(std::move(c));
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
// axis when the rows are positive numbers (stride's steps), else grouped
// bars. Each value carries its trials' min-max; a row that was not measured
// is labelled so, with its errno in the chart's notes, never an empty bar.
std::vector<json> FigureCharts(const std::vector<const RunPlan*>& runs) {
  const ExperimentResult& first = *runs.front()->run;
  std::vector<std::string> rows;
  for (const RunPlan* p : runs)
    for (const Row& r : p->run->rows)
      if (std::find(rows.begin(), rows.end(), r.name) == rows.end()) rows.push_back(r.name);
  bool numeric = NumericRows(rows);
  std::vector<json> out;
  for (const std::string& key : first.table) {
    if (first.ranks > 0 && key == "ranks") continue;  // MPI: how many ranks, no chart
    const Figure* shape = nullptr;
    for (const Row& r : first.rows)
      if (!shape) shape = r.FindFigure(key);
    if (!shape) continue;
    std::string title = first.name + ": " + shape->label;
    json c = numeric ? Chart(title, "line", Axis("x", first.row_label, "logarithmic"))
                     : Chart(title, "bar", Axis("x", first.row_label, "category"));
    c["figure"] = key;
    c["caption"] = shape->label + " per " + first.row_label +
                   ": the median of the trials, the whisker their min–max" +
                   (shape->includes.empty() ? "" : " (" + shape->includes + ")") +
                   ". Whiskers that overlap mean the trials cannot tell those rows apart.";
    c["rows_on_x"] = numeric;
    std::string y = YAxisFor(c, shape->unit);
    for (const RunPlan* p : runs) {
      json d = Dataset(runs.size() > 1 ? p->label : shape->label, y, json::array());
      for (const std::string& name : rows) {
        const Row* row = p->run->FindRow(name);
        const Figure* f = row && row->status == RowStatus::kOk ? row->FindFigure(key) : nullptr;
        if (row && row->status != RowStatus::kOk) spec::RowLabel(c, *row);
        if (!numeric) {
          spec::AddValue(d, f);
        } else if (f && std::isfinite(f->value.median)) {
          json point = {{"data", json::array()}};  // the value, then its whisker
          spec::AddValue(point, f);
          d["data"].push_back(json::array({RowNumber(name), point["data"][0]}));
          d["lo"].push_back(point["lo"][0]), d["hi"].push_back(point["hi"][0]);
        }
      }
      c["datasets"].push_back(std::move(d));
    }
    if (!numeric) {
      for (const std::string& name : rows) {
        const Row* row = first.FindRow(name);
        json scratch = json::object();
        scratch["notes"] = json::array();
        c["labels"].push_back(row ? spec::RowLabel(scratch, *row) : name);
      }
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
      {"what the write and sync calls' threads did",
       "%",
       {{"x_cpu_pct", "on CPU"},
        {"x_runq_pct", "waiting for a CPU"},
        {"x_journal_pct", "journal commit"},
        {"x_writeback_pct", "its writes"},
        {"x_flush_pct", "cache flush"},
        {"x_dirty_wait_pct", "dirty throttling"},
        {"x_other_pct", "other sleep"}}},
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
    c["caption"] =
        "Where each row's time went, counted in the kernel (--explain, docs/explain.md): "
        "the largest share is what to look at first.";
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

// Whether the runs of a group differ in what a figure chart compares: the
// file they come from, the test bed or the scheduler.
bool ComparesRuns(const std::vector<const RunPlan*>& runs) {
  std::set<std::tuple<size_t, std::string, std::string>> kinds;
  for (const RunPlan* p : runs) kinds.insert({p->doc, p->run->testbed, p->run->scheduler});
  return kinds.size() > 1;
}

std::string RunLabel(const ExperimentResult& e, const std::vector<Document>& docs, size_t doc) {
  // A survey's step by its purpose (two stream runs on one directory, or
  // stride's files of random names, would read alike by their path).
  std::string label = !e.purpose.empty() ? e.purpose + (e.testbed.empty() ? "" : " on " + e.testbed)
                      : e.testbed.empty() ? e.target.path
                                          : e.testbed;
  if (!e.scheduler.empty()) label += "/" + e.scheduler;
  if (e.ranks > 0) label += " (" + std::to_string(e.ranks) + (e.ranks == 1 ? " rank)" : " ranks)");
  if (e.rank >= 0) label += " (rank " + std::to_string(e.rank) + ")";
  if (docs.size() > 1) label += " (" + DocLabel(docs, doc) + ")";
  return label;
}

// The unit an axis is drawn in, chosen by the largest value on it.
struct Display {
  std::string unit;
  double divisor = 1;
};

Display DisplayFor(const std::string& unit, double max) {
  if (unit == "bytes") {
    const char* names[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    double d = 1;
    while (i < 4 && max >= d * 1024) d *= 1024, ++i;
    return {names[i], d};
  }
  if (unit == "ms")
    return max < 1 ? Display{"µs", 1e-3} : max >= 1e4 ? Display{"s", 1e3} : Display{"ms", 1};
  if (unit == "s") return max < 1 ? Display{"ms", 1e-3} : Display{"s", 1};
  if (unit == "ns")
    return max >= 1e9   ? Display{"s", 1e9}
           : max >= 1e6 ? Display{"ms", 1e6}
           : max >= 1e3 ? Display{"µs", 1e3}
                        : Display{"ns", 1};
  return {unit, 1};
}

// Every number a dataset draws on an axis: slot 0 (x) or 1 (y) of points,
// the numbers of a category dataset, and the whiskers.
template <typename Visit>
void EachValue(json& d, bool category, int slot, Visit visit) {
  for (json& v : d["data"]) {
    json& n = category ? v : v[slot];
    if (n.is_number()) visit(n);
  }
  if (slot == 0) return;
  for (const char* k : {"lo", "hi"})
    if (d.contains(k))
      for (json& n : d[k])
        if (n.is_number()) visit(n);
}

void ScaleAxis(json& chart, json& axis, bool x) {
  if (!axis.contains("unit")) return;
  bool category = chart["x"]["type"] == "category";
  std::string id = axis["id"];
  auto each = [&](auto visit) {
    for (json& d : chart["datasets"])
      if (x || d["axis"] == id) EachValue(d, category, x ? 0 : 1, visit);
  };
  double max = 0;
  each([&](json& n) { max = std::max(max, std::fabs(n.get<double>())); });
  Display show = DisplayFor(axis["unit"], max);
  if (show.divisor != 1) each([&](json& n) { n = n.get<double>() / show.divisor; });
  std::string name = axis.value("name", "");
  axis["title"] = name.empty() || name == show.unit ? show.unit : name + " (" + show.unit + ")";
}

// Values drawn, percentile marks not counted.
size_t Points(const json& chart) {
  size_t n = 0;
  for (const json& d : chart["datasets"])
    if (!d.contains("marks"))
      for (const json& v : d["data"]) n += !v.is_null();
  return n;
}

// Chart.js takes unparsed points as sorted by x: sort each dataset's points,
// and its whiskers and names with them (stride's steps run in any order).
void SortByX(json& chart) {
  if (chart["x"]["type"] == "category") return;
  for (json& d : chart["datasets"]) {
    const size_t n = d["data"].size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return d["data"][a][0].get<double>() < d["data"][b][0].get<double>();
    });
    for (const char* key : {"data", "lo", "hi", "names"}) {
      if (!d.contains(key) || d[key].size() != n) continue;
      json sorted = json::array();
      for (size_t i : order) sorted.push_back(d[key][i]);
      d[key] = std::move(sorted);
    }
  }
}

// A figure against fewer than 5 numeric rows (stride's steps) is drawn as
// bars, a bar per row, rather than as a line of too few points.
void AsBars(json& chart) {
  std::set<double> xs;
  for (const json& d : chart["datasets"])
    for (const json& p : d["data"]) xs.insert(p[0].get<double>());
  chart["labels"] = json::array();
  for (double x : xs) chart["labels"].push_back(fmt::format("{}", x));  // "1048576", as the row
  for (json& d : chart["datasets"]) {
    json out = json::object();
    for (const char* key : {"data", "lo", "hi"}) out[key] = json::array();
    for (double x : xs) {
      size_t i = 0;
      while (i < d["data"].size() && d["data"][i][0].get<double>() != x) ++i;
      bool has = i < d["data"].size();
      out["data"].push_back(has ? d["data"][i][1] : json(nullptr));
      for (const char* key : {"lo", "hi"})
        out[key].push_back(has && d.contains(key) ? d[key][i] : json(nullptr));
    }
    for (const char* key : {"data", "lo", "hi"}) d[key] = std::move(out[key]);
  }
  chart["kind"] = "bar";
  chart["x"]["type"] = "category";
}

// compare -o: a row whose figure changed significantly is starred on the
// chart, with the change, its interval and p in the chart's notes.
void MarkChanges(json& chart, const std::string& experiment, const Comparison& c) {
  if (!chart.contains("figure")) return;
  for (const FigureComparison& f : c.figures) {
    bool same = f.experiment == experiment || f.experiment.starts_with(experiment + " ");
    if (!same || f.key != chart["figure"] || f.verdict != Verdict::kSignificant) continue;
    for (json& label : chart["labels"])
      if (label == f.row) label = f.row + " *";
    std::string interval = f.change_low_pct ? fmt::format(" [{:+.1f}%, {:+.1f}%]",
                                                          *f.change_low_pct, *f.change_high_pct)
                                            : "";
    chart["changes"].push_back(fmt::format("* {}{}: {} {}{}, significant (p {:.3g})", f.experiment,
                                           " " + f.row, f.label, PercentChange(f.a, f.b), interval,
                                           f.p.value_or(1)));
  }
}

}  // namespace

void ScaleAxes(json& c) {
  if (c["x"]["type"] != "category") ScaleAxis(c, c["x"], true);
  for (json& a : c["y"]) ScaleAxis(c, a, false);
}

void FinishCharts(std::vector<json>& charts, std::vector<std::string>* gone) {
  for (json& c : charts) {
    DropZeroSeries(c);
    if (gone && c["datasets"].empty() && c.contains("zero")) {
      std::string list;
      for (const json& name : c["zero"])
        list += (list.empty() ? "" : ", ") + name.get<std::string>();
      gone->push_back(c["title"].get<std::string>() + ": " + list + " 0 throughout");
    }
    SortByX(c);
    if (c["kind"] == "line" && Points(c) < 5 && c.value("rows_on_x", false)) AsBars(c);
  }
  std::erase_if(charts, [](const json& c) {
    return Points(c) == 0 || (c["kind"] == "line" && Points(c) < 5);
  });
  for (json& c : charts) ScaleAxes(c);
}

std::vector<GroupPlan> PlanReport(const std::vector<Document>& docs, const ReportBook& book,
                                  const Comparison* comparison) {
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
      run.hooks = book.Find(e.name);
      run.doc = d;
      run.label = RunLabel(e, docs, d);
      AddSeriesCharts(e, run.label, run.charts);
      AddLatencyCharts(e, run.label, run.charts);
      AddExplainCharts(e, run.label, run.charts);
      g->runs.push_back(std::move(run));
    }
  }
  for (GroupPlan& g : groups) {
    std::vector<const RunPlan*> runs;
    for (const RunPlan& r : g.runs) runs.push_back(&r);
    g.pictures = ExperimentPictures(runs);
    g.charts = FigureCharts(runs);
    // Drawn open where they compare what no single table holds (runs of
    // several files, test beds or schedulers, or compare -o); else folded:
    // the run's table above has the same numbers.
    if (!comparison && !ComparesRuns(runs))
      for (json& c : g.charts) {
        c["fold"] = true;
        c["fold_why"] = "the figures of the table above, as bars";
      }
    FinishCharts(g.pictures, &g.gone);
    FinishCharts(g.charts, &g.gone);
    for (RunPlan& r : g.runs) FinishCharts(r.charts, &g.gone);
    if (comparison) {
      for (json& c : g.charts) MarkChanges(c, g.name, *comparison);
      continue;
    }
    // A figure a picture already draws is not drawn again.
    std::erase_if(g.charts, [&](const json& c) {
      return std::any_of(g.pictures.begin(), g.pictures.end(), [&](const json& p) {
        return p.contains("covers") &&
               std::find(p["covers"].begin(), p["covers"].end(), c["figure"]) != p["covers"].end();
      });
    });
  }
  return groups;
}

std::string ChartSpecsJson(const std::vector<Document>& docs, const ReportBook& book,
                           const Comparison* comparison) {
  return ChartSpecsJson(PlanReport(docs, book, comparison));
}

std::vector<const json*> OpenCharts(const std::vector<json>& charts) {
  std::vector<const json*> out;
  for (const json& c : charts)
    if (!c.value("fold", false)) out.push_back(&c);
  return out;
}

std::vector<const json*> FoldedCharts(const GroupPlan& g) {
  std::vector<const json*> out;
  for (const json& c : g.charts)
    if (c.value("fold", false)) out.push_back(&c);
  for (const RunPlan& r : g.runs)
    for (const json& c : r.charts)
      if (c.value("fold", false)) out.push_back(&c);
  return out;
}

std::string ChartSpecsJson(const std::vector<GroupPlan>& groups) {
  json all = json::array();
  for (const GroupPlan& g : groups) {
    for (const json* c : OpenCharts(g.pictures)) all.push_back(*c);
    for (const json* c : OpenCharts(g.charts)) all.push_back(*c);
    for (const RunPlan& r : g.runs)
      for (const json* c : OpenCharts(r.charts)) all.push_back(*c);
    for (const json* c : FoldedCharts(g)) all.push_back(*c);
  }
  return all.dump(-1, ' ', true, json::error_handler_t::replace);
}

}  // namespace writelab
