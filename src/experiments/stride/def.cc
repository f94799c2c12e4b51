// SPDX-License-Identifier: MIT
// `writelab stride`, defined: its headline, its survey step and what the
// survey recommends from it.
#include "experiments/stride/def.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "command/survey.h"
#include "core/units.h"
#include "experiments/stride/figures.h"
#include "experiments/stride/stride.h"
#include "io/file.h"
#include "io/own_files.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace stride_def {

constexpr FigureKey kMbS = KeyOf(kStrideFigures, "mb_s");
constexpr FigureKey kKibPerWrite = KeyOf(kStrideFigures, "device_kib_per_write");

Headline StrideHeadline(const ExperimentResult&) { return {kMbS.name, false}; }

// stride on a file of writelab's own, 5 rounds of 0.2 s per step: psync
// at queue depth 1 as the original, and io_uring at depth 32, where the
// block layer has requests to merge.
SurveyRun StrideRun(const std::string& dir, bool uring) {
  return [dir, uring](const RunContext& ctx, ExperimentResult& e) {
    StrideSpec spec;
    // Made new (O_EXCL|O_NOFOLLOW) in the checked --dir: stride then
    // opens writelab's own file, never a name planted in a shared dir.
    auto made = CreateOwnFile(dir, "survey-stride", O_WRONLY, &spec.file);
    if (!made) return Status(Unexpected(made.error()));
    spec.span = 64u << 20;
    spec.steps = {1, 2, 3, 4, 8, 16, 64, 512};
    spec.duration_ns = 200'000'000;
    spec.rounds = kSurveyTrials;
    if (uring) {
      spec.engine = "io_uring";
      spec.qds = {32};
    }
    Status s = ValidateStrideSpec(spec)
                   ? RunStride(spec, spec.file, ctx, e)
                   : Unexpected(PlainError("stride: invalid survey parameters"));
    RemoveOwnFile(spec.file);  // writelab's own file
    return s;
  };
}

std::vector<SurveyStep> Survey(const SurveySizes& z) {
  return {{"stride", "strided direct writes, queue depth 1", 9, StrideRun(z.dir, false), 0, true},
          {"stride", "strided direct writes, io_uring at queue depth 32", 9, StrideRun(z.dir, true),
           0, true}};
}

// One run's contiguous step against its most scattered, at its depth.
// A depth's back-to-back row (step = block / unit) and its most scattered
// (the last: rows go up in step), or nulls.
struct StepPair {
  const Row* contiguous = nullptr;
  const Row* scattered = nullptr;
  std::string depth;        // "psync at queue depth 1"
  std::string short_depth;  // "psync qd1"
};

StepPair PairOf(const ExperimentResult& e) {
  StepPair p;
  const int64_t contiguous_step = ParamInt(e, "block") / std::max<int64_t>(ParamInt(e, "unit"), 1);
  for (const Row& r : e.rows) {
    if (!MedianOf(r, kMbS)) continue;
    if (r.name == std::to_string(contiguous_step) ||
        r.name.starts_with(std::to_string(contiguous_step) + " "))
      p.contiguous = &r;
    p.scattered = &r;
  }
  if (p.scattered == p.contiguous) p.scattered = nullptr;
  const bool uring = ParamString(e, "engine") == "io_uring";
  p.depth = uring ? "io_uring at queue depth " + ParamString(e, "qd") : "psync at queue depth 1";
  p.short_depth = uring ? "io_uring qd" + ParamString(e, "qd") : "psync qd1";
  return p;
}

std::string DepthText(const ExperimentResult& e, bool* merges_help) {
  const StepPair p = PairOf(e);
  if (!p.contiguous || !p.scattered) return p.depth + ": not measured";
  const double ratio = *MedianOf(*p.contiguous, kMbS) / *MedianOf(*p.scattered, kMbS);
  *merges_help |= ratio > 1.5;
  return fmt::format(
      "{}: back to back (step {}) {}, scattered (step {}) {} ({:.1f}x; {} vs {} KiB "
      "per device write)",
      p.depth, p.contiguous->name, ValueOf(*p.contiguous, kMbS, "MB/s"), p.scattered->name,
      ValueOf(*p.scattered, kMbS, "MB/s"), ratio, ValueOf(*p.contiguous, kKibPerWrite, ""),
      ValueOf(*p.scattered, kKibPerWrite, ""));
}

// "psync qd1 75 vs 101 MB/s": scattered against back to back, for the verdict.
std::string DepthVerdict(const ExperimentResult& e) {
  const StepPair p = PairOf(e);
  if (!p.contiguous || !p.scattered) return p.short_depth + " not measured";
  return fmt::format("{} {} vs {} MB/s", p.short_depth, ValueOf(*p.scattered, kMbS, ""),
                     ValueOf(*p.contiguous, kMbS, ""));
}

// Contiguous (step x unit == block: each write starts where the last ended)
// against the most scattered step measured, at every depth the survey ran.
Recommendation Recommend(const std::vector<const ExperimentResult*>& runs) {
  Recommendation rec{"stride", {kMbS.name, kKibPerWrite.name}, "", ""};
  bool merges_help = false;
  std::string parts, verdicts;
  for (const ExperimentResult* e : runs) {
    parts += (parts.empty() ? "" : "; ") + DepthText(*e, &merges_help);
    verdicts += (verdicts.empty() ? "" : ", ") + DepthVerdict(*e);
  }
  const StepPair first = PairOf(*runs.front());
  rec.verdict = fmt::format(
      "access pattern: scattered 4 KiB direct writes (step {}) against back "
      "to back (step {}): {}; {}",
      first.scattered ? first.scattered->name : "?",
      first.contiguous ? first.contiguous->name : "?", verdicts,
      merges_help ? "keep writes contiguous" : "the device does not mind");
  rec.text = "access pattern, 4 KiB direct writes: " + parts + "; " +
             (merges_help ? "keep writes contiguous so the block layer can merge them"
                          : "this device absorbs scattered writes about as well as contiguous "
                            "ones at these depths");
  return rec;
}

}  // namespace stride_def

const ExperimentDef kStrideDef = {
    .report = {.name = "stride",
               .figures = kStrideFigures,
               .headline = stride_def::StrideHeadline,
               .picture = StridePictures},
    .reproduces = kStrideReproduces,
    .measures_one_machine = "device",
    .add_command = AddStrideCommand,
    .survey = stride_def::Survey,
    .recommend = stride_def::Recommend,
};

}  // namespace writelab
