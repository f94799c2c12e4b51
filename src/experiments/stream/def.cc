// SPDX-License-Identifier: MIT
// `writelab stream`, defined: its headline, its survey steps and what the
// survey recommends from it.
#include "experiments/stream/def.h"

#include <fmt/format.h>

#include <algorithm>

#include "command/survey.h"
#include "command/trials.h"
#include "core/significance.h"
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

// The bystander's trials: kCalmTrials rotated rounds of plain and the
// strategies that bound the page cache, each trial writing one and a
// quarter times the dirty background threshold of the target's device
// (half of AutoStreamSize, stream's --size auto), so that the kernel's
// writeback fills the device's queue while the bystander syncs (the 2009
// stall), stopped after kPressureLimit (ns) per trial. Five trials each,
// because the verdict is a rank test over them (CalmTest), never one
// trial's worst. Sized when it runs (the device's threshold), so that the
// parameters say what was found.
constexpr int kCalmTrials = 5;
constexpr uint64_t kPressureLimit = 15'000'000'000;
// ... and at least this long: on a fast device with a small threshold the
// trial writes its file again, so that the bystander probes 20 times or so.
constexpr uint64_t kPressureMinTime = 2'000'000'000;

// What one of the bystander's trials writes: past the threshold, by a
// quarter of it.
uint64_t PressureSize(uint64_t threshold, uint64_t free_bytes, uint64_t block) {
  return std::max(AutoStreamSize(threshold, free_bytes, block) / 2 / block * block, block);
}

SurveyRun PressureRun(const SurveySizes& z) {
  return [z](const RunContext& ctx, ExperimentResult& e) {
    StreamSpec s;
    s.dir = z.dir;
    s.strategies = {StreamStrategy::kPlain, StreamStrategy::kWindowDrop, StreamStrategy::kDontcache,
                    StreamStrategy::kPaced};
    s.rounds = kCalmTrials;
    s.interval_ns = 250'000'000;
    s.time_limit_ns = kPressureLimit;
    s.min_time_ns = kPressureMinTime;
    s.size =
        PressureSize(BackgroundThreshold(TargetOf(ctx, z.dir).device).bytes, z.free_bytes, s.block);
    if (auto ok = ValidateStreamSpec(s); !ok) return Status(Unexpected(PlainError(ok.error())));
    return RunStream(s, ctx, e);
  };
}

// What the short trials write: every strategy, every round.
uint64_t SurveyBytes(const SurveySizes& z) {
  return SurveySpec(z).size * (std::size(kStreamStrategies) - 1) * kSurveyTrials;  // not memcg
}

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"stream", "streaming strategies", 7,
           Validated(SurveySpec(z), ValidateStreamSpec, RunStream), SurveyBytes(z)},
          {"stream", "streaming past the writeback threshold, with a bystander", 60, PressureRun(z),
           kCalmTrials * 4 * PressureSize(z.threshold, z.free_bytes, StreamSpec{}.block)}};
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

// The rank test of the bystander past the threshold: beside which
// strategy that bounds the page cache its fdatasync was significantly
// calmer than beside plain, over the trials (two-sided Mann-Whitney U, at
// 0.05 split over the strategies compared), and what that strategy cost
// in throughput (the same test on MB/s).
struct Calm {
  const Row* pick = nullptr;     // significantly calmer, the lowest median of those
  const Row* closest = nullptr;  // the lowest median of all (without a pick: not significant)
  FigureKey probe = kProbeP99;   // p99 where every trial has one, else the worst
  double p = 1, mbs_p = 1;       // pick's (or closest's) p-values against plain
  size_t trials = 0;             // the fewest trials of any row compared
  size_t compared = 0;           // strategies compared
  double alpha = 0.05;           // what a p-value had to be under
  bool plain_calmest = false;    // no pick, and closest significantly louder than plain
};

const std::vector<double>* SamplesOf(const Row* r, FigureKey key) {
  if (!r || r->status != RowStatus::kOk) return nullptr;
  const Figure* f = r->FindFigure(key.name);
  return f && !f->value.samples.empty() ? &f->value.samples : nullptr;
}

