// SPDX-License-Identifier: MIT
#include "experiments/fsync/rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/units.h"
#include "experiments/fsync/figures.h"
#include "explain/figures.h"

namespace writelab {

void FillTelemetry(const std::vector<SamplePoint>& all, double t0, double t1, FsyncRowContext& rc) {
  for (const SamplePoint& p : all) {
    if (p.t_s < t0 || p.t_s > t1) continue;
    rc.points.push_back(p);
    rc.dirty_peak = std::max(rc.dirty_peak, p.dirty);
    rc.writeback_peak = std::max(rc.writeback_peak, p.writeback);
  }
  if (rc.points.size() >= 2 && rc.points.front().have_device) {
    rc.device = true;
    rc.device_bytes = rc.points.back().dev_write_bytes - rc.points.front().dev_write_bytes;
  }
}

namespace {

double Ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// A percentile figure only where the iterations support it (p99 needs 100).
void Put(std::map<std::string, double>& f, FigureKey key, const Histogram& h, double p) {
  if (auto ns = h.SupportedPercentile(p)) f[key.name] = Ms(*ns);
}

void AddLatencyFigures(const SyncRun& run, std::map<std::string, double>& f) {
  const Histogram& w = run.write_latency;
  if (w.count()) {
    Put(f, FsyncKey("write_p50_ms"), w, 50);
    Put(f, FsyncKey("write_p99_ms"), w, 99);
    f[FsyncKey("write_max_ms").name] = Ms(w.max());
  }
  const Histogram& s = run.sync_latency;
  if (s.count()) {
    f[FsyncKey("sync_min_ms").name] = Ms(s.min());
    Put(f, FsyncKey("sync_p50_ms"), s, 50);
    Put(f, FsyncKey("sync_p90_ms"), s, 90);
    Put(f, FsyncKey("sync_p99_ms"), s, 99);
    f[FsyncKey("sync_max_ms").name] = Ms(s.max());
  }
  const Histogram& t = run.total_latency;
  if (t.count()) {
    Put(f, FsyncKey("total_p50_ms"), t, 50);
    Put(f, FsyncKey("total_p99_ms"), t, 99);
    f[FsyncKey("total_max_ms").name] = Ms(t.max());
  }
}

// One trial's figures: none when it made no write.
std::map<std::string, double> TrialFigures(const SyncRun& run, const FsyncRowContext& rc) {
  std::map<std::string, double> f;
  if (run.write_latency.count() == 0) return f;
  AddLatencyFigures(run, f);
  if (rc.seconds > 0 && rc.bg_bytes)
    f[FsyncKey("bg_mb_s").name] = static_cast<double>(*rc.bg_bytes) / rc.seconds / kMB;
  if (rc.seconds > 0 && rc.device)
    f[FsyncKey("device_mb_s").name] = static_cast<double>(rc.device_bytes) / rc.seconds / kMB;
  f[FsyncKey("dirty_peak").name] = static_cast<double>(rc.dirty_peak);
  f[FsyncKey("writeback_peak").name] = static_cast<double>(rc.writeback_peak);
  if (rc.bg_bytes && *rc.bg_bytes && rc.device)
    f[FsyncKey("bg_device_pct").name] =
        100.0 * static_cast<double>(rc.device_bytes) / static_cast<double>(*rc.bg_bytes);
  return f;
}

// A background whose bytes did not reach the device during the row: the
// row measured a sync beside a writer of the page cache, not of the disk.
void NoteBackgroundInCache(Row& row) {
  const Figure* pct = row.FindFigure(FsyncKey("bg_device_pct").name);
  const Figure* dirty = row.FindFigure(FsyncKey("dirty_peak").name);
  if (!pct || pct->value.median >= kBackgroundInCachePct) return;
  // What sizes this row's background: the random writer's span, the
  // stream's wrap point, or the user's own command.
  const std::string bg = row.name.substr(0, row.name.find('/'));
  const std::string bigger =
      bg == "random"   ? "give --bg-span above the dirty background threshold (the parameter "
                         "bg_span_from says how it was chosen) and --bg-warmup auto"
      : bg == "stream" ? "give --bg-size above the dirty background threshold (the parameter "
                         "bg_size_from says how it was chosen)"
                       : "make the background command write more than the dirty background "
                         "threshold";
  row.notes.push_back(fmt::format(
      "the background stayed in the page cache: the device wrote {:.1f}% of the background's "
      "bytes during this row (peak Dirty {}), so the sync met no writeback of it; {}, or use a "
      "test bed with dirty=SIZE",
      pct->value.median, dirty ? FormatBytes(dirty->value.median) : "not sampled", bigger));
}

// The first trial that failed, or whose background did; else the first.
Outcome RowOutcome(const std::vector<FsyncTrial>& trials) {
  for (const FsyncTrial& t : trials) {
    if (!t.rc.bg_failure.empty()) {
      Outcome bg;  // a background that failed makes the row a failure whatever it measured
      bg.Fail(PlainError(t.rc.bg_failure));
      return bg;
    }
    if (!t.run.outcome.ok()) return t.run.outcome;
  }
  return trials.empty() ? Outcome{} : trials.front().run.outcome;
}

void AddLatencies(const SyncMethodInfo& m, const std::vector<FsyncTrial>& trials, Row& row) {
  Histogram w, s, t;
  for (const FsyncTrial& trial : trials) {
    w.Merge(trial.run.write_latency);
    s.Merge(trial.run.sync_latency);
    t.Merge(trial.run.total_latency);
  }
  auto add = [&](const Histogram& h, const char* key, const std::string& label, const char* inc) {
    if (h.count()) row.latencies.push_back(Latency::From(h, key, label, inc));
  };
  add(w, "write", "write", "one pwrite call");
  const std::string sync = m.id == SyncMethod::kSfr      ? "sfr+fdatasync"
                           : m.id == SyncMethod::kReopen ? "fsync"
                                                         : m.name;
  add(s, "sync", sync,
      "the sync call after the write; for sfr, sync_file_range and fdatasync together; for "
      "reopen, the fsync (its write is fopen, fprintf and fflush)");
  add(t, "total", "write+sync", "the write and sync calls together");
}

}  // namespace

Row FsyncRow(const SyncMethodInfo& m, const SyncRun& run, const FsyncRowContext& rc,
             double interval_s) {
  return FsyncRow(m, std::vector<FsyncTrial>{{run, rc}}, interval_s);
}

Row FsyncRow(const SyncMethodInfo& m, const std::vector<FsyncTrial>& trials, double interval_s) {
  Row row = MakeRow((trials.empty() ? std::string() : trials.front().rc.bg_name) + "/" + m.name,
                    RowOutcome(trials));
  if (!m.separate_sync) row.notes.push_back("the write is the sync: no separate sync figures");
  std::map<std::string, std::vector<double>> figures, explained;
  for (size_t i = 0; i < trials.size(); ++i) {
    const FsyncTrial& trial = trials[i];
    // A trial cut short by a failure counts only when it is the only one:
    // the rounds completed before it keep their figures, as they were.
    bool cut_short = !trial.run.outcome.ok() || !trial.rc.bg_failure.empty();
    if (!cut_short || trials.size() == 1)
      for (const auto& [key, v] : TrialFigures(trial.run, trial.rc)) figures[key].push_back(v);
    if (trial.run.write_latency.count())
      for (const auto& [key, v] : trial.run.explained) explained[key].push_back(v);
    Series it{
        "iterations", static_cast<int>(i), 0, {{"t", "s"}, {"write", "s"}, {"sync", "s"}}, {}};
    for (const auto& s : trial.run.samples) it.points.push_back({s[0], s[1], s[2]});
    row.series.push_back(std::move(it));
    row.series.push_back(TimelineSeries(trial.rc.points, static_cast<int>(i), interval_s));
  }
  AddFigures(row.figures, kFsyncFigures, figures);
  AddFigures(row.figures, kExplainFigures, explained);
  if (std::string who = WhoWasAhead(row, trials.empty() ? "" : trials.front().rc.bg_name);
      !who.empty())
    row.notes.push_back(who);
  AddLatencies(m, trials, row);
  NoteBackgroundInCache(row);
  return row;
}

Row BackgroundRankRow(const std::string& name, const std::vector<FsyncRowContext>& trials,
                      double interval_s) {
  Row row = MakeRow(name, Outcome{});
  std::map<std::string, std::vector<double>> figures;
  for (size_t i = 0; i < trials.size(); ++i) {
    const FsyncRowContext& rc = trials[i];
    if (rc.seconds > 0 && rc.bg_bytes)
      figures[FsyncKey("bg_mb_s").name].push_back(static_cast<double>(*rc.bg_bytes) / rc.seconds /
                                                  kMB);
    if (rc.seconds > 0 && rc.device)
      figures[FsyncKey("device_mb_s").name].push_back(static_cast<double>(rc.device_bytes) /
                                                      rc.seconds / kMB);
    figures[FsyncKey("dirty_peak").name].push_back(static_cast<double>(rc.dirty_peak));
    figures[FsyncKey("writeback_peak").name].push_back(static_cast<double>(rc.writeback_peak));
    row.series.push_back(TimelineSeries(rc.points, static_cast<int>(i), interval_s));
  }
  AddFigures(row.figures, kFsyncFigures, figures);
  row.notes.push_back(trials.empty() || trials.front().bg_bytes
                          ? "background rank: its load wrote while the measuring ranks synced"
                          : "background rank: no load in this phase");
  return row;
}

}  // namespace writelab
