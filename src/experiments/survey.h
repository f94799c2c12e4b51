// SPDX-License-Identifier: MIT
// `writelab survey`: short runs of every experiment on one directory's file
// system. This is its plan, gathered from the experiments' definitions
// (each sizes its own steps, ExperimentDef::survey); the command
// (src/cli/survey_command.cc) runs it and the recommendations
// (src/report/recommendations.h) read what it measured. No root needed,
// nothing switched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "experiments/context.h"
#include "mpi/team.h"
#include "writelab/error.h"

namespace writelab {

// Trials of each headline row (rounds or repeats of every experiment): the
// fewest with which compare's Mann-Whitney test can reach p < 0.05 (5
// against 5 gives p = 0.008 at best).
inline constexpr int kSurveyTrials = 5;

using SurveyRun = std::function<Status(const RunContext&, ExperimentResult&)>;

struct SurveyStep {
  const char* name;  // "stream"
  std::string what;  // "streaming strategies"
  int expected_s;    // about how long it takes, for the progress line
  SurveyRun run;
};

// What the survey sizes its steps from.
struct SurveySizes {
  std::string dir;
  Host host;
  int ranks = 1;            // how many write the file system at once (MPI ranks)
  uint64_t free_bytes = 0;  // the directory's free space, each writer's share of it
};
SurveySizes SizeSurvey(const std::string& dir, const Host& host, int ranks);

// The experiments in order, their specs sized for dir's free space and host.
std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host);

// Under MPI, with `ranks` ranks (docs/mpi.md): the experiments that make
// sense across clients, each headline one first on rank 0 alone and then on
// every rank at once (how it scales), and fsync as in 2009 across clients:
// rank 0 measures while the others run the background loads.
std::vector<SurveyStep> SurveyPlanAcrossRanks(const std::string& dir, const Host& host, int ranks);

// The random background's span: beyond the dirty-background threshold (so
// it reaches the disk while fsync measures), at least 256 MiB, at most a
// quarter of the free space.
uint64_t RandomSpan(const Host& host, uint64_t free_bytes);

// The step with spec validated first (an invalid survey spec fails the step).
template <class Spec, class Validate, class Run>
SurveyRun Validated(Spec spec, Validate validate, Run run) {
  return [spec, validate, run](const RunContext& ctx, ExperimentResult& e) mutable -> Status {
    if (auto ok = validate(spec); !ok) return Unexpected(PlainError(ok.error()));
    return run(spec, ctx, e);
  };
}

// The step on rank 0 alone: the other ranks take its steps idle.
SurveyRun OnRankZero(SurveyRun run);

// "all 3 ranks at once".
std::string AllRanks(int ranks);

}  // namespace writelab
