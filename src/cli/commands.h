// SPDX-License-Identifier: MIT
// The table of every command (perf's commands[] in perf.c): the
// experiments, in the order the command line lists them and the survey
// runs them, and the commands about the user's own program. Only the top
// reads it; what is below it (the survey, the report) is handed what it
// needs of it.
#pragma once

#include <span>
#include <string_view>

#include "command/definition.h"
#include "report/hooks.h"

namespace writelab {

std::span<const ExperimentDef* const> Experiments();
std::span<const ProgramDef* const> Programs();
// The experiment named name, or null.
const ExperimentDef* FindExperiment(std::string_view name);
// Every command's report hooks, experiments first (the report's book).
ReportBook Reports();

}  // namespace writelab
