// SPDX-License-Identifier: MIT
#include "explain/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explain/wait_functions.h"

namespace writelab {
namespace {

double Per(double a, double b) { return b > 0 ? a / b : 0; }

void Block(const ExplainCounters& d, std::map<std::string, double>& f) {
  f[ExplainKey("x_requests").name] = static_cast<double>(d.rq_issued);
  f[ExplainKey("x_queue_ms").name] =
      Per(static_cast<double>(d.q2d_ns), static_cast<double>(d.rq_issued)) / 1e6;
  f[ExplainKey("x_device_ms").name] =
      Per(static_cast<double>(d.d2c_ns), static_cast<double>(d.rq_completed)) / 1e6;
  f[ExplainKey("x_back_merges").name] = static_cast<double>(d.back_merges);
  f[ExplainKey("x_front_merges").name] = static_cast<double>(d.front_merges);
  f[ExplainKey("x_merges").name] =
      static_cast<double>(d.back_merges + d.front_merges + d.rq_merges);
  f[ExplainKey("x_kib_per_request").name] =
      Per(static_cast<double>(d.rq_bytes), static_cast<double>(d.rq_issued)) / 1024;
}

// The keys of a call split: the timed calls' (x_*) or the bystander
// probe's (x_probe_*), in the order of split_parts.h.
struct SplitKeys {
  FigureKey call_ms;
  FigureKey parts[SPLIT_PARTS];
  FigureKey during[SPLIT_OVERLAPS];
};
constexpr SplitKeys kCallSplit = {
    ExplainKey("x_call_ms"),
    {ExplainKey("x_cpu_pct"), ExplainKey("x_runq_pct"), ExplainKey("x_journal_pct"),
     ExplainKey("x_writeback_pct"), ExplainKey("x_flush_pct"), ExplainKey("x_dirty_wait_pct"),
     ExplainKey("x_other_pct")},
    {ExplainKey("x_during_commit_pct"), ExplainKey("x_during_flush_pct"),
     ExplainKey("x_during_writes_pct")}};
constexpr SplitKeys kProbeSplit = {
    ExplainKey("x_probe_call_ms"),
    {ExplainKey("x_probe_cpu_pct"), ExplainKey("x_probe_runq_pct"),
     ExplainKey("x_probe_journal_pct"), ExplainKey("x_probe_writeback_pct"),
     ExplainKey("x_probe_flush_pct"), ExplainKey("x_probe_dirty_wait_pct"),
     ExplainKey("x_probe_other_pct")},
    {ExplainKey("x_probe_during_commit_pct"), ExplainKey("x_probe_during_flush_pct"),
     ExplainKey("x_probe_during_writes_pct")}};

// The call split, into f under keys k.
void Split(const ExplainCounters& d, const SplitKeys& k, std::map<std::string, double>& f) {
  const double total = static_cast<double>(d.sync_ns);
  f[k.call_ms.name] = total / static_cast<double>(d.syncs) / 1e6;
  for (int i = 0; i < SPLIT_PARTS; ++i)
    f[k.parts[i].name] = 100 * Per(static_cast<double>(d.sync_part_ns[i]), total);
  for (int i = 0; i < SPLIT_OVERLAPS; ++i)
    f[k.during[i].name] = 100 * Per(static_cast<double>(d.sync_during_ns[i]), total);
}

void Sync(const ExplainCounters& d, std::map<std::string, double>& f) {
  f[ExplainKey("x_calls").name] = static_cast<double>(d.syncs);
  if (!d.syncs) return;
  f[ExplainKey("x_unbalanced").name] = static_cast<double>(d.sync_unbalanced);
  Split(d, kCallSplit, f);
}

void Journal(const ExplainCounters& d, const ExplainBasis& b, std::map<std::string, double>& f) {
  f[ExplainKey("x_commits").name] = static_cast<double>(d.commits);
  if (b.writes)
    f[ExplainKey("x_blocks_logged_per_write").name] =
        static_cast<double>(d.blocks_logged) / static_cast<double>(b.writes);
  if (!d.commit_stats || !d.hz) return;
  const double per_ms = 1000.0 / static_cast<double>(d.hz) / static_cast<double>(d.commit_stats);
  f[ExplainKey("x_commit_ms").name] =
      static_cast<double>(d.commit_locked_j + d.commit_flushing_j + d.commit_logging_j) * per_ms;
  f[ExplainKey("x_commit_running_ms").name] = static_cast<double>(d.commit_running_j) * per_ms;
  f[ExplainKey("x_commit_locked_ms").name] = static_cast<double>(d.commit_locked_j) * per_ms;
  f[ExplainKey("x_commit_flushing_ms").name] = static_cast<double>(d.commit_flushing_j) * per_ms;
  f[ExplainKey("x_commit_logging_ms").name] = static_cast<double>(d.commit_logging_j) * per_ms;
}

void Throttle(const ExplainCounters& d, const ExplainBasis& b, std::map<std::string, double>& f) {
  if (d.throttle_events && !d.hz) return;  // paused, for a time in jiffies of unknown length
  const double s =
      d.throttle_events ? static_cast<double>(d.throttle_pause_j) / static_cast<double>(d.hz) : 0.0;
  f[ExplainKey("x_throttled_s").name] = s;
  // Not capped: the writers' pauses within their own time cannot pass 100%,
  // and a share above it would show double counting (tests check it).
  if (b.seconds > 0) f[ExplainKey("x_throttled_pct").name] = 100 * s / b.seconds;
}

}  // namespace

void ExplainValues(const Explainer& e, const ExplainCounters& d, const ExplainBasis& basis,
                   std::initializer_list<ExplainProbe> groups, std::map<std::string, double>& f) {
  for (ExplainProbe g : groups) {
    if (!e.Sees(g)) continue;
    switch (g) {
      case ExplainProbe::kBlock:
        Block(d, f);
        break;
      case ExplainProbe::kSyncParts:
        Sync(d, f);
        break;
      case ExplainProbe::kJournal:
        Journal(d, basis, f);
        break;
      case ExplainProbe::kConversions:
        f[ExplainKey("x_conversions").name] = static_cast<double>(d.conversions);
        if (basis.writes)
          f[ExplainKey("x_conversions_per_write").name] =
              static_cast<double>(d.conversions) / static_cast<double>(basis.writes);
        break;
      case ExplainProbe::kThrottle:
        Throttle(d, basis, f);
        break;
      case ExplainProbe::kWbt:
        f[ExplainKey("x_wbt_steps").name] = static_cast<double>(d.wbt_steps);
        f[ExplainKey("x_wbt_lat_events").name] = static_cast<double>(d.wbt_lat_events);
        break;
      case ExplainProbe::kWriteback:
        f[ExplainKey("x_own_writeback_mb").name] = static_cast<double>(d.wb_own_bytes) / 1e6;
        f[ExplainKey("x_other_writeback_mb").name] = static_cast<double>(d.wb_other_bytes) / 1e6;
        if (std::find(groups.begin(), groups.end(), ExplainProbe::kJournal) != groups.end() &&
            e.Sees(ExplainProbe::kJournal) && e.fs_block_size()) {
          f[ExplainKey("x_journal_thread_mb").name] = static_cast<double>(d.jbd2_bytes) / 1e6;
          const double logged = static_cast<double>(d.blocks_logged) * e.fs_block_size();
          f[ExplainKey("x_commit_carried_mb").name] =
              std::max(0.0, static_cast<double>(d.jbd2_bytes) - logged) / 1e6;
        }
        break;
    }
  }
}

void ExplainProbeCallValues(const Explainer& e, const ExplainCounters& d,
                            std::map<std::string, double>& f) {
  if (e.Sees(ExplainProbe::kSyncParts) && d.syncs) Split(d, kProbeSplit, f);
}

void ExplainAheadValues(const ExplainCounters& d, std::map<std::string, double>& f) {
  double total = 0;
  for (__u64 b : d.ahead_bytes) total += static_cast<double>(b);
  if (total <= 0) return;
  f[ExplainKey("x_ahead_mb").name] = total / 1e6;
  static constexpr FigureKey kShares[EXPLAIN_AHEAD_CULPRITS] = {
      ExplainKey("x_ahead_self_pct"), ExplainKey("x_ahead_background_pct"),
      ExplainKey("x_ahead_journal_pct"), ExplainKey("x_ahead_metadata_pct"),
      ExplainKey("x_ahead_other_pct")};
  for (int i = 0; i < EXPLAIN_AHEAD_CULPRITS; ++i)
    f[kShares[i].name] = 100 * static_cast<double>(d.ahead_bytes[i]) / total;
}

std::string WhoWasAhead(const Row& row, const std::string& background) {
  const Figure* mb = row.FindFigure(ExplainKey("x_ahead_mb").name);
  if (!mb) return "";
  const std::pair<FigureKey, std::string> shares[] = {
      {ExplainKey("x_ahead_background_pct"), "the background's (" + background + ")"},
      {ExplainKey("x_ahead_self_pct"), "its own"},
      {ExplainKey("x_ahead_journal_pct"), "the journal's"},
      {ExplainKey("x_ahead_metadata_pct"), "metadata"},
      {ExplainKey("x_ahead_other_pct"), "other processes'"}};
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [key, name] : shares)
    if (const Figure* f = row.FindFigure(key.name); f && f->value.median >= 0.5)
      parts.push_back({f->value.median, name});
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "while its calls ran, %.1f MB was queued to the disk:", mb->value.median);
  std::string out = buf;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s %s %.0f%%", i ? "," : "", parts[i].second.c_str(),
                  parts[i].first);
    out += buf;
  }
  return out;
}

