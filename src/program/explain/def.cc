// SPDX-License-Identifier: MIT
// `writelab explain -- CMD`, defined: its headline (the calls' time); no
// survey step and no recommendation of its own (it says what it found in
// each row's diagnosis).
#include "program/explain/def.h"

#include "program/explain/figures.h"

namespace writelab {
namespace program_def {

Headline ProgramHeadline(const ExperimentResult&) { return {ProgramKey("time_s").name, true}; }

}  // namespace program_def

const ProgramDef kProgramDef = {
    .report = {.name = kExplainProgramName,
               .figures = kProgramFigures,
               .headline = program_def::ProgramHeadline,
               .picture = ProgramPictures},
    .reproduces = kProgramReproduces,
    .add_command = AddProgramCommand,
};

}  // namespace writelab
