// SPDX-License-Identifier: MIT
#include "history/changes.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "core/stats.h"
#include "core/units.h"
#include "history/record.h"

namespace writelab {

std::vector<std::vector<size_t>> SplitSeries(const std::vector<TrendPoint>& points) {
  std::map<std::tuple<std::string, std::string, int>, size_t> index;  // host, row, n -> series
  std::map<std::pair<int64_t, std::string>, int> seen;                // run, row -> points so far
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < points.size(); ++i) {
    const TrendPoint& p = points[i];
    const int n = seen[{p.run_id, p.row}]++;
    auto [at, added] = index.try_emplace({p.hostname, p.row, n}, out.size());
    if (added) out.emplace_back();
    out[at->second].push_back(i);
  }
  return out;
}

namespace {

void Differs(std::vector<std::string>& out, const char* what, const std::string& a,
             const std::string& b) {
  if (a == b) return;
  out.push_back(
      fmt::format("{} {} -> {}", what, a.empty() ? "(none)" : a, b.empty() ? "(none)" : b));
}

}  // namespace

std::vector<std::string> WhatChanged(const StoredRun& before, const TrendPoint& a,
                                     const StoredRun& after, const TrendPoint& b) {
  std::vector<std::string> out;
  const RunRecord &x = before.record, &y = after.record;
  Differs(out, "kernel", x.kernel, y.kernel);
  Differs(out, "test bed", a.testbed, b.testbed);
  Differs(out, "scheduler of the row", a.scheduler, b.scheduler);
  Differs(out, "target's scheduler", x.scheduler, y.scheduler);
  Differs(out, "mount options", x.mount_options, y.mount_options);
  Differs(out, "file system", x.fs_type, y.fs_type);
  Differs(out, "device", x.device + " " + x.device_model, y.device + " " + y.device_model);
  Differs(out, "firmware", x.firmware, y.firmware);
  Differs(out, "writelab", x.writelab_version, y.writelab_version);
  Differs(out, "label", x.label, y.label);
  Differs(out, "command line", x.command_line, y.command_line);
  return out;
}

namespace {

// The run's record, read once.
Result<const StoredRun*> RunOf(const HistoryStore& store, int64_t id,
                               std::map<int64_t, StoredRun>& cache) {
  auto at = cache.find(id);
  if (at != cache.end()) return &at->second;
  auto run = store.Get(id);
  if (!run) return std::unexpected(run.error());
  return &cache.emplace(id, std::move(*run)).first->second;
}

// The runs of points whose median exceeds `drift` times their host's median.
void Drifted(const std::vector<TrendPoint>& points, double drift, const char* what,
             std::map<int64_t, std::string>& out) {
  std::map<std::string, std::vector<double>> by_host;
  for (const TrendPoint& p : points) by_host[p.hostname].push_back(p.median);
  std::map<std::string, double> median;
  for (auto& [host, values] : by_host) median[host] = Summarize(values).median;
  for (const TrendPoint& p : points) {
    const double m = median[p.hostname];
    if (!(m > 0) || !(p.median > drift * m)) continue;
    std::string& why = out[p.run_id];
    why +=
        fmt::format("{}{} {:.1f}x this host's median", why.empty() ? "" : ", ", what, p.median / m);
  }
}

// The disturbed runs among those tested each side of a change.
std::vector<std::string> DisturbedAround(const std::vector<TrendPoint>& points,
                                         const std::vector<size_t>& series, const ChangePoint& cp,
                                         const std::map<int64_t, std::string>& disturbed) {
  std::vector<std::string> out;
  const size_t from = cp.index - std::min(cp.index, cp.before_n);
  const size_t to = std::min(series.size(), cp.index + cp.after_n);
  for (size_t i = from; i < to; ++i)
    if (auto d = disturbed.find(points[series[i]].run_id); d != disturbed.end())
      out.push_back("run " + std::to_string(d->first) + ": " + d->second);
  return out;
}

// The changes of one figure's series.
Status ChangesOfFigure(const HistoryStore& store, const ChangesQuery& q, const std::string& figure,
                       const std::map<int64_t, std::string>& disturbed,
                       std::map<int64_t, StoredRun>& runs, ChangesFound& found) {
  auto points = store.Trend({q.experiment, figure, q.row, q.runs});
  if (!points) return std::unexpected(points.error());
  if (points->empty()) return {};
  ++found.figures;
  for (const std::vector<size_t>& series : SplitSeries(*points)) {
    std::vector<double> values;
    for (size_t i : series) values.push_back((*points)[i].median);
    ++found.series;  // this series is found.series - 1
    for (const ChangePoint& cp : FindChangePoints(values, q.options)) {
      const TrendPoint &a = (*points)[series[cp.index - 1]], &b = (*points)[series[cp.index]];
      auto before = RunOf(store, a.run_id, runs);
      if (!before) return std::unexpected(before.error());
      auto after = RunOf(store, b.run_id, runs);
      if (!after) return std::unexpected(after.error());
      found.changes.push_back({q.experiment, figure, b.figure_label, b.unit, b.hostname, b.row,
                               series.size(), cp, a.run_id, b.run_id,
                               WhatChanged(**before, a, **after, b),
                               DisturbedAround(*points, series, cp, disturbed), found.series - 1});
    }
  }
  return {};
}

}  // namespace

