// SPDX-License-Identifier: MIT
// `writelab run -- CMD`, defined: its headline (CMD's throughput); no survey
// step and no recommendation of its own (its rows say what they covered).
#include "program/run/def.h"

#include "program/run/figures.h"

namespace writelab {
namespace run_def {

Headline RunHeadline(const ExperimentResult&) { return {RunKey("mb_s").name, false}; }

}  // namespace run_def

const ProgramDef kRunDef = {
    .report = {.name = kRunName,
               .figures = kRunFigures,
               .headline = run_def::RunHeadline,
               .picture = RunPictures},
    .reproduces = kRunReproduces,
    .add_command = AddRunCommand,
};

}  // namespace writelab
