#include "report/json.h"

#include "writelab/error.h"

#include <nlohmann/json.hpp>

#include <optional>

// Optional values are written as null and read back from null.
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& v) {
    v = j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
  }
};
}  // namespace nlohmann

namespace writelab {

using nlohmann::json;

void to_json(json& j, const Summary& s) {
  j = {{"n", s.n},       {"median", s.median},   {"min", s.min},   {"max", s.max},
       {"mean", s.mean}, {"samples", s.samples}, {"ci95", nullptr}};
  if (s.ci95) j["ci95"] = {s.ci95->low, s.ci95->high};
}
void from_json(const json& j, Summary& s) {
  j.at("n").get_to(s.n);
  j.at("median").get_to(s.median);
  j.at("min").get_to(s.min);
  j.at("max").get_to(s.max);
  j.at("mean").get_to(s.mean);
  j.at("samples").get_to(s.samples);
  if (!j.at("ci95").is_null()) s.ci95 = Interval{j["ci95"][0], j["ci95"][1]};
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Figure, key, label, unit, includes, value)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Column, name, unit)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Series, key, trial, interval_s, columns, points)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Host, hostname, kernel, version, machine, cpus, memory_bytes, vm)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Target, path, fs_type, mount_point, mount_source,
                                                mount_options, device, stack, model, scheduler,
                                                schedulers, rotational, logical_block_size,
                                                physical_block_size, max_sectors_kb,
                                                write_zeroes_max_bytes,
                                                write_zeroes_unmap_max_bytes)

void to_json(json& j, const Latency& l) {
  j = {{"key", l.key},           {"label", l.label},
       {"includes", l.includes}, {"unit", "ns"},
       {"count", l.count},       {"min", l.min_ns},
       {"max", l.max_ns},        {"mean", l.mean_ns},
       {"stddev", l.stddev_ns},  {"percentiles", json::array()}};
  for (const auto& [p, ns] : l.percentiles_ns)
    j["percentiles"].push_back({{"p", p}, {"value", ns}});
}
void from_json(const json& j, Latency& l) {
  j.at("key").get_to(l.key);
  j.at("label").get_to(l.label);
  j.at("includes").get_to(l.includes);
  j.at("count").get_to(l.count);
  j.at("min").get_to(l.min_ns);
  j.at("max").get_to(l.max_ns);
  j.at("mean").get_to(l.mean_ns);
  j.at("stddev").get_to(l.stddev_ns);
  for (const json& p : j.at("percentiles"))
    l.percentiles_ns.emplace_back(p.at("p").get<double>(), p.at("value").get<uint64_t>());
}

NLOHMANN_JSON_SERIALIZE_ENUM(RowStatus, {{RowStatus::kOk, "ok"},
                                         {RowStatus::kUnsupported, "unsupported"},
                                         {RowStatus::kFailed, "failed"}})

void to_json(json& j, const Row& r) {
  j = {{"name", r.name},        {"status", r.status},       {"errno", r.error_code},
       {"error_name", nullptr}, {"message", r.message},     {"notes", r.notes},
       {"figures", r.figures},  {"latencies", r.latencies}, {"series", r.series}};
  if (r.error_code) j["error_name"] = ErrnoName(r.error_code);
}
void from_json(const json& j, Row& r) {
  j.at("name").get_to(r.name);
  j.at("status").get_to(r.status);
  j.at("errno").get_to(r.error_code);
  j.at("message").get_to(r.message);
  j.at("notes").get_to(r.notes);
  j.at("figures").get_to(r.figures);
  j.at("latencies").get_to(r.latencies);
  j.at("series").get_to(r.series);
}

void to_json(json& j, const Param& p) {
  j = {{"key", p.key}, {"unit", p.unit}};
  std::visit([&](const auto& v) { j["value"] = v; }, p.value);
}
void from_json(const json& j, Param& p) {
  j.at("key").get_to(p.key);
  j.at("unit").get_to(p.unit);
  const json& v = j.at("value");
  if (v.is_boolean())
    p.value = v.get<bool>();
  else if (v.is_number_integer())
    p.value = v.get<int64_t>();
  else if (v.is_number())
    p.value = v.get<double>();
  else
    p.value = v.get<std::string>();
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExperimentResult, name, reproduces, testbed,
                                                loop_direct_io, scheduler, row_label, target,
                                                params, table, rows, notes, compare_figure,
                                                compare_targets_as_rows)
// Fields added within schema 1 (recommendations, test-bed labels...) may be
// absent from older documents: read those with defaults.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Document, schema_version, writelab_version,
                                                command_line, started_at, finished_at, host,
                                                experiments, errors, recommendations)

std::string ToJson(const Document& doc) { return json(doc).dump(2) + "\n"; }

std::expected<Document, std::string> FromJson(const std::string& text) {
  try {
    json j = json::parse(text);
    int version = j.at("schema_version").get<int>();
    if (version != kSchemaVersion)
      return std::unexpected("schema version " + std::to_string(version) + " is not " +
                             std::to_string(kSchemaVersion));
    return j.get<Document>();
  } catch (const json::exception& e) {
    return std::unexpected(std::string("not a writelab result: ") + e.what());
  }
}

}  // namespace writelab