Result<ChangesFound> FindChanges(const HistoryStore& store, const ChangesQuery& q) {
  std::vector<std::string> figures = {q.figure};
  if (q.figure.empty()) {
    auto known = store.Known(q.experiment);
    if (!known) return std::unexpected(known.error());
    figures = std::move(*known);
  }
  auto disturbed = DisturbedRuns(store, q.runs);
  if (!disturbed) return std::unexpected(disturbed.error());
  ChangesFound found;
  found.disturbed = std::move(*disturbed);
  std::map<int64_t, StoredRun> runs;
  for (const std::string& figure : figures)
    if (Status s = ChangesOfFigure(store, q, figure, found.disturbed, runs, found); !s)
      return std::unexpected(s.error());
  return found;
}

Result<std::map<int64_t, std::string>> DisturbedRuns(const HistoryStore& store,
                                                     const RunFilter& runs) {
  std::map<int64_t, std::string> out;
  const std::pair<const char*, double> parts[] = {{"cpu_loop_ms", kCanaryCpuDrift},
                                                  {"fdatasync_us", kCanarySyncDrift}};
  for (const auto& [figure, drift] : parts) {
    auto points = store.Trend({kCanaryExperiment, figure, kCanaryExperiment, runs});
    if (!points) return std::unexpected(points.error());
    Drifted(*points, drift, figure == parts[0].first ? "CPU loop" : "fdatasync", out);
  }
  return out;
}

namespace {

// Of each series' changes, the last, where it is recent as q asks.
void KeepRecent(const RecentChangesQuery& q, std::vector<SeriesChange>& changes) {
  std::map<size_t, SeriesChange> last;  // by series
  for (SeriesChange& c : changes) {
    auto [at, added] = last.try_emplace(c.series, c);
    if (!added && c.run_at > at->second.run_at) at->second = std::move(c);
  }
  changes.clear();
  for (auto& [key, c] : last)
    if (q.after_run > 0 ? c.run_at > q.after_run : c.change.after_n <= q.recent)
      changes.push_back(std::move(c));
}

}  // namespace

Result<ChangesFound> RecentChanges(const HistoryStore& store, const RecentChangesQuery& q) {
  ChangesFound all;
  for (const std::string& experiment : q.experiments) {
    ChangesQuery one;
    one.experiment = experiment;
    one.runs.host = q.host;
    one.runs.up_to_run = q.up_to_run;
    one.options = q.options;
    auto found = FindChanges(store, one);
    if (!found) return std::unexpected(found.error());
    KeepRecent(q, found->changes);
    all.disturbed = std::move(found->disturbed);  // the same runs for every experiment
    all.series += found->series;
    all.figures += found->figures;
    for (SeriesChange& c : found->changes) all.changes.push_back(std::move(c));
  }
  return all;
}

namespace {

std::string Percent(double pct) {
  if (!std::isfinite(pct)) return pct > 0 ? "+inf%" : "-inf%";
  return fmt::format("{:+.1f}%", pct);
}

}  // namespace

std::string RenderChange(const SeriesChange& c) {
  const ChangePoint& p = c.change;
  std::string what = c.figure_label.empty() ? c.figure : c.figure + " (" + c.figure_label + ")";
  std::string out = fmt::format(
      "{}, row {} on {}: at run {} (after run {}): {} -> {}, {} (95%: {} to {}), p {:.2g}; "
      "{} runs before, {} after\n",
      what, c.row, c.host, c.run_at, c.run_before, FormatValue(p.before_mean, c.unit),
      FormatValue(p.after_mean, c.unit), Percent(p.change_pct), Percent(p.ci_low_pct),
      Percent(p.ci_high_pct), p.p_value, p.before_n, p.after_n);
  auto joined = [](const std::vector<std::string>& parts) {
    std::string all;
    for (const std::string& s : parts) all += (all.empty() ? "" : "; ") + s;
    return all;
  };
  if (c.also_changed.empty())
    out += "  nothing else recorded changed at that run\n";
  else
    out += "  also changed at that run: " + joined(c.also_changed) + "\n";
  if (!c.disturbed.empty())
    out += "  made on a disturbed machine, by their noise canary: " + joined(c.disturbed) + "\n";
  return out;
}

std::string RenderChangesText(const ChangesQuery& q, const ChangesFound& found) {
  std::string head = fmt::format(
      "history changes: {}{}{}: {} {} in {} series of {} figure{} (E-divisive means with a "
      "t-test, p < {:g}, at least {} runs each side)\n",
      q.experiment, q.figure.empty() ? "" : " " + q.figure, q.row.empty() ? "" : ", row " + q.row,
      found.changes.size(), found.changes.size() == 1 ? "change" : "changes", found.series,
      found.figures, found.figures == 1 ? "" : "s", q.options.max_p,
      std::max<size_t>(q.options.min_segment, 2));
  for (const SeriesChange& c : found.changes) head += RenderChange(c);
  return head;
}

}  // namespace writelab
