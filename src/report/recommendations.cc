// SPDX-License-Identifier: MIT
#include "report/recommendations.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/units.h"
#include "experiments/fsync/figures.h"
#include "experiments/prealloc/figures.h"
#include "experiments/records/figures.h"
#include "experiments/stream/figures.h"
#include "experiments/stride/figures.h"
#include "explain/figures.h"

namespace writelab {
namespace {

// The figures the recommendations read, checked against their tables.
constexpr FigureKey kStreamMbS = KeyOf(kStreamFigures, "mb_s");
constexpr FigureKey kStreamCached = KeyOf(kStreamFigures, "cached_end");
constexpr FigureKey kStreamProbeP99 = KeyOf(kStreamFigures, "probe_p99_ms");
constexpr FigureKey kStreamProbeMax = KeyOf(kStreamFigures, "probe_max_ms");
constexpr FigureKey kFsyncTotalP99 = KeyOf(kFsyncFigures, "total_p99_ms");
constexpr FigureKey kFsyncTotalMax = KeyOf(kFsyncFigures, "total_max_ms");
constexpr FigureKey kFsyncBgMbS = KeyOf(kFsyncFigures, "bg_mb_s");
constexpr FigureKey kFsyncDeviceMbS = KeyOf(kFsyncFigures, "device_mb_s");
constexpr FigureKey kRecordsLinesS = KeyOf(kRecordsFigures, "lines_s");
constexpr FigureKey kPreallocWorkload = KeyOf(kPreallocFigures, "workload_s");
constexpr FigureKey kPreallocUnwrittenAfter = KeyOf(kPreallocFigures, "unwritten_after");
constexpr FigureKey kStrideMbS = KeyOf(kStrideFigures, "mb_s");
constexpr FigureKey kStrideKibPerWrite = KeyOf(kStrideFigures, "device_kib_per_write");

const ExperimentResult* Find(const Document& doc, const std::string& name) {
  for (const ExperimentResult& e : doc.experiments)
    if (e.name == name) return &e;
  return nullptr;
}

std::optional<double> Median(const Row& r, FigureKey key) {
  if (r.status != RowStatus::kOk) return std::nullopt;
  const Figure* f = r.FindFigure(key.name);
  return f ? std::optional<double>(f->value.median) : std::nullopt;
}

int64_t ParamInt(const ExperimentResult& e, const std::string& key) {
  for (const Param& p : e.params)
    if (p.key == key && std::holds_alternative<int64_t>(p.value)) return std::get<int64_t>(p.value);
  return 0;
}

std::string Value(const Row& r, FigureKey key, const std::string& unit) {
  auto v = Median(r, key);
  return v ? FormatValue(*v, unit) : "n/a";
}

constexpr FigureKey kThrottledPct = KeyOf(kExplainFigures, "x_throttled_pct");
constexpr FigureKey kConversionsPerWrite = KeyOf(kExplainFigures, "x_conversions_per_write");
constexpr FigureKey kCommits = KeyOf(kExplainFigures, "x_commits");

// --explain's cause for a row, when it was measured: "" otherwise.
std::string ThrottleCause(const Row& r) {
  auto v = Median(r, kThrottledPct);
  return v ? fmt::format(
                 "{}: the writer was throttled in balance_dirty_pages for {:.0f}% of its "
                 "time",
                 r.name, *v)
           : "";
}

std::string StreamLine(const ExperimentResult& e) {
  const Row* best = nullptr;
  for (const char* name : {"window-drop", "dontcache", "direct", "library"}) {
    const Row* r = e.FindRow(name);
    if (r && Median(*r, kStreamMbS) &&
        (!best || *Median(*r, kStreamMbS) > *Median(*best, kStreamMbS)))
      best = r;
  }
  const Row* plain = e.FindRow("plain");
  if (!best || !plain || !Median(*plain, kStreamMbS)) return "streaming: not enough rows measured";
  auto describe = [](const Row& r) {
    bool p99 = Median(r, kStreamProbeP99).has_value();  // else too few probes for a p99
    return fmt::format("{}, {} left cached, bystander fsync {} {}", Value(r, kStreamMbS, "MB/s"),
                       Value(r, kStreamCached, "bytes"), p99 ? "p99" : "max",
                       Value(r, p99 ? kStreamProbeP99 : kStreamProbeMax, "ms"));
  };
  std::string line = fmt::format("streaming: prefer {} — {}; plain writes: {}", best->name,
                                 describe(*best), describe(*plain));
  if (std::string cause = ThrottleCause(*plain); !cause.empty())
    line += fmt::format(" (measured: {}; {}: {:.0f}%)", cause, best->name,
                        Median(*best, kThrottledPct).value_or(0));
  return line;
}

std::string FsyncLine(const ExperimentResult& e) {
  // p99 where every row has enough iterations for one, else the slowest.
  FigureKey key = kFsyncTotalP99;
  for (const Row& r : e.rows)
    if (Median(r, kFsyncTotalMax) && !Median(r, kFsyncTotalP99)) key = kFsyncTotalMax;
  const Row* idle = nullptr;
  const Row* worst = nullptr;
  for (const Row& r : e.rows) {
    if (!Median(r, key)) continue;
    if (r.name.starts_with("none/") && (!idle || *Median(r, key) < *Median(*idle, key))) idle = &r;
    if (!worst || *Median(r, key) > *Median(*worst, key)) worst = &r;
  }
  if (!idle || !worst) return "fsync: not enough rows measured";
  return fmt::format(
             "fsync: a 1 MiB write+sync takes {} {} alone but {} as {} (background wrote {}, the "
             "device took {}); keep big writers' dirty data bounded (see streaming) where syncs "
             "matter",
             key.name == kFsyncTotalP99.name ? "p99" : "at worst", Value(*idle, key, "ms"),
             Value(*worst, key, "ms"), worst->name, Value(*worst, kFsyncBgMbS, "MB/s"),
             Value(*worst, kFsyncDeviceMbS, "MB/s")) +
         (WhereTheTimeWent(*worst).empty()
              ? ""
              : fmt::format(" (measured, {}: {})", worst->name, WhereTheTimeWent(*worst)));
}

std::string RecordsLine(const ExperimentResult& e) {
  const Row* write = e.FindRow("write");
  const Row* best = nullptr;
  for (const Row& r : e.rows)
    if (Median(r, kRecordsLinesS) &&
        (!best || *Median(r, kRecordsLinesS) > *Median(*best, kRecordsLinesS)))
      best = &r;
  if (!write || !best || !Median(*write, kRecordsLinesS)) return "small records: not measured";
  const Row* lib = e.FindRow("library");
  return fmt::format(
      "small records: gather them — {} wrote {:.3g} lines/s, {:.0f}x one write() per line "
      "({:.3g} lines/s){}",
      best->name, *Median(*best, kRecordsLinesS),
      *Median(*best, kRecordsLinesS) / *Median(*write, kRecordsLinesS),
      *Median(*write, kRecordsLinesS),
      lib && Median(*lib, kRecordsLinesS)
          ? fmt::format("; writelab::RecordWriter: {:.3g} lines/s", *Median(*lib, kRecordsLinesS))
          : "");
}

std::string PreallocLine(const ExperimentResult& e) {
  const Row* falloc = e.FindRow("fallocate");
  const Row* zero = e.FindRow("zero-fill");
  if (!falloc || !zero || !Median(*falloc, kPreallocWorkload) || !Median(*zero, kPreallocWorkload))
    return "preallocation: not measured";
  double ratio = *Median(*falloc, kPreallocWorkload) / *Median(*zero, kPreallocWorkload);
  std::string advice = ratio > 1.5
                           ? "for small synchronous writes into a preallocated file, write zeros "
                             "first (or FALLOC_FL_WRITE_ZEROES where the device offers it)"
                           : "fallocate costs little here";
  std::string cause;
  if (auto conv = Median(*falloc, kConversionsPerWrite))
    cause = fmt::format(
        " (measured: {:.1f} extent conversions per write and {} journal commits "
        "into the fallocate'd file, {} and {} into the zero-filled one)",
        *conv, Value(*falloc, kCommits, ""), Value(*zero, kConversionsPerWrite, ""),
        Value(*zero, kCommits, ""));
  return fmt::format(
      "preallocation: {} sync+direct writes took {} into a fallocate'd file, {} into a zero-filled "
      "one ({:.1f}x; unwritten extents {} after); {}{}",
      ParamInt(e, "writes"), Value(*falloc, kPreallocWorkload, "s"),
      Value(*zero, kPreallocWorkload, "s"), ratio, Value(*falloc, kPreallocUnwrittenAfter, ""),
      advice, cause);
}

// Contiguous (step x unit == block: each write starts where the last ended)
// against the most scattered step measured.
std::string StrideLine(const ExperimentResult& e) {
  const int64_t contiguous_step = ParamInt(e, "block") / std::max<int64_t>(ParamInt(e, "unit"), 1);
  const Row* contiguous = e.FindRow(std::to_string(contiguous_step));
  const Row* scattered = nullptr;
  for (const Row& r : e.rows)
    if (Median(r, kStrideMbS)) scattered = &r;  // rows go up in step: the last is the largest
  if (!contiguous || !scattered || !Median(*contiguous, kStrideMbS) || scattered == contiguous)
    return "access pattern: not measured";
  double ratio = *Median(*contiguous, kStrideMbS) / *Median(*scattered, kStrideMbS);
  return fmt::format(
      "access pattern: 4 KiB direct writes back to back (step {}) ran at {}, scattered (step {}) "
      "at {} ({:.1f}x; {} vs {} KiB per device write); {}",
      contiguous->name, Value(*contiguous, kStrideMbS, "MB/s"), scattered->name,
      Value(*scattered, kStrideMbS, "MB/s"), ratio, Value(*contiguous, kStrideKibPerWrite, ""),
      Value(*scattered, kStrideKibPerWrite, ""),
      ratio > 1.5 ? "keep writes contiguous so the block layer can merge them"
                  : "this device absorbs scattered writes about as well as contiguous ones");
}

}  // namespace

std::vector<std::string> Recommendations(const Document& doc) {
  if (!doc.ranks.empty()) return RecommendationsAcrossRanks(doc);
  std::vector<std::string> lines;
  auto add = [&](const char* name, std::string (*line)(const ExperimentResult&)) {
    const ExperimentResult* e = Find(doc, name);
    lines.push_back(e ? line(*e) : std::string(name) + ": not run");
  };
  add("stream", StreamLine);
  add("fsync", FsyncLine);
  add("records", RecordsLine);
  add("prealloc", PreallocLine);
  add("stride", StrideLine);
  return lines;
}

}  // namespace writelab
