// SPDX-License-Identifier: MIT
// `writelab fsync`'s definition (experiments/experiment.h) and its parts,
// each in a file of this folder: command.cc (the subcommand: options, spec,
// run), picture.cc (the report's picture), def.cc (the definition itself:
// headline, survey steps, recommendations).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kFsyncReproduces =
    "fsync-tester (Ts'o 2009, random writer by Mason) as run by Axboe for \"IO latency/"
    "throughput fixes\" (LKML, April 2009): pwrite 1 MiB + fsync every few seconds beside a "
    "random writer or a streaming dd";

extern const ExperimentDef kFsyncDef;

void AddFsyncCommand(CLI::App& app, CommandAction* action);
void FsyncPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
