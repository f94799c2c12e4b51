// SPDX-License-Identifier: MIT
// `writelab run --strategy S -- CMD`'s definition (experiments/experiment.h):
// not a classic experiment, but a result like theirs in the same table, so
// that the CLI, the report and compare know it. Its parts: command.cc (the
// subcommand), session.cc (one run of CMD), supervisor.cc (CMD's files from
// outside), records.cc (what the shim says, src/shim/), document.cc (the
// runs and the results), picture.cc (the report's picture).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kRunReproduces =
    "Torvalds' wish in the 2009 thread, overwrite.c's streaming behaviour from a plain dd: the "
    "stream experiment's winning strategy applied to a program nobody can change (what nocache "
    "and pagecache-management.so do at close, done as the file grows)";

// The two results of a run.
inline constexpr const char* kRunName = "run";
inline constexpr const char* kRunFilesName = "run-files";

extern const ProgramDef kRunDef;

void AddRunCommand(CLI::App& app, CommandAction* action);
void RunPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