Series RequestSizeSeries(const ExplainCounters& d) {
  Series s;
  s.key = "request_sizes";
  s.columns = {{"request size", "KiB"}, {"requests", "I/Os"}};
  for (int k = 0; k < EXPLAIN_HIST_SLOTS; ++k)
    if (d.size_hist[k])
      s.points.push_back({std::ldexp(1.0, k) / 1024, static_cast<double>(d.size_hist[k])});
  return s;
}

std::vector<std::string> ExplainNotes(const Explainer& e,
                                      std::initializer_list<ExplainProbe> groups) {
  std::vector<std::string> notes;
  for (ExplainProbe g : groups)
    if (!e.Sees(g))
      notes.push_back(std::string("explain: ") + ExplainProbeName(g) +
                      " unsupported: " + e.Missing(g));
  if (std::find(groups.begin(), groups.end(), ExplainProbe::kSyncParts) != groups.end())
    for (std::string& n : e.CheckNotes()) notes.push_back("explain: " + std::move(n));
  return notes;
}

namespace {

// "on CPU 12%, waiting for a CPU 3%, journal commit 70%, ...": the parts
// of at least 0.5%.
std::string SplitLine(const Row& row, const SplitKeys& k) {
  std::string line;
  for (int i = 0; i < SPLIT_PARTS; ++i) {
    const Figure* fig = row.FindFigure(k.parts[i].name);
    if (!fig || fig->value.median < 0.5) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.0f%%", line.empty() ? "" : ", ", SplitPartName(i),
                  fig->value.median);
    line += buf;
  }
  return line.empty() ? "no part of 0.5% or more" : line;
}

