// SPDX-License-Identifier: MIT
// `writelab stride`'s definition (experiments/experiment.h) and its parts,
// each in a file of this folder: command.cc (the subcommand: options, spec,
// run), picture.cc (the report's picture), def.cc (the definition itself:
// headline, survey steps, recommendations).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kStrideReproduces =
    "\"submit_bio() question\" (Damon LaCrosse, kernelnewbies, September 2006): 4 KiB writes at "
    "sector step x i, 3 s per step, per I/O scheduler";

extern const ExperimentDef kStrideDef;

void AddStrideCommand(CLI::App& app, CommandAction* action);
void StridePictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
