// SPDX-License-Identifier: MIT
// `writelab stream`, defined: its headline, its survey steps and what the
// survey recommends from it.
#include "experiments/stream/def.h"

#include <fmt/format.h>

#include <algorithm>

#include "command/survey.h"
#include "command/trials.h"
#include "core/units.h"
#include "experiments/stream/figures.h"
#include "experiments/stream/stream.h"
#include "explain/figures.h"
#include "mpi/figures.h"
#include "report/recommendations.h"
#include "telemetry/dirty_threshold.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace stream_def {

constexpr FigureKey kMbS = KeyOf(kStreamFigures, "mb_s");
constexpr FigureKey kCached = KeyOf(kStreamFigures, "cached_end");
constexpr FigureKey kProbeP99 = KeyOf(kStreamFigures, "probe_p99_ms");
constexpr FigureKey kProbeMax = KeyOf(kStreamFigures, "probe_max_ms");
constexpr FigureKey kThrottledPct = KeyOf(kExplainFigures, "x_throttled_pct");
constexpr FigureKey kBytes = KeyOf(kStreamFigures, "bytes");
constexpr FigureKey kVsThreshold = KeyOf(kStreamFigures, "vs_threshold");

Headline StreamHeadline(const ExperimentResult&) { return {kMbS.name, false}; }

// Throughput trials are short: 5 of 128 MiB at most, an eighth of the free
// space at least 8 MiB.
StreamSpec SurveySpec(const SurveySizes& z) {
  StreamSpec s;
  s.dir = z.dir;
  s.size = std::clamp<uint64_t>(z.free_bytes / 8 / (8u << 20) * (8u << 20), 8u << 20, 128u << 20);
  s.rounds = kSurveyTrials;
  s.interval_ns = 250'000'000;
  return s;
}

// The bystander's trial: one long trial of plain and the two strategies
// that bound the page cache, each writing two and a half times the dirty
// background threshold of the target's device, so that the kernel's
// writeback fills the device's queue while the bystander syncs (the 2009
// stall; AutoStreamSize, as stream's --size auto), stopped after
// kPressureLimit (ns) per trial. Sized when it runs (the device's
// threshold), so that the parameters say what was found.
constexpr uint64_t kPressureLimit = 30'000'000'000;
// ... and at least this long: on a fast device with a small threshold the
// trial writes its file again, so that the bystander probes 30 times or so.
constexpr uint64_t kPressureMinTime = 3'000'000'000;

SurveyRun PressureRun(const SurveySizes& z) {
  return [z](const RunContext& ctx, ExperimentResult& e) {
    StreamSpec s;
    s.dir = z.dir;
    s.strategies = {StreamStrategy::kPlain, StreamStrategy::kWindowDrop, StreamStrategy::kDontcache,
                    StreamStrategy::kPaced};
    s.rounds = 1;
    s.interval_ns = 250'000'000;
    s.time_limit_ns = kPressureLimit;
    s.min_time_ns = kPressureMinTime;
    s.size = AutoStreamSize(BackgroundThreshold(TargetOf(ctx, z.dir).device).bytes, z.free_bytes,
                            s.block);
    if (auto ok = ValidateStreamSpec(s); !ok) return Status(Unexpected(PlainError(ok.error())));
    return RunStream(s, ctx, e);
  };
}

// What the short trials write: every strategy, every round.
uint64_t SurveyBytes(const SurveySizes& z) {
  return SurveySpec(z).size * std::size(kStreamStrategies) * kSurveyTrials;
}

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"stream", "streaming strategies", 7,
           Validated(SurveySpec(z), ValidateStreamSpec, RunStream), SurveyBytes(z)},
          {"stream", "streaming past the writeback threshold, with a bystander", 33, PressureRun(z),
           3 * AutoStreamSize(z.threshold, z.free_bytes, StreamSpec{}.block)}};
}

std::vector<SurveyStep> SurveyAcrossRanks(const SurveySizes& z) {
  SurveyRun run = Validated(SurveySpec(z), ValidateStreamSpec, RunStream);
  return {{"stream", "streaming strategies, rank 0 alone", 7, OnRankZero(run), SurveyBytes(z)},
          {"stream", "streaming strategies, " + AllRanks(z.ranks), 7, run,
           SurveyBytes(z) * static_cast<uint64_t>(z.ranks)}};
}

constexpr const char* kBounded[] = {"window-drop", "dontcache", "direct", "paced", "library"};

// Of the strategies that bound the page cache, the one with the lowest
// `by` (the bystander's worst) or, with none given, the fastest; or null.
const Row* Best(const ExperimentResult& e, const FigureKey* by = nullptr) {
  const Row* best = nullptr;
  for (const char* name : kBounded) {
    const Row* r = e.FindRow(name);
    const FigureKey key = by ? *by : kMbS;
    if (!r || !MedianOf(*r, key)) continue;
    if (!best || (by ? *MedianOf(*r, key) < *MedianOf(*best, key)
                     : *MedianOf(*r, key) > *MedianOf(*best, key)))
      best = r;
  }
  return best;
}

// Whether the pressure run's trials wrote past the writeback threshold.
bool Provoked(const ExperimentResult& p) {
  const Row* plain = p.FindRow("plain");
  return plain && MedianOf(*plain, kVsThreshold) && *MedianOf(*plain, kVsThreshold) >= 1;
}

