// SPDX-License-Identifier: MIT
// The experiments, in the order the CLI lists them and the survey runs
// them (experiments/experiment.h).
#pragma once

#include <span>
#include <string_view>

#include "experiments/experiment.h"

namespace writelab {

std::span<const ExperimentDef* const> Experiments();
// The experiment named name, or null (an experiment this writelab does not
// know, in a document from another version).
const ExperimentDef* FindExperiment(std::string_view name);

}  // namespace writelab
