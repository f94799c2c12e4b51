// SPDX-License-Identifier: MIT
// `writelab explain -- CMD`, defined: its headline (the calls' time); no
// survey step and no recommendation of its own (it says what it found in
// each row's diagnosis).
#include "experiments/program/def.h"

#include "experiments/program/figures.h"

namespace writelab {
namespace program_def {

Headline ProgramHeadline(const ExperimentResult&) { return {ProgramKey("time_s").name, true}; }

}  // namespace program_def

const ExperimentDef kProgramDef = {
    .name = kExplainProgramName,
    .reproduces = kProgramReproduces,
    .figures = kProgramFigures,
    .measures_one_machine = "processes",
    .add_command = AddProgramCommand,
    .headline = program_def::ProgramHeadline,
    .picture = ProgramPictures,
};

}  // namespace writelab
