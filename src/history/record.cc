// SPDX-License-Identifier: MIT
#include "history/record.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/document_json.h"
#include "core/stats.h"

namespace writelab {
namespace {

std::string Trimmed(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// Words separated by one space, empty ones left out.
std::string Words(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts)
    if (std::string t = Trimmed(p); !t.empty()) out += (out.empty() ? "" : " ") + t;
  return out;
}

// The experiment whose target is the run's: the first not on a test bed.
const ExperimentResult* TargetExperiment(const Document& doc) {
  for (const ExperimentResult& e : doc.experiments)
    if (e.testbed.empty()) return &e;
  return doc.experiments.empty() ? nullptr : &doc.experiments.front();
}

}  // namespace

std::string CommandOf(const std::string& command_line) {
  size_t pos = 0;
  bool program_seen = false;
  while (pos < command_line.size()) {
    size_t end = command_line.find(' ', pos);
    if (end == std::string::npos) end = command_line.size();
    std::string word = command_line.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!program_seen) {
      // Environment assignments before the program (WRITELAB_FAULT=...).
      program_seen = word.find('=') == std::string::npos;
      continue;
    }
    if (!word.starts_with("-")) return word;
  }
  return "";
}

RunRecord RunRecordOf(const Document& doc) {
  RunRecord r;
  r.started_at = doc.started_at;
  r.finished_at = doc.finished_at;
  r.command_line = doc.command_line;
  r.command = CommandOf(doc.command_line);
  r.label = doc.label;
  r.writelab_version = doc.writelab_version;
  r.document_schema = doc.schema_version;
  r.hostname = doc.host.hostname;
  r.kernel = doc.host.kernel;
  r.machine = doc.host.machine;
  r.cpu_model = Trimmed(doc.host.cpu_model);
  r.cpus = doc.host.cpus;
  r.memory_bytes = static_cast<int64_t>(
      std::min<uint64_t>(doc.host.memory_bytes, std::numeric_limits<int64_t>::max()));
  // Memory in whole GiB: MemTotal moves by a few MiB between kernels (what
  // each reserves), and a kernel upgrade must not make another machine.
  const double gib = std::round(static_cast<double>(doc.host.memory_bytes) / (1 << 30));
  r.host_fingerprint = Words({r.hostname, r.machine, r.cpu_model, std::to_string(r.cpus) + " CPUs",
                              std::to_string(static_cast<int64_t>(gib)) + " GiB"});
  if (const ExperimentResult* e = TargetExperiment(doc)) {
    const Target& t = e->target;
    r.target_path = t.path;
    r.fs_type = t.fs_type;
    r.mount_options = t.mount_options;
    r.device = t.device;
    r.device_model = Trimmed(t.model);
    r.firmware = Trimmed(t.firmware);
    r.scheduler = t.scheduler;
    r.target_fingerprint =
        Words({r.fs_type, r.device.empty() ? "" : "on " + r.device, r.device_model});
  }
  r.errors = static_cast<int64_t>(doc.errors.size());
  return r;
}

namespace {

FigureRecord RecordOf(int index, const ExperimentResult& e, const std::string& row,
                      const Figure& f) {
  FigureRecord r;
  r.experiment_index = index;
  r.experiment = e.name;
  r.testbed = e.testbed;
  r.scheduler = e.scheduler;
  r.mpi_rank = e.rank;
  r.row = row;
  r.figure = f.key;
  r.label = f.label;
  r.unit = f.unit;
  r.median = f.value.median;
  r.min = f.value.min;
  r.max = f.value.max;
  r.n = f.value.n;
  r.samples = f.value.samples;
  return r;
}

// A latency's p50, p99 and p99.9 over the calls of all trials, where the
// calls support them, as figures of one value: "sync_calls_p99_ms".
std::vector<Figure> MergedPercentiles(const Latency& l) {
  std::vector<Figure> out;
  for (const auto& [p, ns] : l.percentiles_ns) {
    if (p != 50 && p != 99 && p != 99.9) continue;
    const std::string name = p == 99.9 ? "p99.9" : "p" + std::to_string(static_cast<int>(p));
    out.push_back({l.key + "_calls_" + name + "_ms", l.label + " " + name + " (calls merged)", "ms",
                   "every call of every trial", Summarize({static_cast<double>(ns) / 1e6})});
  }
  return out;
}

}  // namespace

std::vector<FigureRecord> FigureRecordsOf(const Document& doc) {
  std::vector<FigureRecord> out;
  for (size_t i = 0; i < doc.experiments.size(); ++i) {
    const ExperimentResult& e = doc.experiments[i];
    for (const Row& row : e.rows) {
      if (row.status != RowStatus::kOk) continue;
      for (const Figure& f : row.figures)
        out.push_back(RecordOf(static_cast<int>(i), e, row.name, f));
      for (const Latency& l : row.latencies)
        for (const Figure& f : MergedPercentiles(l))
          out.push_back(RecordOf(static_cast<int>(i), e, row.name, f));
    }
  }
  // The noise canary, as an experiment of its own: a series like any other.
  ExperimentResult canary;
  canary.name = kCanaryExperiment;
  for (const Figure& f : doc.canary.figures)
    out.push_back(RecordOf(static_cast<int>(doc.experiments.size()), canary, kCanaryExperiment, f));
  return out;
}

std::string SamplesToJson(const std::vector<double>& samples) {
  nlohmann::json a = nlohmann::json::array();
  for (double v : samples) a.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
  return a.dump();
}

std::expected<std::vector<double>, std::string> SamplesFromJson(const std::string& text) {
  // What SamplesToJson writes is flat and short: text longer than
  // kMaxSamples numbers can be (each at most 25 characters and a comma), or
  // nested, is refused before it is parsed.
  if (text.size() > kMaxSamples * 26 + 2)
    return std::unexpected("samples: longer than " + std::to_string(kMaxSamples) + " numbers");
  if (std::count(text.begin(), text.end(), '[') > 1 || text.find('{') != std::string::npos)
    return std::unexpected(std::string("samples: expected a flat JSON array of numbers"));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::unexpected(std::string("samples: not JSON"));
  if (!j.is_array())
    return std::unexpected(std::string("samples: expected a JSON array of numbers, not ") +
                           j.type_name());
  if (j.size() > kMaxSamples)
    return std::unexpected("samples: more than " + std::to_string(kMaxSamples));
  std::vector<double> out;
  for (const nlohmann::json& v : j) {
    if (v.is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      double d = v.get<double>();
      if (!std::isfinite(d)) return std::unexpected(std::string("samples: a number out of range"));
      out.push_back(d);
    } else {
      return std::unexpected(std::string("samples: expected numbers, found ") + v.type_name());
    }
  }
  return out;
}

}  // namespace writelab
