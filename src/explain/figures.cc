// SPDX-License-Identifier: MIT
#include "explain/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace writelab {
namespace {

double Per(double a, double b) { return b > 0 ? a / b : 0; }

void Block(const ExplainCounters& d, std::map<std::string, double>& f) {
  f["x_requests"] = static_cast<double>(d.rq_issued);
  f["x_queue_ms"] = Per(static_cast<double>(d.q2d_ns), static_cast<double>(d.rq_issued)) / 1e6;
  f["x_device_ms"] = Per(static_cast<double>(d.d2c_ns), static_cast<double>(d.rq_completed)) / 1e6;
  f["x_back_merges"] = static_cast<double>(d.back_merges);
  f["x_front_merges"] = static_cast<double>(d.front_merges);
  f["x_merges"] = static_cast<double>(d.back_merges + d.front_merges + d.rq_merges);
  f["x_kib_per_request"] =
      Per(static_cast<double>(d.rq_bytes), static_cast<double>(d.rq_issued)) / 1024;
}

// The call split, into f under keys prefix + "journal_pct"...
void Split(const ExplainCounters& d, const std::string& prefix, std::map<std::string, double>& f) {
  const double total = static_cast<double>(d.sync_ns);
  f[prefix + "call_ms"] = total / static_cast<double>(d.syncs) / 1e6;
  const double data = static_cast<double>(d.sync_part_ns[EXPLAIN_PART_DATA]);
  const double journal = static_cast<double>(d.sync_part_ns[EXPLAIN_PART_JOURNAL]);
  const double flush = static_cast<double>(d.sync_part_ns[EXPLAIN_PART_FLUSH]);
  f[prefix + "data_pct"] = 100 * Per(data, total);
  f[prefix + "journal_pct"] = 100 * Per(journal, total);
  f[prefix + "flush_pct"] = 100 * Per(flush, total);
  f[prefix + "other_pct"] = std::max(0.0, 100 * Per(total - data - journal - flush, total));
}

void Sync(const ExplainCounters& d, std::map<std::string, double>& f) {
  f["x_calls"] = static_cast<double>(d.syncs);
  if (!d.syncs) return;
  f["x_overattributed"] = static_cast<double>(d.sync_overattributed);
  Split(d, "x_", f);
}

void Journal(const ExplainCounters& d, const ExplainBasis& b, std::map<std::string, double>& f) {
  f["x_commits"] = static_cast<double>(d.commits);
  if (b.writes)
    f["x_blocks_logged_per_write"] =
        static_cast<double>(d.blocks_logged) / static_cast<double>(b.writes);
  if (!d.commit_stats || !d.hz) return;
  const double per_ms = 1000.0 / static_cast<double>(d.hz) / static_cast<double>(d.commit_stats);
  f["x_commit_ms"] =
      static_cast<double>(d.commit_locked_j + d.commit_flushing_j + d.commit_logging_j) * per_ms;
  f["x_commit_running_ms"] = static_cast<double>(d.commit_running_j) * per_ms;
  f["x_commit_locked_ms"] = static_cast<double>(d.commit_locked_j) * per_ms;
  f["x_commit_flushing_ms"] = static_cast<double>(d.commit_flushing_j) * per_ms;
  f["x_commit_logging_ms"] = static_cast<double>(d.commit_logging_j) * per_ms;
}

void Throttle(const ExplainCounters& d, const ExplainBasis& b, std::map<std::string, double>& f) {
  if (d.throttle_events && !d.hz) return;  // paused, for a time in jiffies of unknown length
  const double s =
      d.throttle_events ? static_cast<double>(d.throttle_pause_j) / static_cast<double>(d.hz) : 0.0;
  f["x_throttled_s"] = s;
  // Not capped: the writers' pauses within their own time cannot pass 100%,
  // and a share above it would show double counting (tests check it).
  if (b.seconds > 0) f["x_throttled_pct"] = 100 * s / b.seconds;
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
        f["x_conversions"] = static_cast<double>(d.conversions);
        if (basis.writes)
          f["x_conversions_per_write"] =
              static_cast<double>(d.conversions) / static_cast<double>(basis.writes);
        break;
      case ExplainProbe::kThrottle:
        Throttle(d, basis, f);
        break;
      case ExplainProbe::kWriteback:
        f["x_own_writeback_mb"] = static_cast<double>(d.wb_own_bytes) / 1e6;
        f["x_other_writeback_mb"] = static_cast<double>(d.wb_other_bytes) / 1e6;
        if (std::find(groups.begin(), groups.end(), ExplainProbe::kJournal) != groups.end() &&
            e.Sees(ExplainProbe::kJournal) && e.fs_block_size()) {
          f["x_journal_thread_mb"] = static_cast<double>(d.jbd2_bytes) / 1e6;
          const double logged = static_cast<double>(d.blocks_logged) * e.fs_block_size();
          f["x_commit_carried_mb"] =
              std::max(0.0, static_cast<double>(d.jbd2_bytes) - logged) / 1e6;
        }
        break;
    }
  }
}

void ExplainProbeCallValues(const Explainer& e, const ExplainCounters& d,
                            std::map<std::string, double>& f) {
  if (e.Sees(ExplainProbe::kSyncParts) && d.syncs) Split(d, "x_probe_", f);
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
  return notes;
}

namespace {

// A stream row: the writer's throttling and writeback, and the bystander
// probe's call split when it was measured.
std::string StreamLine(const Row& row, double throttled) {
  auto value = [&](const char* key) {
    const Figure* fig = row.FindFigure(key);
    return fig ? fig->value.median : 0.0;
  };
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the writer was throttled in balance_dirty_pages %.0f%% of its time", throttled);
  std::string line = buf;
  if (row.FindFigure("x_own_writeback_mb")) {
    std::snprintf(buf, sizeof buf, "; writeback started by the writer %.0f MB, by others %.0f MB",
                  value("x_own_writeback_mb"), value("x_other_writeback_mb"));
    line += buf;
  }
  if (row.FindFigure("x_probe_journal_pct")) {
    std::snprintf(buf, sizeof buf,
                  "; the bystander's calls: journal commit %.0f%%, cache flush %.0f%%, device "
                  "writes %.0f%%, other %.0f%%",
                  value("x_probe_journal_pct"), value("x_probe_flush_pct"),
                  value("x_probe_data_pct"), value("x_probe_other_pct"));
    line += buf;
  }
  return line;
}

}  // namespace

std::string WhereTheTimeWent(const Row& row) {
  auto value = [&](const char* key) -> const double* {
    const Figure* fig = row.FindFigure(key);
    return fig ? &fig->value.median : nullptr;
  };
  char buf[256];
  if (const double* journal = value("x_journal_pct")) {
    std::snprintf(buf, sizeof buf,
                  "write and sync calls: journal commit %.0f%%, cache flush %.0f%%, device writes "
                  "%.0f%%, other %.0f%%",
                  *journal, *value("x_flush_pct"), *value("x_data_pct"), *value("x_other_pct"));
    return buf;
  }
  if (const double* throttled = value("x_throttled_pct")) return StreamLine(row, *throttled);
  if (const double* device = value("x_device_ms")) {
    std::snprintf(buf, sizeof buf, "per write request: queue %.3f ms, device %.3f ms",
                  *value("x_queue_ms"), *device);
    return buf;
  }
  return "";
}

}  // namespace writelab
