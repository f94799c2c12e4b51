// SPDX-License-Identifier: MIT
// `writelab fsync`, defined: its headline, its survey steps and what the
// survey recommends from it.
#include "experiments/fsync/def.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "command/survey.h"
#include "core/units.h"
#include "experiments/fsync/figures.h"
#include "experiments/fsync/fsync.h"
#include "explain/figures.h"
#include "mpi/figures.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace fsync_def {

constexpr FigureKey kTotalP99 = KeyOf(kFsyncFigures, "total_p99_ms");
constexpr FigureKey kTotalMax = KeyOf(kFsyncFigures, "total_max_ms");
constexpr FigureKey kBgMbS = KeyOf(kFsyncFigures, "bg_mb_s");
constexpr FigureKey kDeviceMbS = KeyOf(kFsyncFigures, "device_mb_s");
constexpr FigureKey kBgDevicePct = KeyOf(kFsyncFigures, "bg_device_pct");
constexpr FigureKey kVsNone = KeyOf(kFsyncFigures, "vs_none_pct");
constexpr FigureKey kVsNoneP = KeyOf(kFsyncFigures, "vs_none_p");
constexpr FigureKey kRanksTotalP99 = KeyOf(kRanksFigures, "total_p99_ms");
constexpr FigureKey kRanksTotalMax = KeyOf(kRanksFigures, "total_max_ms");
constexpr FigureKey kRanksBgMbS = KeyOf(kRanksFigures, "bg_mb_s");

// p99 where every row measured has one (100 iterations), else the worst.
FigureKey TotalKey(const ExperimentResult& e) {
  for (const Row& r : e.rows)
    if (MedianOf(r, kTotalMax) && !MedianOf(r, kTotalP99)) return kTotalMax;
  return kTotalP99;
}

Headline FsyncHeadline(const ExperimentResult& e) {
  const bool all_p99 = std::all_of(e.rows.begin(), e.rows.end(), [](const Row& r) {
    return r.status != RowStatus::kOk || r.FindFigure(kTotalP99.name);
  });
  return {all_p99 ? kTotalP99.name : kTotalMax.name, true};
}

FsyncSpec SurveySpec(const SurveySizes& z) {
  FsyncSpec s;
  s.dir = z.dir;
  s.count = 3;  // beside a stream a sync can take a second: 3 x 5 rounds per row
  s.rounds = kSurveyTrials;
  s.interval_ns = 150'000'000;
  s.methods = {SyncMethod::kFsync, SyncMethod::kFdatasync};
  s.bg_warmup_ns = 1'500'000'000;
  s.bg_warmup_auto = true;  // a background that has not reached the device says nothing
  return s;
}

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"fsync", "sync latency beside background writers", 50,
           Validated(SurveySpec(z), ValidateFsyncSpec, RunFsync), 0, true}};
}

// As in 2009 across clients: rank 0 measures while the others write.
std::vector<SurveyStep> SurveyAcrossRanks(const SurveySizes& z) {
  FsyncSpec fsync = SurveySpec(z);
  if (z.ranks > 1) fsync.roles = "measure=0,background=1-" + std::to_string(z.ranks - 1);
  auto run = [fsync](const RunContext& ctx, ExperimentResult& e) {
    FsyncSpec spec = fsync;
    spec.background_rank = !spec.roles.empty() && ctx.team && ctx.team->rank() != 0;
    if (auto ok = ValidateFsyncSpec(spec); !ok) return Status(Unexpected(PlainError(ok.error())));
    return RunFsync(spec, ctx, e);
  };
  return {{"fsync", "rank 0's sync latency while the other ranks write", 26, run, 0, true}};
}

// "stream/fdatasync/wbt=2ms" (BACKGROUND/METHOD/MITIGATION), not its none.
bool IsMitigationRow(const Row& r) {
  return std::count(r.name.begin(), r.name.end(), '/') >= 2 && !r.name.ends_with("/none");
}

// What the mitigation rows measured against none, each with its verdict;
// without any, how to measure them.
std::string Mitigations(const ExperimentResult& e) {
  std::vector<std::string> said;
  for (const Row& r : e.rows) {
    auto change = MedianOf(r, kVsNone);
    auto p = MedianOf(r, kVsNoneP);
    auto worst = MedianOf(r, kTotalMax);
    if (!change || !p || !worst) continue;
    if (auto pct = MedianOf(r, kBgDevicePct); pct && *pct < kBackgroundInCachePct)
      continue;  // its background stayed in the page cache: it says nothing
    said.push_back(fmt::format("{} {} ({:+.0f}%, {})", r.name, FormatValue(*worst, "ms"), *change,
                               *p < 0.05 ? "significant" : "not significant"));
  }
  if (said.empty())
    return "; the kernel's answers to the stall can be measured here with writelab fsync "
           "--background stream --mitigation wbt=2ms,bdi=256M,bg=window-drop";
  return fmt::format("; the worst write+sync under each mitigation, against none: {}",
                     fmt::join(said, ", "));
}

