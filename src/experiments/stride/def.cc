// SPDX-License-Identifier: MIT
// `writelab stride`, defined: its headline, its survey step and what the
// survey recommends from it.
#include "experiments/stride/def.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "experiments/stride/figures.h"
#include "experiments/stride/stride.h"
#include "experiments/survey.h"
#include "io/file.h"
#include "io/own_files.h"
#include "report/recommendations.h"

namespace writelab {
// Named, not anonymous: in a unity build every definition shares one unit.
namespace stride_def {

constexpr FigureKey kMbS = KeyOf(kStrideFigures, "mb_s");
constexpr FigureKey kKibPerWrite = KeyOf(kStrideFigures, "device_kib_per_write");

Headline StrideHeadline(const ExperimentResult&) { return {kMbS.name, false}; }

// stride on a file of writelab's own, 5 rounds of 0.2 s per step.
std::vector<SurveyStep> Survey(const SurveySizes& z) {
  const std::string dir = z.dir;
  SurveyRun run = [dir](const RunContext& ctx, ExperimentResult& e) {
    StrideSpec spec;
    // Made new (O_EXCL|O_NOFOLLOW) in the checked --dir: stride then
    // opens writelab's own file, never a name planted in a shared dir.
    auto made = CreateOwnFile(dir, "survey-stride", O_WRONLY, &spec.file);
    if (!made) return Status(Unexpected(made.error()));
    spec.span = 64u << 20;
    spec.steps = {1, 2, 3, 4, 8, 16, 64, 512};
    spec.duration_ns = 200'000'000;
    spec.rounds = kSurveyTrials;
    Status s = ValidateStrideSpec(spec)
                   ? RunStride(spec, spec.file, ctx, e)
                   : Unexpected(PlainError("stride: invalid survey parameters"));
    RemoveOwnFile(spec.file);  // writelab's own file
    return s;
  };
  return {{"stride", "strided direct writes", 9, run}};
}

// Contiguous (step x unit == block: each write starts where the last ended)
// against the most scattered step measured.
Recommendation Recommend(const ExperimentResult& e) {
  Recommendation rec{"stride", {kMbS.name, kKibPerWrite.name}, ""};
  const int64_t contiguous_step = ParamInt(e, "block") / std::max<int64_t>(ParamInt(e, "unit"), 1);
  const Row* contiguous = e.FindRow(std::to_string(contiguous_step));
  const Row* scattered = nullptr;
  for (const Row& r : e.rows)
    if (MedianOf(r, kMbS)) scattered = &r;  // rows go up in step: the last is the largest
  if (!contiguous || !scattered || !MedianOf(*contiguous, kMbS) || scattered == contiguous) {
    rec.text = "access pattern: not measured";
    return rec;
  }
  double ratio = *MedianOf(*contiguous, kMbS) / *MedianOf(*scattered, kMbS);
  rec.text = fmt::format(
      "access pattern: 4 KiB direct writes back to back (step {}) ran at {}, scattered (step {}) "
      "at {} ({:.1f}x; {} vs {} KiB per device write); {}",
      contiguous->name, ValueOf(*contiguous, kMbS, "MB/s"), scattered->name,
      ValueOf(*scattered, kMbS, "MB/s"), ratio, ValueOf(*contiguous, kKibPerWrite, ""),
      ValueOf(*scattered, kKibPerWrite, ""),
      ratio > 1.5 ? "keep writes contiguous so the block layer can merge them"
                  : "this device absorbs scattered writes about as well as contiguous ones");
  return rec;
}

}  // namespace stride_def

const ExperimentDef kStrideDef = {
    .name = "stride",
    .reproduces = kStrideReproduces,
    .figures = kStrideFigures,
    .measures_one_machine = "device",
    .add_command = AddStrideCommand,
    .headline = stride_def::StrideHeadline,
    .picture = StridePictures,
    .survey = stride_def::Survey,
    .recommend = stride_def::Recommend,
};

}  // namespace writelab
