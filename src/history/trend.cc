// SPDX-License-Identifier: MIT
#include "history/trend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/document_json.h"
#include "core/significance.h"
#include "core/units.h"
#include "history/changes.h"
#include "report/compare.h"
#include "report/html_plan.h"
#include "report/text.h"

namespace writelab {

using nlohmann::json;

namespace {

// "plain", "plain on ext4:nojournal/bfq", "plain (stream 2)".
std::string SeriesName(const std::string& row, const std::string& testbed,
                       const std::string& scheduler, const std::string& experiment, int occurrence,
                       int occurrences) {
  std::string name = row;
  if (!testbed.empty()) name += " on " + testbed;
  if (!scheduler.empty()) name += (testbed.empty() ? " under " : "/") + scheduler;
  if (occurrences > 1) name += " (" + experiment + " " + std::to_string(occurrence) + ")";
  return name;
}

// Per run and (test bed, scheduler): the indexes of the experiments named
// q.experiment that have q.figure, in document order.
using Occurrences = std::map<std::tuple<int64_t, std::string, std::string>, std::vector<int64_t>>;

Result<Occurrences> FindOccurrences(sqlite3* db, const TrendQuery& q, const std::string& what) {
  auto st = Statement::Prepare(
      db,
      "SELECT DISTINCT run_id, testbed, scheduler, experiment_index FROM figures WHERE "
      "experiment = ? AND figure = ? AND mpi_rank = -1 ORDER BY run_id, experiment_index",
      what);
  if (!st) return std::unexpected(st.error());
  st->Bind(1, q.experiment).Bind(2, q.figure);
  Occurrences out;
  while (true) {
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    auto run = st->Int(0);
    auto testbed = st->Text(1);
    auto scheduler = st->Text(2);
    auto index = st->Int(3);
    for (const Error* e :
         {run ? nullptr : &run.error(), testbed ? nullptr : &testbed.error(),
          scheduler ? nullptr : &scheduler.error(), index ? nullptr : &index.error()})
      if (e) return std::unexpected(*e);
    out[{*run, *testbed, *scheduler}].push_back(*index);
  }
}

std::string Axis(const TrendPoint& p) {
  std::string run = "run " + std::to_string(p.run_id);
  return p.label.empty() ? run + " " + p.kernel : run + " " + p.kernel + " " + p.label;
}

std::string StepText(const std::optional<TrendStep>& s) {
  if (!s || !s->change_pct) return "";
  std::string text = fmt::format("{:+.1f}%", *s->change_pct);
  if (s->significant) return text + " (significant, p " + fmt::format("{:.2g}", *s->p) + ")";
  return text + " (" + VerdictText(s->verdict) + ")";
}

}  // namespace

Result<std::vector<TrendPoint>> HistoryStore::Trend(const TrendQuery& q) const {
  const std::string what = "history " + path_ + ": trend";
  auto occurrences = FindOccurrences(db(), q, what);
  if (!occurrences) return std::unexpected(occurrences.error());
  std::string sql =
      "SELECT f.run_id, r.started_at, r.hostname, r.kernel, r.label, f.experiment_index, "
      "f.testbed, f.scheduler, f.row_name, f.label, f.unit, f.median, f.minimum, f.maximum, "
      "f.n, f.samples FROM figures f JOIN runs r ON r.id = f.run_id WHERE f.experiment = ? AND "
      "f.figure = ? AND f.mpi_rank = -1";
  std::vector<std::string> args = {q.experiment, q.figure};
  if (!q.row.empty()) sql += " AND f.row_name = ?", args.push_back(q.row);
  if (!q.runs.host.empty()) sql += " AND r.hostname = ?", args.push_back(q.runs.host);
  if (!q.runs.kernel.empty()) {
    sql +=
        q.runs.kernel.find('*') != std::string::npos ? " AND r.kernel GLOB ?" : " AND r.kernel = ?";
    args.push_back(q.runs.kernel);
  }
  if (!q.runs.label.empty()) sql += " AND r.label = ?", args.push_back(q.runs.label);
  if (q.runs.up_to_run > 0) sql += " AND r.id <= " + std::to_string(q.runs.up_to_run);
  sql += " ORDER BY r.started_at, r.id, f.experiment_index, f.rowid";
  auto st = Statement::Prepare(db(), sql, what);
  if (!st) return std::unexpected(st.error());
  for (size_t i = 0; i < args.size(); ++i) st->Bind(static_cast<int>(i + 1), args[i]);
  std::vector<TrendPoint> out;
  while (true) {
    auto row = st->Step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    TrendPoint p;
    std::string testbed, scheduler, name;
    std::pair<int, std::string*> texts[] = {
        {1, &p.started_at}, {2, &p.hostname}, {3, &p.kernel},       {4, &p.label}, {6, &testbed},
        {7, &scheduler},    {8, &name},       {9, &p.figure_label}, {10, &p.unit}};
    for (auto& [column, into] : texts) {
      auto v = st->Text(column);
      if (!v) return std::unexpected(v.error());
      *into = std::move(*v);
    }
    auto run = st->Int(0);
    auto index = st->Int(5);
    auto median = st->RealOrNull(11);
    auto min = st->RealOrNull(12);
    auto max = st->RealOrNull(13);
    auto n = st->Int(14);
    auto samples_text = st->Text(15);
    if (!run || !index || !median || !min || !max || !n || !samples_text)
      return std::unexpected(
          PlainError(what + ": a figure row of the wrong type (a damaged history?)"));
    auto samples = SamplesFromJson(*samples_text);
    if (!samples)
      return std::unexpected(
          PlainError(what + ": run " + std::to_string(*run) + ": " + samples.error()));
    if (*n < 0 || *n > static_cast<int64_t>(kMaxSamples))
      return std::unexpected(
          PlainError(what + ": run " + std::to_string(*run) + ": n out of range"));
    const auto& same = (*occurrences)[{*run, testbed, scheduler}];
    const auto at = std::find(same.begin(), same.end(), *index);
    p.run_id = *run;
    p.row = name, p.testbed = testbed, p.scheduler = scheduler;
    p.series = SeriesName(name, testbed, scheduler, q.experiment,
                          static_cast<int>(at - same.begin()) + 1, static_cast<int>(same.size()));
    p.median = *median, p.min = *min, p.max = *max, p.n = static_cast<int>(*n);
    p.samples = std::move(*samples);
    out.push_back(std::move(p));
  }
}

std::vector<std::optional<TrendStep>> TrendSteps(const std::vector<TrendPoint>& points) {
  std::vector<std::optional<TrendStep>> out(points.size());
  std::map<std::string, size_t> last;  // series -> its previous point
  for (size_t i = 0; i < points.size(); ++i) {
    const TrendPoint& p = points[i];
    auto prev = last.find(p.series);
    if (prev != last.end()) {
      const TrendPoint& a = points[prev->second];
      TrendStep s;
      if (a.median != 0 && std::isfinite(a.median) && std::isfinite(p.median))
        s.change_pct = 100.0 * (p.median - a.median) / std::fabs(a.median);
      Summary sa, sb;
      sa.samples = a.samples, sa.n = a.n;
      sb.samples = p.samples, sb.n = p.n;
      if (sa.samples.size() >= 2 && sb.samples.size() >= 2) {
        s.p = MannWhitneyP(sa.samples, sb.samples);
      }
      s.verdict = CompareSummaries(sa, sb);
      s.significant = s.verdict == Verdict::kSignificant;
      out[i] = s;
    }
    last[p.series] = i;
  }
  return out;
}

std::map<size_t, ChangePoint> TrendChangePoints(const std::vector<TrendPoint>& points) {
  std::map<size_t, ChangePoint> out;
  for (const std::vector<size_t>& at : SplitSeries(points)) {
    std::vector<double> values;
    for (size_t i : at) values.push_back(points[i].median);
    for (const ChangePoint& c : FindChangePoints(values)) out[at[c.index]] = c;
  }
  return out;
}

std::string RenderTrendText(const TrendQuery& q, const std::vector<TrendPoint>& points) {
  std::string label = points.empty() ? q.figure : points.front().figure_label;
  std::string unit = points.empty() ? "" : points.front().unit;
  std::set<int64_t> runs;
  for (const TrendPoint& p : points) runs.insert(p.run_id);
  const std::string what = label == unit || unit.empty() ? label : label + ", " + unit;
  std::string out = fmt::format("{} {} ({}){}: {} runs\n", q.experiment, q.figure, what,
                                q.row.empty() ? "" : ", row " + q.row, runs.size());
  TextTable t(
      {"run", "started", "kernel", "label", "row", "median", "min – max", "n", "vs previous"});
  const auto steps = TrendSteps(points);
  const auto changes = TrendChangePoints(points);
  for (size_t i = 0; i < points.size(); ++i) {
    const TrendPoint& p = points[i];
    std::string step = StepText(steps[i]);
    if (auto c = changes.find(i); c != changes.end())
      step += fmt::format("{}change point: {:+.1f}% on the runs before (p {:.2g})",
                          step.empty() ? "" : "; ", c->second.change_pct, c->second.p_value);
    t.AddRow({std::to_string(p.run_id), p.started_at, p.kernel, p.label, p.series,
              FormatValue(p.median, p.unit),
              FormatValue(p.min, p.unit) + " – " + FormatValue(p.max, p.unit), std::to_string(p.n),
              step});
  }
  std::string legend;
  if (!changes.empty())
    legend =
        "change point: the series moved to a new level from this run on (history changes; "
        "docs/history.md)\n";
  return out + t.Render() + legend;
}

namespace {

// A series' change points as triangles on the chart, at the run each began
// (null elsewhere), each named with its size and p; null when it has none.
json ChangeMarks(const std::vector<TrendPoint>& points,
                 const std::map<size_t, ChangePoint>& changes, const std::vector<int64_t>& runs,
                 const std::string& series, const std::string& axis) {
  json marks = spec::Dataset("change points: " + series, axis, json::array());
  marks["changes"] = true;
  marks["names"] = json::array();
  bool any = false;
  for (int64_t id : runs) {
    json value = nullptr;
    std::string name;
    for (const auto& [i, cp] : changes)
      if (points[i].run_id == id && points[i].series == series) {
        value = points[i].median, any = true;
        name = fmt::format("change point: {:+.1f}% from this run on (p {:.2g})", cp.change_pct,
                           cp.p_value);
      }
    marks["data"].push_back(value);
    marks["names"].push_back(name);
  }
  return any ? marks : json();
}

}  // namespace

std::string RenderTrendHtml(const TrendQuery& q, const std::vector<TrendPoint>& points,
                            const HtmlAssets& assets) {
  std::vector<int64_t> runs;
  std::vector<std::string> series;
  for (const TrendPoint& p : points) {
    if (std::find(runs.begin(), runs.end(), p.run_id) == runs.end()) runs.push_back(p.run_id);
    if (std::find(series.begin(), series.end(), p.series) == series.end())
      series.push_back(p.series);
  }
  const auto changes = TrendChangePoints(points);
  const std::string label = points.empty() ? q.figure : points.front().figure_label;
  json c = spec::Chart(q.experiment + ": " + label + " across runs", "line",
                       spec::Axis("x", "run (kernel, label)", "category"));
  c["picture"] = "trend";  // the page's one chart, drawn the page's width
  // A log axis where the rows' medians differ by more than 50x, so that the
  // slow rows' steps show beside the fast ones.
  double low = 0, high = 0;
  for (const TrendPoint& p : points)
    if (std::isfinite(p.median) && p.median > 0) {
      low = low == 0 ? p.median : std::min(low, p.median);
      high = std::max(high, p.median);
    }
  const bool log = low > 0 && high / low > 50;
  std::string y = spec::YAxisFor(c, points.empty() ? "" : points.front().unit,
                                 log ? "logarithmic" : "linear", label);
  for (int64_t id : runs)
    for (const TrendPoint& p : points)
      if (p.run_id == id) {
        c["labels"].push_back(Axis(p));
        break;
      }
  for (size_t s = 0; s < series.size(); ++s) {
    json hi = spec::Dataset(series[s] + " max", y, json::array());
    json lo = spec::Dataset(series[s] + " min", y, json::array());
    json mid = spec::Dataset(series[s], y, json::array());
    for (int64_t id : runs) {
      auto at = std::find_if(points.begin(), points.end(), [&](const TrendPoint& p) {
        return p.run_id == id && p.series == series[s];
      });
      bool has = at != points.end() && std::isfinite(at->median);
      mid["data"].push_back(has ? json(at->median) : json(nullptr));
      hi["data"].push_back(has ? json(at->max) : json(nullptr));
      lo["data"].push_back(has ? json(at->min) : json(nullptr));
    }
    hi["band"] = "upper", lo["band"] = "lower";
    for (json* d : {&hi, &lo, &mid}) (*d)["color"] = s;
    for (json* d : {&hi, &lo, &mid}) c["datasets"].push_back(std::move(*d));
    if (json marks = ChangeMarks(points, changes, runs, series[s], y); !marks.is_null()) {
      marks["color"] = s;
      c["datasets"].push_back(std::move(marks));
    }
  }
  c["caption"] =
      "Each line is a row's median over its trials, the shaded band its min–max; a "
      "step marked significant in the table below is beyond the trials' noise; a triangle is "
      "a change point, the run from which the series holds a new level (history changes).";
  ScaleAxes(c);
  std::vector<json> charts = {c};
  std::string intro = "<p>" + EscapeHtml(q.experiment + " " + q.figure) + " in the history, " +
                      std::to_string(runs.size()) + " runs, oldest first.</p>\n";
  std::string table = "<pre>" + EscapeHtml(RenderTrendText(q, points)) + "</pre>\n";
  return RenderChartsPage("writelab history trend", intro, charts, table, assets);
}

}  // namespace writelab