// What the bystander saw beside each strategy, when the trials wrote past
// the writeback threshold; else why the stall could not be provoked.
std::string PressureText(const ExperimentResult& p, Recommendation& rec) {
  const Row* plain = p.FindRow("plain");
  const int64_t threshold = ParamInt(p, "writeback_threshold");
  if (!plain || !MedianOf(*plain, kBytes)) return "the run past the writeback threshold failed";
  const double written = *MedianOf(*plain, kBytes);
  if (!Provoked(p))
    return fmt::format(
        "the stall could not be provoked: plain wrote {} of the {} needed to pass the dirty "
        "background threshold of {} (within {} and a quarter of the free space); as root, "
        "`writelab stream --testbed ext4:dirty=64M` provokes it in seconds; no conclusion about "
        "stalls is drawn",
        FormatBytes(written), FormatBytes(static_cast<double>(ParamInt(p, "size"))),
        FormatBytes(static_cast<double>(threshold)), FormatValue(kPressureLimit / 1e9, "s"));
  rec.figures.insert(rec.figures.end(), {kProbeMax.name, kVsThreshold.name});
  std::string sides;
  for (const Row& r : p.rows)
    if (MedianOf(r, kMbS))
      sides += fmt::format("{}{} at {}, bystander fdatasync max {}", sides.empty() ? "" : "; ",
                           r.name, ValueOf(r, kMbS, "MB/s"), ValueOf(r, kProbeMax, "ms"));
  return fmt::format(
      "past the writeback threshold ({} per trial, {:.2g}x the {} where the kernel starts "
      "writing back): {}",
      FormatBytes(written), *MedianOf(*plain, kVsThreshold),
      FormatBytes(static_cast<double>(threshold)), sides);
}

// Of the strategies that bound the page cache: where the stall was
// provoked, the one that kept the bystander's worst lowest; else the
// fastest. Speed and cache from the short trials, the stall from the
// trials past the writeback threshold, each with its condition.
// The finding in one line: the pick against plain, and the bystander's
// worst past the threshold when it was provoked.
std::string StreamVerdict(const Row& pick, const Row& plain, const ExperimentResult* pressure,
                          const Row* calmest) {
  std::string line =
      fmt::format("streaming: use {}: {} against plain's {}, leaving {} cached (plain {})",
                  pick.name, ValueOf(pick, kMbS, "MB/s"), ValueOf(plain, kMbS, "MB/s"),
                  ValueOf(pick, kCached, "bytes"), ValueOf(plain, kCached, "bytes"));
  const Row* plain_past = pressure ? pressure->FindRow("plain") : nullptr;
  if (pressure && !Provoked(*pressure)) return line + "; the bystander's stall was not provoked";
  if (!calmest || !plain_past || !MedianOf(*plain_past, kProbeMax))
    return line + (pressure ? "; the bystander's stall was not measured" : "");
  if (*MedianOf(*calmest, kProbeMax) >= *MedianOf(*plain_past, kProbeMax))
    return line + fmt::format("; no strategy calmed the bystander (worst fdatasync {}, plain {})",
                              ValueOf(*calmest, kProbeMax, "ms"),
                              ValueOf(*plain_past, kProbeMax, "ms"));
  return line + fmt::format("; the bystander's worst fdatasync {} (plain {})",
                            ValueOf(*calmest, kProbeMax, "ms"),
                            ValueOf(*plain_past, kProbeMax, "ms"));
}

Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& e = *runs.front();
  const ExperimentResult* pressure = nullptr;
  for (const ExperimentResult* r : runs)
    if (r != &e && ParamInt(*r, "writeback_threshold") && r->FindRow("plain")) pressure = r;
  Recommendation rec{"stream", {kMbS.name, kCached.name}, "", ""};
  const Row* fastest = Best(e);
  const Row* calmest = pressure && Provoked(*pressure) ? Best(*pressure, &kProbeMax) : nullptr;
  const Row* best = calmest && e.FindRow(calmest->name) ? e.FindRow(calmest->name) : fastest;
  const Row* plain = e.FindRow("plain");
  if (!best || !plain || !MedianOf(*plain, kMbS) || !MedianOf(*best, kMbS)) {
    rec.text = "streaming: not enough rows measured";
    return rec;
  }
  auto short_side = [&](const Row& r) {
    return fmt::format("{} {}, {} left cached", r.name, ValueOf(r, kMbS, "MB/s"),
                       ValueOf(r, kCached, "bytes"));
  };
  rec.text = fmt::format(
      "streaming: prefer {}{} — in short trials of {} (below the writeback threshold: speed and "
      "cache only): {}; {}",
      calmest ? calmest->name : best->name,
      calmest ? " (the bystander's calmest past the writeback threshold)" : "",
      FormatBytes(static_cast<double>(ParamInt(e, "size"))), short_side(*best), short_side(*plain));
  rec.verdict = StreamVerdict(*best, *plain, pressure, calmest);
  rec.text += pressure ? "; " + PressureText(*pressure, rec)
                       : "; the bystander's stall was not measured past the writeback threshold";
  if (auto throttled = MedianOf(pressure ? pressure->FindRow("plain") : plain, kThrottledPct)) {
    rec.figures.push_back(kThrottledPct.name);
    rec.text += fmt::format(
        " (measured: plain was throttled in balance_dirty_pages for {:.0f}% of its time)",
        *throttled);
  }
  return rec;
}

Recommendation RecommendAcrossRanks(const Document& doc) {
  return ScalingRecommendation(doc, "stream", "streaming", KeyOf(kRanksFigures, "mb_s"), "MB/s");
}

}  // namespace stream_def

const ExperimentDef kStreamDef = {
    .report = {.name = "stream",
               .figures = kStreamFigures,
               .headline = stream_def::StreamHeadline,
               .picture = StreamPictures},
    .reproduces = kStreamReproduces,
    .runs_under_mpi = true,
    .add_command = AddStreamCommand,
    .survey = stream_def::Survey,
    .survey_across_ranks = stream_def::SurveyAcrossRanks,
    .recommend = stream_def::Recommend,
    .recommend_across_ranks = stream_def::RecommendAcrossRanks,
};

}  // namespace writelab
