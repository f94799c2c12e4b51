// SPDX-License-Identifier: MIT
// The one table of experiments. A new experiment is a folder of its own
// (docs/architecture.md) and one line here.
#include "experiments/table.h"

#include "experiments/fsync/def.h"
#include "experiments/prealloc/def.h"
#include "experiments/program/def.h"
#include "experiments/records/def.h"
#include "experiments/run/def.h"
#include "experiments/stream/def.h"
#include "experiments/stride/def.h"

namespace writelab {
namespace {

constexpr const ExperimentDef* kExperiments[] = {
    &kStreamDef, &kFsyncDef, &kRecordsDef, &kPreallocDef, &kStrideDef, &kProgramDef, &kRunDef};

}  // namespace

std::span<const ExperimentDef* const> Experiments() { return kExperiments; }

const ExperimentDef* FindExperiment(std::string_view name) {
  for (const ExperimentDef* d : kExperiments)
    if (d->name == name) return d;
  return nullptr;
}

}  // namespace writelab
