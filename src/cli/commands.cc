// SPDX-License-Identifier: MIT
// The one table of commands. A new experiment is a folder of its own
// (docs/architecture.md) and one line here; so is a new command about the
// user's program.
#include "cli/commands.h"

#include "experiments/fsync/def.h"
#include "experiments/prealloc/def.h"
#include "experiments/records/def.h"
#include "experiments/stream/def.h"
#include "experiments/stride/def.h"
#include "program/explain/def.h"
#include "program/run/def.h"
#include "program/top/def.h"

namespace writelab {
namespace {

constexpr const ExperimentDef* kExperiments[] = {&kStreamDef, &kFsyncDef, &kRecordsDef,
                                                 &kPreallocDef, &kStrideDef};
constexpr const ProgramDef* kPrograms[] = {&kProgramDef, &kRunDef, &kTopDef};

}  // namespace

std::span<const ExperimentDef* const> Experiments() { return kExperiments; }
std::span<const ProgramDef* const> Programs() { return kPrograms; }

const ExperimentDef* FindExperiment(std::string_view name) {
  for (const ExperimentDef* d : kExperiments)
    if (d->report.name == name) return d;
  return nullptr;
}

ReportBook Reports() {
  std::vector<const ReportHooks*> hooks;
  for (const ExperimentDef* d : kExperiments) hooks.push_back(&d->report);
  for (const ProgramDef* p : kPrograms) hooks.push_back(&p->report);
  return ReportBook(std::move(hooks));
}

}  // namespace writelab
