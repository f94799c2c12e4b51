// SPDX-License-Identifier: MIT
// `writelab records`'s definition (experiments/experiment.h) and its parts,
// each in a file of this folder: command.cc (the subcommand: options, spec,
// run), picture.cc (the report's picture), def.cc (the definition itself:
// headline, survey steps, recommendations).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kRecordsReproduces =
    "writev-speed.c (Andrew Morton, \"Re: [patch] readv/writev rework\", LKML, September 2002): "
    "a text editor's linked list of lines written with write, fwrite, fwrite_unlocked and "
    "writev, also O_SYNC";

extern const ExperimentDef kRecordsDef;

void AddRecordsCommand(CLI::App& app, CommandAction* action);
void RecordsPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
