// SPDX-License-Identifier: MIT
// `writelab explain -- CMD`'s definition (experiments/experiment.h): not one
// of the classic experiments, but a result like theirs, listed in the same
// table so that the CLI, the report and compare know it. Its parts:
// command.cc (the subcommand), session.cc (watching the program),
// rows.cc and document.cc (the results), picture.cc (the report's picture).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kProgramReproduces =
    "what ext4slower, biolatency, offcputime and blktrace show a post-mortem by hand, lined up "
    "by timestamp: any program's write and sync calls, each split by what its thread did: on "
    "a CPU, waiting for one, or asleep for a journal commit, its writes, a cache flush or dirty "
    "throttling";

// The four results of one run.
inline constexpr const char* kExplainProgramName = "explain";
inline constexpr const char* kExplainFilesName = "explain-files";
inline constexpr const char* kExplainSlowName = "explain-slow";
inline constexpr const char* kExplainCulpritsName = "explain-culprits";

extern const ProgramDef kProgramDef;

void AddProgramCommand(CLI::App& app, CommandAction* action);
void ProgramPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
