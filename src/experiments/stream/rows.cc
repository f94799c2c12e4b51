// SPDX-License-Identifier: MIT
#include "experiments/stream/rows.h"

#include <algorithm>

#include "core/units.h"
#include "experiments/stream/figures.h"
#include "explain/figures.h"
#include "lib/paced_words.h"
#include "telemetry/sampler.h"
#include "writelab/error.h"

namespace writelab {

void AddStreamTrial(const StreamSpec& spec, int round, const TrialResult& t,
                    StreamAccumulator& acc) {
  if (!t.outcome.ok()) {
    acc.outcome = t.outcome;
    return;
  }
  auto add = [&](FigureKey key, double v) { acc.figures[key.name].push_back(v); };
  double bytes = static_cast<double>(t.bytes);
  add(StreamKey("mb_s"), t.total_s() > 0 ? bytes / t.total_s() / kMB : 0);
  add(StreamKey("write_mb_s"), t.write_s > 0 ? bytes / t.write_s / kMB : 0);
  add(StreamKey("sync_s"), t.sync_s);
  add(StreamKey("total_s"), t.total_s());
  add(StreamKey("bytes"), bytes);
  add(StreamKey("calls"), static_cast<double>(t.counters.calls));
  if (!t.library) {  // StreamWriter retries inside; it does not count for us
    add(StreamKey("short_writes"), static_cast<double>(t.counters.short_writes));
    add(StreamKey("eintr_retries"), static_cast<double>(t.counters.eintr_retries));
  }
  uint64_t dirty_peak = 0, writeback_peak = 0;
  for (const SamplePoint& p : t.samples) {
    dirty_peak = std::max(dirty_peak, p.dirty);
    writeback_peak = std::max(writeback_peak, p.writeback);
  }
  add(StreamKey("dirty_peak"), static_cast<double>(dirty_peak));
  add(StreamKey("writeback_peak"), static_cast<double>(writeback_peak));
  if (t.residency) add(StreamKey("cached_end"), static_cast<double>(t.residency->cached_bytes()));
  if (t.probed && t.probe_latency.count() > 0) {
    for (auto [key, p] :
         {std::pair{StreamKey("probe_p50_ms"), 50.0}, {StreamKey("probe_p99_ms"), 99.0}})
      if (auto ns = t.probe_latency.SupportedPercentile(p))
        add(key, static_cast<double>(*ns) / 1e6);
    add(StreamKey("probe_max_ms"), static_cast<double>(t.probe_latency.max()) / 1e6);
  }
  if (spec.threshold)  // a file written over again counts once: its pages may still be dirty
    add(StreamKey("vs_threshold"),
        std::min(bytes, static_cast<double>(spec.size)) / static_cast<double>(spec.threshold));
  for (const auto& [key, v] : t.explained) acc.explained[key].push_back(v);
  acc.write_latency.Merge(t.write_latency);
  acc.probe_latency.Merge(t.probe_latency);
  acc.series.push_back(
      TimelineSeries(t.samples, round, static_cast<double>(spec.interval_ns) / 1e9));
  Series gib;
  gib.key = "per_gib";
  gib.trial = round;
  gib.columns = {{"gib", "GiB index"}, {"throughput", "MB/s"}};
  for (size_t i = 0; i < t.gib_mb_s.size(); ++i)
    gib.points.push_back({static_cast<double>(i + 1), t.gib_mb_s[i]});
  acc.series.push_back(std::move(gib));
  // The bystander's calls over time, where writeback pressure could shape
  // them (past the threshold): the picture of the 2009 stall.
  if (!t.probe_points.empty() && spec.threshold && std::min(t.bytes, spec.size) >= spec.threshold) {
    Series probe{"probe", round, 0, {{"t", "s"}, {"fdatasync", "ms"}}, {}};
    for (const auto& [at, ms] : t.probe_points) probe.points.push_back({at, ms});
    acc.series.push_back(std::move(probe));
  }
  if (t.passes)
    acc.notes.push_back("round " + std::to_string(round + 1) + ": wrote its file " +
                        std::to_string(t.passes + 1) + " times over, to write for " +
                        FormatValue(static_cast<double>(spec.min_time_ns) / 1e9, "s"));
  if (t.time_limited)
    acc.notes.push_back("round " + std::to_string(round + 1) + ": stopped at the time limit (" +
                        FormatValue(static_cast<double>(spec.time_limit_ns) / 1e9, "s") +
                        ") after " + FormatBytes(bytes));
  if (!t.library_choice.empty())
    acc.notes.push_back("round " + std::to_string(round + 1) + ": library picked " +
                        t.library_choice);
  if (t.paced_flushes)
    acc.notes.push_back(
        "round " + std::to_string(round + 1) + ": paced flushed its own data " +
        std::to_string(t.paced_flushes) + " times (fdatasync), its window between " +
        FormatBytes(static_cast<double>(t.paced_window_min)) + " and " +
        FormatBytes(static_cast<double>(t.paced_window_max)) + ", its slowest flush " +
        FormatValue(static_cast<double>(t.paced_slowest_ns) / 1e6, "ms") + " (target " +
        FormatValue(static_cast<double>(spec.pace_target_ns) / 1e6, "ms") + ")" +
        (t.paced_unmet
             ? "; " + std::to_string(t.paced_unmet) + " of them" + UnmetFlushesWords("this writer")
             : std::string()));
  if (t.memcg_peak) add(StreamKey("memcg_peak"), static_cast<double>(*t.memcg_peak));
  if (!t.memcg_note.empty() && round == 0) acc.notes.push_back(t.memcg_note);
  if (!t.residency_error.empty()) acc.notes.push_back("page cache: " + t.residency_error);
  if (t.probe_error)
    acc.notes.push_back("probe: a write or fdatasync failed: " +
                        ErrnoError(t.probe_error, "").Message());
  if (t.probed && spec.threshold && std::min(t.bytes, spec.size) < spec.threshold && round == 0)
    acc.notes.push_back(
        "wrote " + FormatBytes(bytes) + " per trial, less than the dirty background threshold of " +
        FormatBytes(static_cast<double>(spec.threshold)) +
        " where the kernel starts writing back: no writeback pressure, so the bystander's "
        "figures cannot show a stall (" +
        (spec.size_auto ? std::string("--size auto was held to a quarter of the free space")
                        : std::string("--size auto sizes past it")) +
        ")");
}

Row StreamRow(const std::string& name, StreamAccumulator& acc) {
  Row row = MakeRow(name, acc.outcome);
  row.notes = std::move(acc.notes);
  AddFigures(row.figures, kStreamFigures, acc.figures);
  AddFigures(row.figures, kExplainFigures, acc.explained);
  if (acc.write_latency.count())
    row.latencies.push_back(Latency::From(acc.write_latency, "write", "write call",
                                          "one write system call (library: one Append)"));
  if (acc.probe_latency.count())
    row.latencies.push_back(Latency::From(acc.probe_latency, "probe", "bystander probe",
                                          "4 KiB pwrite + fdatasync on another file"));
  row.series = std::move(acc.series);
  return row;
}

}  // namespace writelab
