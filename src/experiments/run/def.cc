// SPDX-License-Identifier: MIT
// `writelab run -- CMD`, defined: its headline (CMD's throughput); no survey
// step and no recommendation of its own (its rows say what they covered).
#include "experiments/run/def.h"

#include "experiments/run/figures.h"

namespace writelab {
namespace run_def {

Headline RunHeadline(const ExperimentResult&) { return {RunKey("mb_s").name, false}; }

}  // namespace run_def

const ExperimentDef kRunDef = {
    .name = kRunName,
    .reproduces = kRunReproduces,
    .figures = kRunFigures,
    .measures_one_machine = "processes",
    .add_command = AddRunCommand,
    .headline = run_def::RunHeadline,
    .picture = RunPictures,
};

}  // namespace writelab
