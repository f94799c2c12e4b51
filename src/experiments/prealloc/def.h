// SPDX-License-Identifier: MIT
// `writelab prealloc`'s definition (experiments/experiment.h) and its parts,
// each in a file of this folder: command.cc (the subcommand: options, spec,
// run), picture.cc (the report's picture), def.cc (the definition itself:
// headline, survey steps, recommendations).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "command/definition.h"

namespace writelab {

inline constexpr const char* kPreallocReproduces =
    "ext4 fallocate thread, linux-fsdevel (Zheng Liu, Andreas Dilger, April 2012): a 256 MiB "
    "file by fallocate or dd, then 2000 oflag=sync,direct 4 KiB writes at a 16-block stride";

extern const ExperimentDef kPreallocDef;

void AddPreallocCommand(CLI::App& app, CommandAction* action);
void PreallocPictures(const std::vector<const RunPlan*>& runs, std::vector<nlohmann::json>& out);

}  // namespace writelab
