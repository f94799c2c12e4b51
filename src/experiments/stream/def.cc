// SPDX-License-Identifier: MIT
// `writelab stream`, defined: its headline, its survey steps and what the
// survey recommends from it.
#include "experiments/stream/def.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "experiments/stream/figures.h"
#include "experiments/stream/stream.h"
#include "experiments/survey.h"
#include "explain/figures.h"
#include "mpi/figures.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace stream_def {

constexpr FigureKey kMbS = KeyOf(kStreamFigures, "mb_s");
constexpr FigureKey kCached = KeyOf(kStreamFigures, "cached_end");
constexpr FigureKey kProbeP99 = KeyOf(kStreamFigures, "probe_p99_ms");
constexpr FigureKey kProbeMax = KeyOf(kStreamFigures, "probe_max_ms");
constexpr FigureKey kThrottledPct = KeyOf(kExplainFigures, "x_throttled_pct");

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

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"stream", "streaming strategies", 7,
           Validated(SurveySpec(z), ValidateStreamSpec, RunStream)}};
}

std::vector<SurveyStep> SurveyAcrossRanks(const SurveySizes& z) {
  SurveyRun run = Validated(SurveySpec(z), ValidateStreamSpec, RunStream);
  return {{"stream", "streaming strategies, rank 0 alone", 7, OnRankZero(run)},
          {"stream", "streaming strategies, " + AllRanks(z.ranks), 7, run}};
}

// The fastest of the strategies that bound the page cache, against plain.
Recommendation Recommend(const ExperimentResult& e) {
  Recommendation rec{"stream", {kMbS.name, kCached.name}, ""};
  const Row* best = nullptr;
  for (const char* name : {"window-drop", "dontcache", "direct", "library"}) {
    const Row* r = e.FindRow(name);
    if (r && MedianOf(*r, kMbS) && (!best || *MedianOf(*r, kMbS) > *MedianOf(*best, kMbS)))
      best = r;
  }
  const Row* plain = e.FindRow("plain");
  if (!best || !plain || !MedianOf(*plain, kMbS)) {
    rec.text = "streaming: not enough rows measured";
    return rec;
  }
  auto describe = [&](const Row& r) {
    bool p99 = MedianOf(r, kProbeP99).has_value();  // else too few probes for a p99
    rec.figures.push_back(p99 ? kProbeP99.name : kProbeMax.name);
    return fmt::format("{}, {} left cached, bystander fsync {} {}", ValueOf(r, kMbS, "MB/s"),
                       ValueOf(r, kCached, "bytes"), p99 ? "p99" : "max",
                       ValueOf(r, p99 ? kProbeP99 : kProbeMax, "ms"));
  };
  rec.text = fmt::format("streaming: prefer {} — {}; plain writes: {}", best->name, describe(*best),
                         describe(*plain));
  if (auto throttled = MedianOf(*plain, kThrottledPct)) {
    rec.figures.push_back(kThrottledPct.name);
    rec.text += fmt::format(
        " (measured: {}: the writer was throttled in balance_dirty_pages for {:.0f}% of its "
        "time; {}: {:.0f}%)",
        plain->name, *throttled, best->name, MedianOf(*best, kThrottledPct).value_or(0));
  }
  return rec;
}

Recommendation RecommendAcrossRanks(const Document& doc) {
  return ScalingRecommendation(doc, "stream", "streaming", KeyOf(kRanksFigures, "mb_s"), "MB/s");
}

}  // namespace stream_def

const ExperimentDef kStreamDef = {
    .name = "stream",
    .reproduces = kStreamReproduces,
    .figures = kStreamFigures,
    .runs_under_mpi = true,
    .add_command = AddStreamCommand,
    .headline = stream_def::StreamHeadline,
    .picture = StreamPictures,
    .survey = stream_def::Survey,
    .survey_across_ranks = stream_def::SurveyAcrossRanks,
    .recommend = stream_def::Recommend,
    .recommend_across_ranks = stream_def::RecommendAcrossRanks,
};

}  // namespace writelab