// The idle row's write+sync against the worst row's beside a background.
Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& e = *runs.front();
  const FigureKey key = TotalKey(e);
  Recommendation rec{"fsync", {key.name, kBgMbS.name, kDeviceMbS.name}, "", ""};
  const Row* idle = nullptr;
  const Row* worst = nullptr;
  std::vector<std::string> in_cache;  // rows whose background never reached the device
  for (const Row& r : e.rows) {
    if (!MedianOf(r, key) || IsMitigationRow(r)) continue;  // reported against none below
    if (auto pct = MedianOf(r, kBgDevicePct); pct && *pct < kBackgroundInCachePct) {
      in_cache.push_back(r.name);
      continue;
    }
    if (r.name.starts_with("none/") && (!idle || *MedianOf(r, key) < *MedianOf(*idle, key)))
      idle = &r;
    // The worst beside a background: a row without one that came out slower
    // (a noisy machine) says nothing of the stall.
    if (!r.name.starts_with("none/") && (!worst || *MedianOf(r, key) > *MedianOf(*worst, key)))
      worst = &r;
  }
  if (!idle || !worst) {
    rec.text = "fsync: not enough rows measured";
    if (!in_cache.empty())
      rec.text +=
          fmt::format(" ({}: the background stayed in the page cache)", fmt::join(in_cache, ", "));
    return rec;
  }
  rec.text = fmt::format(
      "fsync: a 1 MiB write+sync takes {} {} alone but {} as {} (background wrote {}, the "
      "device took {}); keep big writers' dirty data bounded (see streaming) where syncs "
      "matter",
      key.name == kTotalP99.name ? "p99" : "at worst", ValueOf(*idle, key, "ms"),
      ValueOf(*worst, key, "ms"), worst->name, ValueOf(*worst, kBgMbS, "MB/s"),
      ValueOf(*worst, kDeviceMbS, "MB/s"));
  const std::string wait = LargestWait(*worst, false);
  rec.verdict = fmt::format(
      "fsync: a 1 MiB write+sync {} {} alone, {} beside the {} background ({:.0f}x, {}{})",
      key.name == kTotalP99.name ? "p99" : "at worst", ValueOf(*idle, key, "ms"),
      ValueOf(*worst, key, "ms"), worst->name.substr(0, worst->name.find('/')),
      *MedianOf(*worst, key) / *MedianOf(*idle, key), worst->name,
      wait.empty() ? "" : "; " + wait + " of its time");
  if (auto pct = MedianOf(*worst, kBgDevicePct)) {
    rec.figures.push_back(kBgDevicePct.name);
    rec.text += fmt::format(" (its background reached the device: {:.0f}% of its bytes)", *pct);
  }
  if (std::string where = WhereTheTimeWent(*worst); !where.empty())
    rec.text += fmt::format(" (measured, {}: {})", worst->name, where);
  if (std::string who = WhoWasAhead(*worst, worst->name.substr(0, worst->name.find('/')));
      !who.empty())
    rec.text += fmt::format(" ({})", who);
  if (!in_cache.empty())
    rec.text += fmt::format("; left out, their background stayed in the page cache: {}",
                            fmt::join(in_cache, ", "));
  rec.text += Mitigations(e);
  return rec;
}

Recommendation RecommendAcrossRanks(const Document& doc) {
  if (doc.ranks.size() <= 1)
    return {"fsync", {}, "fsync across clients: one rank, so no other client wrote beside it", ""};
  const ExperimentResult* e = Aggregate(doc, "fsync", 0);
  if (!e) return {"fsync", {}, "fsync across clients: not run", ""};
  FigureKey key = kRanksTotalP99;
  for (const Row& r : e->rows)
    if (MedianOf(r, kRanksTotalMax) && !MedianOf(r, kRanksTotalP99)) key = kRanksTotalMax;
  const Row* alone = nullptr;
  const Row* worst = nullptr;
  for (const Row& r : e->rows) {
    if (!MedianOf(r, key)) continue;
    if (r.name.starts_with("none/") && (!alone || *MedianOf(r, key) < *MedianOf(alone, key)))
      alone = &r;
    if (!worst || *MedianOf(r, key) > *MedianOf(worst, key)) worst = &r;
  }
  if (!alone || !worst) return {"fsync", {}, "fsync across clients: not enough rows measured", ""};
  const bool p99 = key.name == kRanksTotalP99.name;
  return {"fsync",
          {key.name, kRanksBgMbS.name},
          fmt::format(
              "fsync across clients: rank 0's 1 MiB write+sync takes {} {} while no client writes, "
              "{} as {} ({:.2g}x) while {} the background load on {} own files (writing {})",
              p99 ? "p99" : "at worst", FormatValue(*MedianOf(alone, key), "ms"),
              FormatValue(*MedianOf(worst, key), "ms"), worst->name,
              *MedianOf(worst, key) / *MedianOf(alone, key),
              doc.ranks.size() == 2 ? std::string("rank 1 runs")
                                    : fmt::format("ranks 1-{} run", doc.ranks.size() - 1),
              doc.ranks.size() == 2 ? "its" : "their",
              MedianOf(worst, kRanksBgMbS) ? FormatValue(*MedianOf(worst, kRanksBgMbS), "MB/s")
                                           : "n/a"),
          ""};
}

}  // namespace fsync_def

const ExperimentDef kFsyncDef = {
    .report = {.name = "fsync",
               .figures = kFsyncFigures,
               .headline = fsync_def::FsyncHeadline,
               .picture = FsyncPictures},
    .reproduces = kFsyncReproduces,
    .runs_under_mpi = true,
    .add_command = AddFsyncCommand,
    .survey = fsync_def::Survey,
    .survey_across_ranks = fsync_def::SurveyAcrossRanks,
    .recommend = fsync_def::Recommend,
    .recommend_across_ranks = fsync_def::RecommendAcrossRanks,
};

}  // namespace writelab
