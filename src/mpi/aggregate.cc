// SPDX-License-Identifier: MIT
#include "mpi/aggregate.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "core/outcome.h"
#include "core/units.h"
#include "mpi/figures.h"
#include "writelab/error.h"

namespace writelab {
namespace {

// The spans of one trial of one row, by role.
struct TrialGroup {
  std::vector<const TrialSpan*> measure;
  std::vector<const TrialSpan*> background;
};

std::map<int, TrialGroup> TrialsOf(const std::vector<RankRun>& runs, const std::string& row) {
  std::map<int, TrialGroup> trials;
  for (const RankRun& run : runs)
    for (const TrialSpan& s : run.spans) {
      if (s.row != row) continue;
      if (s.role == Role::kMeasure) trials[s.trial].measure.push_back(&s);
      if (s.role == Role::kBackground) trials[s.trial].background.push_back(&s);
    }
  return trials;
}

double Rate(double amount, uint64_t ns, double unit = 1) {
  return ns > 0 ? amount / (static_cast<double>(ns) / 1e9) / unit : 0;
}

// Bytes over the wall time from the first start to the last finish.
struct Wall {
  uint64_t first_start = std::numeric_limits<uint64_t>::max(), last_start = 0;
  uint64_t first_end = std::numeric_limits<uint64_t>::max(), last_end = 0;
  uint64_t bytes = 0, ops = 0;
  uint64_t ns() const { return last_end > first_start ? last_end - first_start : 0; }
};

Wall WallOf(const std::vector<const TrialSpan*>& spans) {
  Wall w;
  for (const TrialSpan* s : spans) {
    w.first_start = std::min(w.first_start, s->start_ns);
    w.last_start = std::max(w.last_start, s->start_ns);
    w.first_end = std::min(w.first_end, s->end_ns);
    w.last_end = std::max(w.last_end, s->end_ns);
    w.bytes += s->bytes;
    w.ops += s->ops;
  }
  return w;
}

using Values = std::map<std::string, std::vector<double>>;

void AddTrial(const TrialGroup& g, Values& v) {
  if (g.measure.empty()) return;
  const Wall w = WallOf(g.measure);
  v["ranks"].push_back(static_cast<double>(g.measure.size()));
  v["seconds"].push_back(static_cast<double>(w.ns()) / 1e9);
  v["start_skew_ms"].push_back(static_cast<double>(w.last_start - w.first_start) / 1e6);
  v["end_skew_ms"].push_back(static_cast<double>(w.last_end - w.first_end) / 1e6);
  if (w.bytes > 0) {
    v["mb_s"].push_back(Rate(static_cast<double>(w.bytes), w.ns(), kMB));
    v["bytes"].push_back(static_cast<double>(w.bytes));
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const TrialSpan* s : g.measure) {
      double r = Rate(static_cast<double>(s->bytes), s->end_ns - s->start_ns, kMB);
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    v["rank_mb_s_min"].push_back(lo);
    v["rank_mb_s_max"].push_back(hi);
  }
  const std::string& ops_key = g.measure.front()->ops_key;
  if (!ops_key.empty()) v[ops_key].push_back(Rate(static_cast<double>(w.ops), w.ns()));
  if (!g.background.empty()) {
    const Wall b = WallOf(g.background);
    v["bg_mb_s"].push_back(Rate(static_cast<double>(b.bytes), b.ns(), kMB));
  }
}

bool InTable(const std::string& key) {
  return std::any_of(std::begin(kRanksFigures), std::end(kRanksFigures),
                     [&](const FigureSpec& f) { return key == f.key; });
}

// p50, p99 (where the samples support them) and max of a merged histogram.
void AddLatencyFigures(const std::string& key, const Histogram& h, Values& v) {
  if (!InTable(key + "_max_ms")) return;  // a latency without aggregate figures
  for (auto [suffix, p] : {std::pair{"_p50_ms", 50.0}, {"_p99_ms", 99.0}})
    if (auto ns = h.SupportedPercentile(p)) v[key + suffix] = {static_cast<double>(*ns) / 1e6};
  v[key + "_max_ms"] = {static_cast<double>(h.max()) / 1e6};
}

// The row's outcome when no rank measured it: the first rank's failure,
// else its refusal, else not measured.
Outcome UnmeasuredOutcome(const std::vector<RankRun>& runs, const std::string& name) {
  for (RowStatus wanted : {RowStatus::kFailed, RowStatus::kUnsupported})
    for (const RankRun& run : runs)
      if (const Row* r = run.result.FindRow(name); r && r->status == wanted) {
        Outcome o;
        o.status = wanted;
        o.error = r->error_code;
        o.message = "rank " + std::to_string(run.rank) + ": " + r->message;
        return o;
      }
  return Unmeasured();
}

// Linear interpolation of cumulative bytes, 0 before the series began.
double WrittenAt(const std::vector<std::pair<double, double>>& pts, double t) {
  if (pts.empty() || t <= pts.front().first) return 0;
  for (size_t i = 1; i < pts.size(); ++i)
    if (t <= pts[i].first) {
      const auto& [t0, w0] = pts[i - 1];
      const auto& [t1, w1] = pts[i];
      return t1 > t0 ? w0 + (w1 - w0) * (t - t0) / (t1 - t0) : w1;
    }
  return pts.back().second;
}

// The cumulative bytes of a rank's timeline in its trial, or nothing
// without that column: from 0 at its origin when its span says it counts
// from there (stream), else from its first point (fsync's loads ran before).
std::vector<std::pair<double, double>> Cumulative(const Series& s, double origin_t,
                                                  bool from_origin) {
  std::vector<std::pair<double, double>> pts;
  size_t col = 0;
  for (size_t i = 0; i < s.columns.size(); ++i)
    if (s.columns[i].name == "written") col = i;
  if (col == 0 || s.points.empty()) return pts;
  const double base = from_origin ? 0 : s.points.front()[col];
  if (from_origin) pts.push_back({origin_t, 0});
  for (const auto& p : s.points) pts.push_back({p[0], p[col] - base});
  return pts;
}

using TrialStarts = std::map<std::pair<std::string, int>, uint64_t>;

// (row, trial) -> the first rank's start of it, on rank 0's clock.
TrialStarts StartsOf(const std::vector<RankRun>& runs) {
  TrialStarts starts;
  for (const RankRun& run : runs)
    for (const TrialSpan& s : run.spans) {
      auto [it, fresh] = starts.try_emplace({s.row, s.trial}, s.start_ns);
      if (!fresh) it->second = std::min(it->second, s.start_ns);
    }
  return starts;
}

// Where a rank's series of a trial has its t = 0 after AlignSeries: seconds
// after the first rank's start; nullopt when its rank recorded no origin.
std::optional<double> AlignedOrigin(const RankRun& run, const TrialStarts& starts,
                                    const std::string& row, int trial, const std::string& key) {
  for (const TrialSpan& span : run.spans) {
    if (span.row != row || span.trial != trial) continue;
    auto origin = span.origins.find(key);
    auto start = starts.find({row, trial});
    if (origin == span.origins.end() || start == starts.end()) continue;
    return (static_cast<double>(origin->second) - static_cast<double>(start->second)) / 1e9;
  }
  return std::nullopt;
}

// The timelines of one row's trial summed over ranks: every rank's
// cumulative bytes on a common grid, and the throughput between points.
std::optional<Series> SumTimelines(const std::vector<RankRun>& runs, const TrialStarts& starts,
                                   const std::string& row, int trial) {
  std::vector<std::vector<std::pair<double, double>>> ranks;
  double step = 0, end = 0;
  for (const RankRun& run : runs) {
    const Row* r = run.result.FindRow(row);
    auto origin = AlignedOrigin(run, starts, row, trial, "timeline");
    if (!r || !origin) continue;
    bool from_origin = false;
    for (const TrialSpan& span : run.spans)
      if (span.row == row && span.trial == trial) from_origin = span.written_from_origin;
    for (const Series& s : r->series) {
      if (s.key != "timeline" || s.trial != trial || s.points.empty()) continue;
      auto pts = Cumulative(s, *origin, from_origin);
      if (pts.size() < 2) continue;
      if (s.interval_s > 0) step = step > 0 ? std::min(step, s.interval_s) : s.interval_s;
      end = std::max(end, pts.back().first);
      ranks.push_back(std::move(pts));
    }
  }
  if (ranks.empty() || step <= 0 || end <= 0) return std::nullopt;
  Series sum{
      "timeline", trial, step, {{"t", "s"}, {"throughput", "MB/s"}, {"written", "bytes"}}, {}};
  // A point every step, and the last where the last rank's series ends (its
  // final sample holds all it wrote), so that the sum ends with every byte.
  std::vector<double> grid;
  for (int i = 1; i * step < end - step / 2; ++i) grid.push_back(i * step);
  grid.push_back(end);
  double prev_t = 0, prev_w = 0;
  for (double t : grid) {
    double w = 0;
    for (const auto& pts : ranks) w += WrittenAt(pts, t);
    sum.points.push_back({t, (w - prev_w) / (t - prev_t) / kMB, w});
    prev_t = t;
    prev_w = w;
  }
  return sum;
}

Row AggregateRow(const std::vector<RankRun>& runs, const MergedHistograms& merged,
                 const std::string& name) {
  const std::map<int, TrialGroup> trials = TrialsOf(runs, name);
  Values values;
  for (const auto& [trial, group] : trials) AddTrial(group, values);
  Row row = MakeRow(name, values.empty() ? UnmeasuredOutcome(runs, name) : Outcome{});
  if (values.empty()) return row;
  for (const RankRun& run : runs)
    if (const Row* r = run.result.FindRow(name); r && r->status != RowStatus::kOk)
      row.notes.push_back("rank " + std::to_string(run.rank) + ": " + RowStatusName(r->status) +
                          (r->error_code ? " (" + ErrnoName(r->error_code) + ")" : "") + ": " +
                          r->message);
  for (const auto& [key, h] : merged) {
    if (key.first != name || h.count() == 0) continue;
    AddLatencyFigures(key.second, h, values);
    std::string label = key.second, includes;
    for (const RankRun& run : runs)
      if (const Row* r = run.result.FindRow(name))
        if (const Latency* l = r->FindLatency(key.second)) {
          label = l->label;
          includes = l->includes;
          break;
        }
    row.latencies.push_back(
        Latency::From(h, key.second, label,
                      includes + "; every rank's histogram merged bucket by bucket (MPI_Reduce)"));
  }
  AddFigures(row.figures, kRanksFigures, values);
  const TrialStarts starts = StartsOf(runs);
  for (const auto& [trial, group] : trials)
    if (auto s = SumTimelines(runs, starts, name, trial)) row.series.push_back(std::move(*s));
  return row;
}

// The aggregate's table: the figures its rows have, in a reader's order.
std::vector<std::string> TableOf(const ExperimentResult& e) {
  static constexpr const char* kOrder[] = {
      "ranks",   "mb_s",         "lines_s",     "commits_s",    "rank_mb_s_min", "rank_mb_s_max",
      "bg_mb_s", "total_p99_ms", "sync_p99_ms", "probe_p99_ms", "commit_p99_ms", "end_skew_ms"};
  std::vector<std::string> table;
  auto any = [&](const std::string& key) {
    return std::any_of(e.rows.begin(), e.rows.end(),
                       [&](const Row& r) { return r.FindFigure(key) != nullptr; });
  };
  for (std::string key : kOrder) {
    // A p99 the iterations do not support: the worst instead.
    if (key.ends_with("_p99_ms") && !any(key)) key.replace(key.size() - 7, 7, "_max_ms");
    if (any(key)) table.push_back(key);
  }
  return table;
}

}  // namespace

ExperimentResult AggregateRanks(const std::vector<RankRun>& runs, const MergedHistograms& merged) {
  ExperimentResult out;
  const RankRun* first = nullptr;
  for (const RankRun& run : runs)
    if (!first || (first->result.rows.empty() && !run.result.rows.empty())) first = &run;
  if (!first) return out;
  out = first->result;  // name, target, parameters: every rank ran the same experiment
  out.rank = -1;
  out.rows.clear();
  out.notes.clear();
  out.compare_figure.clear();
  std::set<int> measuring;
  for (const RankRun& run : runs)
    for (const TrialSpan& s : run.spans)
      if (s.role == Role::kMeasure) measuring.insert(run.rank);
  out.ranks = static_cast<int>(measuring.size());
  std::vector<std::string> names;
  for (const RankRun& run : runs)
    for (const Row& r : run.result.rows)
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
  for (const std::string& name : names) out.rows.push_back(AggregateRow(runs, merged, name));
  out.table = TableOf(out);
  // What compare and the side-by-side tables judge the aggregate by: its
  // throughput, else fsync's worst-case latency.
  for (const char* key : {"mb_s", "lines_s", "commits_s", "total_p99_ms", "total_max_ms"})
    if (out.compare_figure.empty() &&
        std::find(out.table.begin(), out.table.end(), key) != out.table.end())
      out.compare_figure = key;
  out.notes.push_back(
      "all ranks together: throughput is every rank's bytes over the wall time from the first "
      "rank's start to the last rank's finish (on rank 0's clock); latencies merge every "
      "rank's histogram; the timeline sums the ranks' cumulative bytes");
  return out;
}

void AlignSeries(std::vector<RankRun>& runs) {
  const TrialStarts starts = StartsOf(runs);
  for (RankRun& run : runs)
    for (Row& row : run.result.rows)
      for (Series& s : row.series) {
        if (s.columns.empty() || s.columns.front().name != "t") continue;
        if (auto shift = AlignedOrigin(run, starts, row.name, s.trial, s.key))
          for (auto& p : s.points) p[0] += *shift;
      }
}

std::optional<std::string> FirstRankFailure(const std::vector<RankRun>& runs) {
  for (const RankRun& run : runs)
    if (!run.error.empty() && !run.stopped)
      return "rank " + std::to_string(run.rank) + (run.host.empty() ? "" : " (" + run.host + ")") +
             ": " + run.error;
  return std::nullopt;
}

}  // namespace writelab
