// SPDX-License-Identifier: MIT
// `writelab records`, defined: its headline, its survey steps and what the
// survey recommends from it.
#include "experiments/records/def.h"

#include <fmt/format.h>

#include <algorithm>

#include "command/survey.h"
#include "core/units.h"
#include "experiments/records/figures.h"
#include "experiments/records/records.h"
#include "mpi/figures.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace records_def {

constexpr FigureKey kLinesS = KeyOf(kRecordsFigures, "lines_s");
constexpr FigureKey kCommitsS = KeyOf(kCommitFigures, "commits_s");

// lines/s; --commit's rows have commits/s instead.
Headline RecordsHeadline(const ExperimentResult& e) {
  const bool lines = std::all_of(e.rows.begin(), e.rows.end(), [](const Row& r) {
    return r.status != RowStatus::kOk || r.FindFigure(kLinesS.name);
  });
  return {lines ? kLinesS.name : kCommitsS.name, false};
}

RecordsSpec SurveySpec(const SurveySizes& z) {
  RecordsSpec s;
  s.dir = z.dir;
  s.corpus_size = 2u << 20;
  s.total = 16u << 20;
  s.rounds = kSurveyTrials;
  return s;
}

// What it writes: every method's total, every round.
uint64_t SurveyBytes(const SurveySizes& z) {
  return SurveySpec(z).total * std::size(kRecordMethods) * kSurveyTrials;
}

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"records", "small-record write strategies", 6,
           Validated(SurveySpec(z), ValidateRecordsSpec, RunRecords), SurveyBytes(z)}};
}

std::vector<SurveyStep> SurveyAcrossRanks(const SurveySizes& z) {
  SurveyRun run = Validated(SurveySpec(z), ValidateRecordsSpec, RunRecords);
  return {{"records", "small-record write strategies, rank 0 alone", 6, OnRankZero(run),
           SurveyBytes(z)},
          {"records", "small-record write strategies, " + AllRanks(z.ranks), 6, run,
           SurveyBytes(z) * static_cast<uint64_t>(z.ranks)}};
}

// The fastest method against one write() per line, and the library's.
Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& e = *runs.front();
  Recommendation rec{"records", {kLinesS.name}, "", ""};
  const Row* write = e.FindRow("write");
  const Row* best = nullptr;
  for (const Row& r : e.rows)
    if (MedianOf(r, kLinesS) && (!best || *MedianOf(r, kLinesS) > *MedianOf(*best, kLinesS)))
      best = &r;
  if (!write || !best || !MedianOf(*write, kLinesS)) {
    rec.text = "small records: not measured";
    return rec;
  }
  const Row* lib = e.FindRow("library");
  rec.verdict = fmt::format(
      "small records: gather them: {} wrote {} lines/s, {:.0f}x one write() "
      "per line ({}/s)",
      best->name, FormatValue(*MedianOf(*best, kLinesS), ""),
      *MedianOf(*best, kLinesS) / *MedianOf(*write, kLinesS),
      FormatValue(*MedianOf(*write, kLinesS), ""));
  rec.text = fmt::format(
      "small records ({} of lines per method, sync {}): gather them — {} wrote {} lines/s, "
      "{:.0f}x one write() per line ({} lines/s){}",
      FormatBytes(static_cast<double>(ParamInt(e, "total"))),
      ParamString(e, "sync").empty() ? "none" : ParamString(e, "sync"), best->name,
      FormatValue(*MedianOf(*best, kLinesS), ""),
      *MedianOf(*best, kLinesS) / *MedianOf(*write, kLinesS),
      FormatValue(*MedianOf(*write, kLinesS), ""),
      lib && MedianOf(*lib, kLinesS) ? fmt::format("; writelab::RecordWriter: {} lines/s",
                                                   FormatValue(*MedianOf(*lib, kLinesS), ""))
                                     : "");
  return rec;
}

Recommendation RecommendAcrossRanks(const Document& doc) {
  return ScalingRecommendation(doc, "records", "small records", KeyOf(kRanksFigures, "lines_s"),
                               "lines/s");
}

}  // namespace records_def

const ExperimentDef kRecordsDef = {
    .report = {.name = "records",
               .figures = kRecordsFigures,
               .headline = records_def::RecordsHeadline,
               .picture = RecordsPictures},
    .reproduces = kRecordsReproduces,
    .runs_under_mpi = true,
    .add_command = AddRecordsCommand,
    .survey = records_def::Survey,
    .survey_across_ranks = records_def::SurveyAcrossRanks,
    .recommend = records_def::Recommend,
    .recommend_across_ranks = records_def::RecommendAcrossRanks,
};

}  // namespace writelab