// A stream row: the writer's throttling and writeback, and the bystander
// probe's call split when it was measured.
std::string StreamLine(const Row& row, double throttled) {
  auto value = [&](FigureKey key) {
    const Figure* fig = row.FindFigure(key.name);
    return fig ? fig->value.median : 0.0;
  };
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the writer was throttled in balance_dirty_pages %.0f%% of its time", throttled);
  std::string line = buf;
  if (row.FindFigure(ExplainKey("x_own_writeback_mb").name)) {
    std::snprintf(buf, sizeof buf, "; writeback started by the writer %.0f MB, by others %.0f MB",
                  value(ExplainKey("x_own_writeback_mb")),
                  value(ExplainKey("x_other_writeback_mb")));
    line += buf;
  }
  if (row.FindFigure(ExplainKey("x_probe_journal_pct").name))
    line += "; the bystander's calls: " + SplitLine(row, kProbeSplit);
  return line;
}

}  // namespace

std::string LargestWait(const Row& row, bool probe) {
  const SplitKeys& k = probe ? kProbeSplit : kCallSplit;
  int largest = -1;
  double share = 0;
  for (int i = 0; i < SPLIT_PARTS; ++i)
    if (const Figure* fig = row.FindFigure(k.parts[i].name); fig && fig->value.median > share)
      largest = i, share = fig->value.median;
  if (largest < 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f%% %s", share, SplitPartName(largest));
  return buf;
}

std::string WhereTheTimeWent(const Row& row) {
  auto value = [&](FigureKey key) -> const double* {
    const Figure* fig = row.FindFigure(key.name);
    return fig ? &fig->value.median : nullptr;
  };
  char buf[256];
  if (row.FindFigure(ExplainKey("x_journal_pct").name))
    return "write and sync calls: " + SplitLine(row, kCallSplit);
  if (const double* throttled = value(ExplainKey("x_throttled_pct")))
    return StreamLine(row, *throttled);
  if (const double* device = value(ExplainKey("x_device_ms"))) {
    std::snprintf(buf, sizeof buf, "per write request: queue %.3f ms, device %.3f ms",
                  *value(ExplainKey("x_queue_ms")), *device);
    return buf;
  }
  return "";
}

}  // namespace writelab
