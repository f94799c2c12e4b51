// SPDX-License-Identifier: MIT
#include "core/document_json.h"

#include "writelab/error.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace writelab {

using nlohmann::json;

void to_json(json& j, const Summary& s) {
  j = {{"n", s.n},       {"median", s.median},   {"min", s.min},   {"max", s.max},
       {"mean", s.mean}, {"samples", s.samples}, {"ci95", nullptr}};
  if (s.ci95) j["ci95"] = {s.ci95->low, s.ci95->high};
}

// This file only writes: FromJson (json_read.cc) reads with every field
// checked, so there are no from_json functions to fall back on.
template <typename T>
void WriteOptional(json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}

void to_json(json& j, const Figure& f) {
  j = {{"key", f.key},
       {"label", f.label},
       {"unit", f.unit},
       {"includes", f.includes},
       {"value", f.value}};
}
void to_json(json& j, const Column& c) { j = {{"name", c.name}, {"unit", c.unit}}; }
void to_json(json& j, const Series& s) {
  j = {{"key", s.key},
       {"trial", s.trial},
       {"interval_s", s.interval_s},
       {"columns", s.columns},
       {"points", s.points}};
}
void to_json(json& j, const Host& h) {
  j = {{"hostname", h.hostname},
       {"kernel", h.kernel},
       {"version", h.version},
       {"machine", h.machine},
       {"cpus", h.cpus},
       {"memory_bytes", h.memory_bytes},
       {"vm", h.vm}};
  if (!h.cpu_model.empty()) j["cpu_model"] = h.cpu_model;
}

void to_json(json& j, const Target& t) {
  j = {{"path", t.path},
       {"fs_type", t.fs_type},
       {"mount_point", t.mount_point},
       {"mount_source", t.mount_source},
       {"mount_options", t.mount_options},
       {"device", t.device},
       {"stack", t.stack},
       {"model", t.model},
       {"scheduler", t.scheduler},
       {"schedulers", t.schedulers}};
  if (!t.firmware.empty()) j["firmware"] = t.firmware;
  WriteOptional(j, "rotational", t.rotational);
  WriteOptional(j, "logical_block_size", t.logical_block_size);
  WriteOptional(j, "physical_block_size", t.physical_block_size);
  WriteOptional(j, "max_sectors_kb", t.max_sectors_kb);
  WriteOptional(j, "write_zeroes_max_bytes", t.write_zeroes_max_bytes);
  WriteOptional(j, "write_zeroes_unmap_max_bytes", t.write_zeroes_unmap_max_bytes);
}

void to_json(json& j, const Latency& l) {
  j = {{"key", l.key},           {"label", l.label},
       {"includes", l.includes}, {"unit", "ns"},
       {"count", l.count},       {"min", l.min_ns},
       {"max", l.max_ns},        {"mean", l.mean_ns},
       {"stddev", l.stddev_ns},  {"percentiles", json::array()}};
  for (const auto& [p, ns] : l.percentiles_ns)
    j["percentiles"].push_back({{"p", p}, {"value", ns}});
  j["percentiles_omitted"] = json::array();
  for (const auto& [p, why] : l.percentiles_omitted)
    j["percentiles_omitted"].push_back({{"p", p}, {"why", why}});
  j["buckets"] = json::array();
  for (const Latency::Bucket& b : l.buckets)
    j["buckets"].push_back(json::array({b.low_ns, b.high_ns, b.count}));
}
void to_json(json& j, const Row& r) {
  j = {{"name", r.name},        {"status", RowStatusName(r.status)},
       {"errno", r.error_code}, {"error_name", nullptr},
       {"message", r.message},  {"notes", r.notes},
       {"figures", r.figures},  {"latencies", r.latencies},
       {"series", r.series}};
  if (r.error_code) j["error_name"] = ErrnoName(r.error_code);
}
void to_json(json& j, const Param& p) {
  j = {{"key", p.key}, {"unit", p.unit}};
  std::visit([&](const auto& v) { j["value"] = v; }, p.value);
}
void to_json(json& j, const ExperimentResult& e) {
  j = {{"name", e.name},
       {"reproduces", e.reproduces},
       {"testbed", e.testbed},
       {"loop_direct_io", e.loop_direct_io},
       {"scheduler", e.scheduler},
       {"row_label", e.row_label},
       {"target", e.target},
       {"params", e.params},
       {"table", e.table},
       {"rows", e.rows},
       {"notes", e.notes},
       {"compare_figure", e.compare_figure},
       {"compare_targets_as_rows", e.compare_targets_as_rows}};
  if (!e.purpose.empty()) j["purpose"] = e.purpose;
  if (e.rank >= 0) j["rank"] = e.rank;
  if (e.ranks > 0) j["ranks"] = e.ranks;
}

void to_json(json& j, const RankInfo& r) {
  j = {{"rank", r.rank},
       {"host", r.host},
       {"dir", r.dir},
       {"clock_offset_ns", r.clock_offset_ns},
       {"clock_rtt_ns", r.clock_rtt_ns}};
}

void to_json(json& j, const Recommendation& r) {
  j = {{"experiment", r.experiment}, {"figures", r.figures}, {"text", r.text}};
  if (!r.verdict.empty()) j["verdict"] = r.verdict;
}

void to_json(json& j, const Document& d) {
  j = {{"schema_version", d.schema_version},  {"writelab_version", d.writelab_version},
       {"command_line", d.command_line},      {"started_at", d.started_at},
       {"finished_at", d.finished_at},        {"host", d.host},
       {"experiments", d.experiments},        {"errors", d.errors},
       {"recommendations", d.recommendations}};
  if (!d.label.empty()) j["label"] = d.label;
  if (!d.ranks.empty()) j["mpi"] = {{"library", d.mpi_library}, {"ranks", d.ranks}};
  if (!d.canary.figures.empty() || !d.canary.note.empty())
    j["canary"] = {
        {"where", d.canary.where}, {"figures", d.canary.figures}, {"note", d.canary.note}};
}

std::string ToJson(const Document& doc) { return json(doc).dump(2) + "\n"; }

}  // namespace writelab
