// SPDX-License-Identifier: MIT
// `writelab stream`'s definition (experiments/experiment.h) and its parts,
// each in a file of this folder: command.cc (the subcommand: options, spec,
// run), picture.cc (the report's picture), def.cc (the definition itself:
// headline, survey steps, recommendations).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kStreamReproduces =
    "overwrite.c, LKML thread \"Linux 2.6.29\" (Torvalds, Garzik, April 2009): 8 MiB writes "
    "with sync_file_range windows, then with posix_fadvise(DONTNEED)";

extern const ExperimentDef kStreamDef;

void AddStreamCommand(CLI::App& app, CommandAction* action);
void StreamPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
