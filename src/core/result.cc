// SPDX-License-Identifier: MIT
#include "core/result.h"

#include <algorithm>
#include <stdexcept>

namespace writelab {

Latency Latency::From(const Histogram& h, std::string key, std::string label,
                      std::string includes) {
  Latency l;
  l.key = std::move(key);
  l.label = std::move(label);
  l.includes = std::move(includes);
  l.count = h.count();
  l.min_ns = h.min();
  l.max_ns = h.max();
  l.mean_ns = h.mean();
  l.stddev_ns = h.stddev();
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    if (auto ns = h.SupportedPercentile(p))
      l.percentiles_ns.emplace_back(p, *ns);
    else if (h.count() > 0)
      l.percentiles_omitted.emplace_back(p, "needs " + std::to_string(Histogram::SamplesFor(p)) +
                                                " samples, " + std::to_string(h.count()) +
                                                " recorded");
  }
  for (int i = 0; h.count() > 0 && i < Histogram::kBuckets; ++i)
    if (uint64_t n = h.bucket_count(i))
      l.buckets.push_back({Histogram::BucketLow(i), Histogram::BucketHigh(i), n});
  return l;
}

std::optional<uint64_t> Latency::At(double percentile) const {
  for (const auto& [p, ns] : percentiles_ns)
    if (p == percentile) return ns;
  return std::nullopt;
}

namespace {

template <class Values>
void CheckKeys(std::span<const FigureSpec> specs, const Values& values) {
  for (const auto& [key, value] : values) {
    bool known = false;
    for (const FigureSpec& s : specs) known = known || key == s.key;
    if (!known) throw std::logic_error("figure '" + key + "' is not in the experiment's table");
  }
}

}  // namespace

std::vector<std::string> KeyNames(std::span<const FigureKey> keys) {
  std::vector<std::string> out;
  for (FigureKey k : keys) out.emplace_back(k.name);
  return out;
}

namespace {

// "probe_p99_ms", "p50_ms": a percentile a trial gives only with enough samples.
bool IsPercentileKey(std::string_view key) {
  for (std::string_view p : {"p50_ms", "p90_ms", "p99_ms"})
    if (key.ends_with(p)) return true;
  return false;
}

}  // namespace

void AddFigures(std::vector<Figure>& figures, std::span<const FigureSpec> specs,
                const std::map<std::string, std::vector<double>>& values) {
  CheckKeys(specs, values);
  size_t trials = 0;
  for (const auto& [key, v] : values) trials = std::max(trials, v.size());
  for (const FigureSpec& s : specs) {
    auto it = values.find(s.key);
    if (it == values.end()) continue;
    // A median of the trials that had enough samples would be a median of
    // a chosen few: a percentile figure is given for all trials or none.
    if (IsPercentileKey(it->first) && it->second.size() < trials) continue;
    figures.push_back(s.Make(Summarize(it->second)));
  }
}

void AddFigures(std::vector<Figure>& figures, std::span<const FigureSpec> specs,
                const std::map<std::string, double>& values) {
  CheckKeys(specs, values);
  for (const FigureSpec& s : specs)
    if (auto it = values.find(s.key); it != values.end())
      figures.push_back(s.Make(Summarize({it->second})));
}

const char* RowStatusName(RowStatus s) {
  switch (s) {
    case RowStatus::kOk:
      return "ok";
    case RowStatus::kUnsupported:
      return "unsupported";
    case RowStatus::kFailed:
      return "failed";
  }
  return "?";
}

const Figure* Row::FindFigure(const std::string& key) const {
  for (const Figure& f : figures)
    if (f.key == key) return &f;
  return nullptr;
}

const Latency* Row::FindLatency(const std::string& key) const {
  for (const Latency& l : latencies)
    if (l.key == key) return &l;
  return nullptr;
}

const Row* ExperimentResult::FindRow(const std::string& name) const {
  for (const Row& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace writelab