Calm CalmTest(const ExperimentResult& p) {
  Calm c;
  const Row* plain = p.FindRow("plain");
  std::vector<const Row*> rows;
  for (const char* name : kBounded)
    if (const Row* r = p.FindRow(name); r && SamplesOf(r, kProbeMax)) rows.push_back(r);
  if (!SamplesOf(plain, kProbeMax) || rows.empty()) return c;
  for (const Row* r : rows)  // p99 only where every trial of every row has one
    for (const Row* x : {r, plain})
      if (!SamplesOf(x, kProbeP99) ||
          SamplesOf(x, kProbeP99)->size() != SamplesOf(x, kProbeMax)->size())
        c.probe = kProbeMax;
  const auto& base = *SamplesOf(plain, c.probe);
  c.trials = base.size();
  c.compared = rows.size();
  c.alpha = 0.05 / static_cast<double>(rows.size());
  auto lower = [&](const Row* r, const Row* than) {
    return !than || *MedianOf(*r, c.probe) < *MedianOf(*than, c.probe);
  };
  for (const Row* r : rows) {
    const auto& v = *SamplesOf(r, c.probe);
    c.trials = std::min(c.trials, v.size());
    if (lower(r, c.closest)) c.closest = r;
    if (lower(r, plain) && MannWhitneyP(v, base) < c.alpha && lower(r, c.pick)) c.pick = r;
  }
  if (c.trials < kCalmTrials) c.pick = nullptr;  // too few for a conclusion
  const Row* r = c.pick ? c.pick : c.closest;
  c.p = MannWhitneyP(*SamplesOf(r, c.probe), base);
  if (SamplesOf(r, kMbS) && SamplesOf(plain, kMbS))
    c.mbs_p = MannWhitneyP(*SamplesOf(r, kMbS), *SamplesOf(plain, kMbS));
  c.plain_calmest = !c.pick && c.trials >= kCalmTrials && lower(plain, c.closest) && c.p < c.alpha;
  return c;
}

std::string PValue(double p) { return p < 0.001 ? "< 0.001" : fmt::format("{:.3f}", p); }

// The writer's speed beside plain's, as the rank test found it: faster or
// a cost where it is significant, else within the trials' spread.
std::string WriterSpeedWords(const Row& pick, const Row& plain, double p) {
  if (p >= 0.05) return "the same within the trials' spread, p = " + PValue(p);
  const auto a = MedianOf(pick, kMbS), b = MedianOf(plain, kMbS);
  return "p = " + PValue(p) + (a && b && *a > *b ? ": faster" : ": a cost");
}

// The rank test's conclusion in words: the strategy beside which the
// bystander was calmer and what it cost, or that none was, or that there
// were too few trials to say.
std::string CalmWords(const ExperimentResult& p, const Calm& c) {
  const Row* plain = p.FindRow("plain");
  const char* what = c.probe.name == kProbeP99.name ? "p99" : "worst";
  if (!plain || !c.closest) return "the bystander's stall was not measured";
  if (c.trials < kCalmTrials)
    return fmt::format(
        "{} trial(s) per strategy past the threshold, fewer than the {} a rank test needs: no "
        "conclusion on the bystander's stall",
        c.trials, kCalmTrials);
  if (c.plain_calmest)
    return fmt::format(
        "the bystander was calmest beside plain: its fdatasync {} {} against {} beside {}, the "
        "calmest of the strategies that bound the page cache (rank test p = {}, {} needed, {} "
        "trials each)",
        what, ValueOf(*plain, c.probe, "ms"), ValueOf(*c.closest, c.probe, "ms"), c.closest->name,
        PValue(c.p), PValue(c.alpha), c.trials);
  if (!c.pick)
    return fmt::format(
        "no strategy calmed the bystander significantly: its fdatasync {} {} beside {} against "
        "{} beside plain (rank test p = {}, {} needed, {} trials each)",
        what, ValueOf(*c.closest, c.probe, "ms"), c.closest->name, ValueOf(*plain, c.probe, "ms"),
        PValue(c.p), PValue(c.alpha), c.trials);
  return fmt::format(
      "beside {} the bystander's fdatasync {} was {} against plain's {} (rank test p = {}, {} "
      "trials each), the writer at {} against plain's {} ({})",
      c.pick->name, what, ValueOf(*c.pick, c.probe, "ms"), ValueOf(*plain, c.probe, "ms"),
      PValue(c.p), c.trials, ValueOf(*c.pick, kMbS, "MB/s"), ValueOf(*plain, kMbS, "MB/s"),
      WriterSpeedWords(*c.pick, *plain, c.mbs_p));
}

