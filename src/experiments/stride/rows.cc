// SPDX-License-Identifier: MIT
#include "experiments/stride/rows.h"

#include <map>

#include "core/units.h"
#include "experiments/stride/figures.h"
#include "explain/figures.h"

namespace writelab {

namespace {

std::map<std::string, double> StepFigures(const StepResult& r) {
  std::map<std::string, double> f;
  f[StrideKey("cycles").name] = static_cast<double>(r.ops);
  f[StrideKey("written_mb").name] = static_cast<double>(r.bytes) / kMB;
  if (r.ops)
    f[StrideKey("syscalls_per_write").name] =
        static_cast<double>(r.syscalls) / static_cast<double>(r.ops);
  f[StrideKey("elapsed_s").name] = r.seconds;
  f[StrideKey("mb_s").name] = r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds / kMB : 0;
  for (auto [key, p] : {std::pair{"write_p50_ms", 50.0}, {"write_p99_ms", 99.0}})
    if (auto ns = r.latency.SupportedPercentile(p)) f[key] = static_cast<double>(*ns) / 1e6;
  if (r.latency.count())
    f[StrideKey("write_max_ms").name] = static_cast<double>(r.latency.max()) / 1e6;
  if (r.have_device) {
    f[StrideKey("device_writes").name] = static_cast<double>(r.device_writes);
    f[StrideKey("device_merges").name] = static_cast<double>(r.device_merges);
    if (r.device_writes)
      f[StrideKey("device_kib_per_write").name] =
          static_cast<double>(r.device_bytes) / static_cast<double>(r.device_writes) / 1024;
  }
  return f;
}

}  // namespace

Row StrideRow(const std::string& name, StepResult& r) {
  std::vector<StepResult> one;
  one.push_back(std::move(r));
  return StrideRow(name, one);
}

Row StrideRow(const std::string& name, std::vector<StepResult>& trials) {
  const StepResult* bad = nullptr;
  for (const StepResult& t : trials)
    if (!bad && !t.outcome.ok()) bad = &t;
  Row row = MakeRow(name, bad ? bad->outcome : trials.front().outcome);
  if (bad == &trials.front()) return row;  // nothing measured
  std::map<std::string, std::vector<double>> figures, explained;
  Histogram latency;
  for (size_t i = 0; i < trials.size(); ++i) {  // a row that failed later keeps its rounds before
    StepResult& r = trials[i];
    if (!r.outcome.ok()) break;
    for (const auto& [key, v] : StepFigures(r)) figures[key].push_back(v);
    for (const auto& [key, v] : r.explained) explained[key].push_back(v);
    latency.Merge(r.latency);
    r.timeline.trial = static_cast<int>(i);
    row.series.push_back(std::move(r.timeline));
  }
  AddFigures(row.figures, kStrideFigures, figures);
  AddFigures(row.figures, kExplainFigures, explained);
  row.latencies.push_back(Latency::From(latency, "write", "write", "issue to completion"));
  if (!trials.front().request_sizes.points.empty())
    row.series.push_back(std::move(trials.front().request_sizes));
  return row;
}

}  // namespace writelab
