// SPDX-License-Identifier: MIT
#include "experiments/records/rows.h"

#include <algorithm>

#include "core/stats.h"
#include "core/units.h"
#include "experiments/records/figures.h"
#include "explain/figures.h"

namespace writelab {

void AddMethodRun(const MethodRun& m, const OutputPlan& plan, RecordsAccumulator& acc) {
  if (!m.outcome.ok()) {
    acc.outcome = m.outcome;
    return;
  }
  double s = static_cast<double>(m.ns) / 1e9;
  auto add = [&](FigureKey key, double v) { acc.figures[key.name].push_back(v); };
  add(RecordsKey("seconds"), s);
  add(RecordsKey("mb_s"), s > 0 ? static_cast<double>(plan.bytes) / s / kMB : 0);
  add(RecordsKey("lines_s"), s > 0 ? static_cast<double>(plan.lines) / s : 0);
  add(RecordsKey("syscalls_per_line"),
      static_cast<double>(m.write_calls + m.sync_calls) / static_cast<double>(plan.lines));
  add(RecordsKey("bytes"), static_cast<double>(plan.bytes));
  add(RecordsKey("lines"), static_cast<double>(plan.lines));
  add(RecordsKey("write_calls"), static_cast<double>(m.write_calls));
  add(RecordsKey("sync_calls"), static_cast<double>(m.sync_calls));
  add(RecordsKey("short_writes"), static_cast<double>(m.short_writes));
  for (const auto& [key, v] : m.explained) acc.explained[key].push_back(v);
  if (!m.note.empty() && std::find(acc.notes.begin(), acc.notes.end(), m.note) == acc.notes.end())
    acc.notes.push_back(m.note);
}

Row RecordsRow(const std::string& name, RecordsAccumulator& acc) {
  Row row = MakeRow(name, acc.outcome);
  row.notes = std::move(acc.notes);
  AddFigures(row.figures, kRecordsFigures, acc.figures);
  AddFigures(row.figures, kExplainFigures, acc.explained);
  return row;
}

// lines/s of each row over the write row of its sync choice, median to median.
void AddSpeedups(ExperimentResult& out) {
  constexpr FigureKey kLinesS = KeyOf(kRecordsFigures, "lines_s");
  std::map<std::string, double> base;  // sync suffix ("", "/osync") -> write's lines/s
  for (const Row& row : out.rows) {
    const Figure* f = row.FindFigure(kLinesS.name);
    if (f && row.name.starts_with("write") && (row.name == "write" || row.name[5] == '/'))
      base[row.name.substr(5)] = f->value.median;
  }
  for (Row& row : out.rows) {
    const Figure* mine = row.FindFigure(kLinesS.name);
    if (!mine) continue;
    auto slash = row.name.find('/');
    auto it = base.find(slash == std::string::npos ? "" : row.name.substr(slash));
    if (it == base.end() || it->second <= 0) continue;
    double ratio = mine->value.median / it->second;
    constexpr const FigureSpec& f = SpecOf(kRecordsFigures, "speedup");
    constexpr FigureKey kBytes = KeyOf(kRecordsFigures, "bytes");  // speedup goes before it
    auto at = std::find_if(row.figures.begin(), row.figures.end(),
                           [](const Figure& x) { return x.key == kBytes.name; });
    row.figures.insert(at, f.Make(Summarize({ratio})));
  }
}

void AddCommitTrial(const CommitRun& r, const CommitWay& way, int threads, CommitAcc& acc) {
  if (!r.outcome.ok()) {
    acc.outcome = r.outcome;
    return;
  }
  if (r.commits == 0) return;
  auto add = [&](FigureKey key, double v) { acc.figures[key.name].push_back(v); };
  const double syncs = static_cast<double>(r.syncs);
  add(CommitKey("commits_s"), static_cast<double>(r.commits) / (static_cast<double>(r.ns) / 1e9));
  for (auto [key, p] : {std::pair{CommitKey("p50_ms"), 50.0}, {CommitKey("p99_ms"), 99.0}})
    if (auto ns = r.latency.SupportedPercentile(p)) add(key, static_cast<double>(*ns) / 1e6);
  add(CommitKey("max_ms"), static_cast<double>(r.latency.max()) / 1e6);
  add(CommitKey("records_per_sync"), syncs > 0 ? static_cast<double>(r.commits) / syncs : 0);
  add(CommitKey("sync_ms"), syncs > 0 ? static_cast<double>(r.sync_ns) / syncs / 1e6 : 0);
  add(CommitKey("commits"), static_cast<double>(r.commits));
  add(CommitKey("syncs"), syncs);
  add(CommitKey("zero_bytes"), static_cast<double>(r.zero_bytes));
  if (r.wait_timeouts) add(CommitKey("wait_timeouts"), static_cast<double>(*r.wait_timeouts));
  if (way.group && r.syncs > 0 && r.sync_ns > 0) {
    const double ceiling = threads / (static_cast<double>(r.sync_ns) / syncs / 1e9);
    add(CommitKey("ceiling_commits_s"), ceiling);
    add(CommitKey("ceiling_fraction"),
        static_cast<double>(r.commits) / (static_cast<double>(r.ns) / 1e9) / ceiling);
  }
  acc.latency.Merge(r.latency);
  for (const auto& [key, v] : r.explained) acc.explained[key].push_back(v);
}

Row CommitRow(CommitAcc& acc, double base) {
  Row row = MakeRow(acc.name, acc.outcome);
  if (acc.figures.empty()) return row;
  if (base > 0) {
    acc.figures[CommitKey("speedup").name] = {
        Summarize(acc.figures[CommitKey("commits_s").name]).median / base};
  }
  AddFigures(row.figures, kCommitFigures, acc.figures);
  AddFigures(row.figures, kExplainFigures, acc.explained);
  row.latencies.push_back(Latency::From(acc.latency, "commit", "commit",
                                        "append or pwrite until the record is durable"));
  return row;
}

}  // namespace writelab
