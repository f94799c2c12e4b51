// SPDX-License-Identifier: MIT
// The survey's recommendations under MPI (docs/mpi.md): how the figures
// scale with the number of clients, read from the aggregates of the
// one-rank and all-rank steps.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/units.h"
#include "mpi/figures.h"
#include "report/recommendations.h"

namespace writelab {
namespace {

constexpr FigureKey kMbS = KeyOf(kRanksFigures, "mb_s");
constexpr FigureKey kLinesS = KeyOf(kRanksFigures, "lines_s");
constexpr FigureKey kSlowest = KeyOf(kRanksFigures, "rank_mb_s_min");
constexpr FigureKey kTotalP99 = KeyOf(kRanksFigures, "total_p99_ms");
constexpr FigureKey kTotalMax = KeyOf(kRanksFigures, "total_max_ms");
constexpr FigureKey kBgMbS = KeyOf(kRanksFigures, "bg_mb_s");

// A value with its unit, also where FormatValue leaves a rate bare.
std::string WithUnit(double v, const std::string& unit) {
  std::string text = FormatValue(v, unit);
  return text.find(unit) == std::string::npos ? text + " " + unit : text;
}

std::optional<double> Median(const Row* r, FigureKey key) {
  if (!r || r->status != RowStatus::kOk) return std::nullopt;
  const Figure* f = r->FindFigure(key.name);
  return f ? std::optional<double>(f->value.median) : std::nullopt;
}

const Row* RowNamed(const ExperimentResult* e, const std::string& name) {
  return e ? e->FindRow(name) : nullptr;
}

// The aggregate of `name` over exactly `ranks` measuring ranks (0: the most).
const ExperimentResult* Aggregate(const Document& doc, const std::string& name, int ranks) {
  const ExperimentResult* found = nullptr;
  for (const ExperimentResult& e : doc.experiments)
    if (e.name == name && e.ranks > 0 &&
        (ranks ? e.ranks == ranks : !found || e.ranks > found->ranks))
      found = &e;
  return found;
}

// "2.1x rank 0 alone, 70% of linear": what N clients made of one's figure.
std::string Scaling(double alone, double together, int clients) {
  const double x = together / alone, linear = x / clients;
  const char* verdict = linear >= 0.8 ? "it scales with the clients"
                        : x < 1.2     ? "it does not scale: the clients share one limit"
                                      : "it scales in part";
  return fmt::format("{:.2g}x rank 0 alone, {:.0f}% of linear: {}", x, linear * 100, verdict);
}

// The best row of the all-ranks aggregate by key, with its one-rank figure.
std::string ScalingLine(const Document& doc, const char* name, const char* what, FigureKey key,
                        const std::string& unit) {
  const ExperimentResult* one = Aggregate(doc, name, 1);
  const ExperimentResult* all = Aggregate(doc, name, 0);
  if (!one || !all || all->ranks < 2)
    return fmt::format("{} across clients: not enough ranks measured", what);
  const Row* best = nullptr;
  for (const Row& r : all->rows)
    if (Median(&r, key) && Median(RowNamed(one, r.name), key) &&
        (!best || *Median(&r, key) > *Median(best, key)))
      best = &r;
  if (!best) return fmt::format("{} across clients: not enough rows measured", what);
  const double alone = *Median(RowNamed(one, best->name), key), together = *Median(best, key);
  std::string line = fmt::format(
      "{} across {} clients: {} is the fastest, {} together against {} "
      "on rank 0 alone ({})",
      what, all->ranks, best->name, WithUnit(together, unit), WithUnit(alone, unit),
      Scaling(alone, together, all->ranks));
  if (auto slowest = Median(best, kSlowest))
    line += fmt::format("; the slowest client got {}", FormatValue(*slowest, "MB/s"));
  return line;
}

std::string FsyncAcrossLine(const Document& doc) {
  const ExperimentResult* e = Aggregate(doc, "fsync", 0);
  if (!e) return "fsync across clients: not run";
  FigureKey key = kTotalP99;
  for (const Row& r : e->rows)
    if (Median(&r, kTotalMax) && !Median(&r, kTotalP99)) key = kTotalMax;
  const Row* alone = nullptr;
  const Row* worst = nullptr;
  for (const Row& r : e->rows) {
    if (!Median(&r, key)) continue;
    if (r.name.starts_with("none/") && (!alone || *Median(&r, key) < *Median(alone, key)))
      alone = &r;
    if (!worst || *Median(&r, key) > *Median(worst, key)) worst = &r;
  }
  if (!alone || !worst) return "fsync across clients: not enough rows measured";
  const bool p99 = key.name == kTotalP99.name;
  return fmt::format(
      "fsync across clients: rank 0's 1 MiB write+sync takes {} {} while no client writes, "
      "{} as {} ({:.2g}x) while {} the background load on {} own files (writing {})",
      p99 ? "p99" : "at worst", FormatValue(*Median(alone, key), "ms"),
      FormatValue(*Median(worst, key), "ms"), worst->name,
      *Median(worst, key) / *Median(alone, key),
      doc.ranks.size() == 2 ? std::string("rank 1 runs")
                            : fmt::format("ranks 1-{} run", doc.ranks.size() - 1),
      doc.ranks.size() == 2 ? "its" : "their",
      Median(worst, kBgMbS) ? FormatValue(*Median(worst, kBgMbS), "MB/s") : "n/a");
}

}  // namespace

std::vector<std::string> RecommendationsAcrossRanks(const Document& doc) {
  std::vector<std::string> lines = {
      ScalingLine(doc, "stream", "streaming", kMbS, "MB/s"),
      doc.ranks.size() > 1 ? FsyncAcrossLine(doc)
                           : "fsync across clients: one rank, so no other client wrote beside it",
      ScalingLine(doc, "records", "small records", kLinesS, "lines/s"),
      "prealloc and stride: not run under MPI: they measure one machine's journal modes and "
      "device (run writelab survey without mpirun on a machine for them)"};
  std::set<std::string> hosts;
  for (const RankInfo& r : doc.ranks) hosts.insert(r.host.hostname);
  if (doc.ranks.size() > 1 && hosts.size() == 1)
    lines.push_back("every rank ran on " + *hosts.begin() +
                    ": the clients shared one machine's CPUs, page cache and device, so a limit "
                    "above may be that machine's rather than the storage's");
  return lines;
}

}  // namespace writelab
