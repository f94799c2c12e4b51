// SPDX-License-Identifier: MIT
// `writelab prealloc`, defined: its headline, its survey step and what the
// survey recommends from it.
#include "experiments/prealloc/def.h"

#include <fmt/format.h>

#include "command/survey.h"
#include "core/units.h"
#include "experiments/prealloc/figures.h"
#include "experiments/prealloc/prealloc.h"
#include "explain/figures.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace prealloc_def {

constexpr FigureKey kWorkload = KeyOf(kPreallocFigures, "workload_s");
constexpr FigureKey kUnwrittenAfter = KeyOf(kPreallocFigures, "unwritten_after");
constexpr FigureKey kConversionsPerWrite = KeyOf(kExplainFigures, "x_conversions_per_write");
constexpr FigureKey kCommits = KeyOf(kExplainFigures, "x_commits");

Headline PreallocHeadline(const ExperimentResult&) { return {kWorkload.name, true}; }

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  PreallocSpec s;
  s.dir = z.dir;
  s.file_size = 64u << 20;
  s.writes = 200;
  s.rounds = kSurveyTrials;
  // Each mode but the library's best (one of the others) makes its file.
  const uint64_t bytes = s.file_size * (PreallocModes().size() - 1) * kSurveyTrials;
  return {{"prealloc", "preallocation modes", 6, Validated(s, ValidatePreallocSpec, RunPrealloc),
           bytes}};
}

// Synchronous direct writes into a fallocate'd file against a zero-filled
// one, with the conversions and commits --explain counted.
Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  const ExperimentResult& e = *runs.front();
  Recommendation rec{"prealloc", {kWorkload.name, kUnwrittenAfter.name}, "", ""};
  const Row* falloc = e.FindRow("fallocate");
  const Row* zero = e.FindRow("zero-fill");
  if (!falloc || !zero || !MedianOf(*falloc, kWorkload) || !MedianOf(*zero, kWorkload)) {
    rec.text = "preallocation: not measured";
    return rec;
  }
  double ratio = *MedianOf(*falloc, kWorkload) / *MedianOf(*zero, kWorkload);
  std::string advice = ratio > 1.5
                           ? "for small synchronous writes into a preallocated file, write zeros "
                             "first (or FALLOC_FL_WRITE_ZEROES where the device offers it)"
                           : "fallocate costs little here";
  rec.verdict = fmt::format(
      "preallocation: {} sync direct writes took {} into a fallocate'd file, {} into a zero-filled "
      "one ({:.1f}x): {}",
      ParamInt(e, "writes"), ValueOf(*falloc, kWorkload, "s"), ValueOf(*zero, kWorkload, "s"),
      ratio, ratio > 1.5 ? "write zeros first" : "fallocate costs little here");
  std::string cause;
  if (auto conv = MedianOf(*falloc, kConversionsPerWrite)) {
    rec.figures.insert(rec.figures.end(), {kConversionsPerWrite.name, kCommits.name});
    cause = fmt::format(
        " (measured: {:.1f} extent conversions per write and {} journal commits "
        "into the fallocate'd file, {} and {} into the zero-filled one)",
        *conv, ValueOf(*falloc, kCommits, ""), ValueOf(*zero, kConversionsPerWrite, ""),
        ValueOf(*zero, kCommits, ""));
  }
  rec.text = fmt::format(
      "preallocation ({}): {} sync+direct writes took {} into a fallocate'd file, {} into a "
      "zero-filled one ({:.1f}x; unwritten extents {} after); {}{}",
      e.target.fs_type.empty() ? "unknown file system" : "on " + e.target.fs_type,
      ParamInt(e, "writes"), ValueOf(*falloc, kWorkload, "s"), ValueOf(*zero, kWorkload, "s"),
      ratio, ValueOf(*falloc, kUnwrittenAfter, ""), advice, cause);
  return rec;
}

}  // namespace prealloc_def

const ExperimentDef kPreallocDef = {
    .report = {.name = "prealloc",
               .figures = kPreallocFigures,
               .headline = prealloc_def::PreallocHeadline,
               .picture = PreallocPictures},
    .reproduces = kPreallocReproduces,
    .measures_one_machine = "journal modes",
    .add_command = AddPreallocCommand,
    .survey = prealloc_def::Survey,
    .recommend = prealloc_def::Recommend,
};

}  // namespace writelab