// The rank test's conclusion, short, for the verdict's line.
std::string CalmShort(const ExperimentResult& p, const Calm& c) {
  const Row* plain = p.FindRow("plain");
  const char* what = c.probe.name == kProbeP99.name ? "p99" : "worst";
  if (!plain || !c.closest) return "the bystander's stall was not measured";
  if (c.trials < kCalmTrials)
    return fmt::format("too few trials to judge stalls ({}, {} needed)", c.trials, kCalmTrials);
  if (c.plain_calmest)
    return fmt::format("the bystander was calmest beside plain ({}: plain {}, {} {}, p = {})", what,
                       ValueOf(*plain, c.probe, "ms"), c.closest->name,
                       ValueOf(*c.closest, c.probe, "ms"), PValue(c.p));
  if (!c.pick)
    return fmt::format("the bystander was no calmer ({}: {} {}, plain {}, p = {})", what,
                       c.closest->name, ValueOf(*c.closest, c.probe, "ms"),
                       ValueOf(*plain, c.probe, "ms"), PValue(c.p));
  return fmt::format("the bystander's {} {} vs plain's {} (p = {}), writing {} vs {}", what,
                     ValueOf(*c.pick, c.probe, "ms"), ValueOf(*plain, c.probe, "ms"), PValue(c.p),
                     ValueOf(*c.pick, kMbS, "MB/s"), ValueOf(*plain, kMbS, "MB/s"));
}

// The finding in one line: the pick against plain in the short trials,
// then the rank test's conclusion past the threshold when it was provoked.
std::string StreamVerdict(const Row& pick, const Row& plain, const ExperimentResult* pressure,
                          const Calm& calm) {
  std::string line = fmt::format("streaming: use {}: {}, {} cached (plain: {}, {})", pick.name,
                                 ValueOf(pick, kMbS, "MB/s"), ValueOf(pick, kCached, "bytes"),
                                 ValueOf(plain, kMbS, "MB/s"), ValueOf(plain, kCached, "bytes"));
  if (!pressure) return line;
  if (!Provoked(*pressure)) return line + "; the bystander's stall was not provoked";
  return line + "; past the threshold " + CalmShort(*pressure, calm);
}

Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& e = *runs.front();
  const ExperimentResult* pressure = nullptr;
  for (const ExperimentResult* r : runs)
    if (r != &e && ParamInt(*r, "writeback_threshold") && r->FindRow("plain")) pressure = r;
  Recommendation rec{"stream", {kMbS.name, kCached.name}, "", ""};
  const Row* fastest = Best(e);
  const Calm calm = pressure && Provoked(*pressure) ? CalmTest(*pressure) : Calm{};
  const Row* calmest = calm.pick;
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
      best->name,
      calmest && calmest->name == best->name
          ? " (beside it the bystander was significantly calmer past the writeback threshold)"
          : "",
      FormatBytes(static_cast<double>(ParamInt(e, "size"))), short_side(*best), short_side(*plain));
  rec.verdict = StreamVerdict(*best, *plain, pressure, calm);
  if (!pressure) {
    rec.text += "; the bystander's stall was not measured past the writeback threshold";
  } else {
    rec.text += "; " + PressureText(*pressure, rec);
    if (Provoked(*pressure)) rec.text += "; " + CalmWords(*pressure, calm);
  }
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
