// SPDX-License-Identifier: MIT
#include "experiments/stride/rows.h"

#include <map>

#include "core/units.h"
#include "experiments/stride/figures.h"
#include "explain/figures.h"

namespace writelab {

Row StrideRow(const std::string& name, StepResult& r) {
  Row row = MakeRow(name, r.outcome);
  if (!r.outcome.ok()) return row;
  std::map<std::string, double> f;
  f["cycles"] = static_cast<double>(r.ops);
  f["written_mb"] = static_cast<double>(r.bytes) / kMB;
  if (r.ops) f["syscalls_per_write"] = static_cast<double>(r.syscalls) / static_cast<double>(r.ops);
  f["elapsed_s"] = r.seconds;
  f["mb_s"] = r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds / kMB : 0;
  for (auto [key, p] : {std::pair{"write_p50_ms", 50.0}, {"write_p99_ms", 99.0}})
    if (auto ns = r.latency.SupportedPercentile(p)) f[key] = static_cast<double>(*ns) / 1e6;
  if (r.have_device) {
    f["device_writes"] = static_cast<double>(r.device_writes);
    f["device_merges"] = static_cast<double>(r.device_merges);
    if (r.device_writes)
      f["device_kib_per_write"] =
          static_cast<double>(r.device_bytes) / static_cast<double>(r.device_writes) / 1024;
  }
  AddFigures(row.figures, kStrideFigures, f);
  AddFigures(row.figures, kExplainFigures, r.explained);
  row.latencies.push_back(Latency::From(r.latency, "write", "write", "issue to completion"));
  row.series.push_back(std::move(r.timeline));
  if (!r.request_sizes.points.empty()) row.series.push_back(std::move(r.request_sizes));
  return row;
}

}  // namespace writelab
