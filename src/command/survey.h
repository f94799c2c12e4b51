// SPDX-License-Identifier: MIT
// `writelab survey`: short runs of every experiment on one directory's file
// system, through the one orchestrator (command/orchestrator.h), then the
// recommendations backed by what it measured. Its plan is gathered from the
// experiments' definitions (each sizes its own steps, ExperimentDef::survey),
// handed over by the command table (src/cli/survey_command.cc). No root
// needed, nothing switched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <span>

#include "command/definition.h"
#include "command/outputs.h"
#include "core/result.h"
#include "core/run_context.h"
#include "mpi/team.h"
#include "report/hooks.h"
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
  // What it writes, for the plan the survey prints first: at least these
  // bytes; or, time_based, what the device takes in its time (a background
  // load, direct writes for a duration).
  uint64_t bytes = 0;
  bool time_based = false;
};

// What the survey sizes its steps from.
struct SurveySizes {
  std::string dir;
  Host host;
  int ranks = 1;            // how many write the file system at once (MPI ranks)
  uint64_t free_bytes = 0;  // the directory's free space, each writer's share of it
  uint64_t threshold = 0;   // its device's dirty background threshold (0: not known)
};
SurveySizes SizeSurvey(const std::string& dir, const Host& host, int ranks);

using Definitions = std::span<const ExperimentDef* const>;

// The experiments in order, their specs sized for dir's free space and host.
std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host, Definitions defs);

// Under MPI, with `ranks` ranks (docs/mpi.md): the experiments that make
// sense across clients, each headline one first on rank 0 alone and then on
// every rank at once (how it scales), and fsync as in 2009 across clients:
// rank 0 measures while the others run the background loads.
std::vector<SurveyStep> SurveyPlanAcrossRanks(const std::string& dir, const Host& host, int ranks,
                                              Definitions defs);

// One per experiment of defs, from its result in doc, e.g. "streaming:
// prefer dontcache — 2496 MB/s, 0 B left cached, bystander p99 3.0 ms;
// plain: 494 MB/s, 1.0 GiB cached, p99 180 ms". An experiment that is
// missing gets "NAME: not run"; nothing is recommended without a
// measurement behind it. Under MPI (doc.ranks not empty) these are
// RecommendationsAcrossRanks.
std::vector<Recommendation> Recommendations(const Document& doc, Definitions defs);

// The survey under MPI: how the experiments that run on every rank scale
// from rank 0 alone to every rank at once ("2.1x rank 0 alone, 70% of
// linear"), which ones were not run, and whether the ranks shared a host.
std::vector<Recommendation> RecommendationsAcrossRanks(const Document& doc, Definitions defs);

struct SurveyOptions {
  std::string dir = ".";
  std::string html = "writelab-survey.html";
  bool verbose = false;  // every table (out.brief_width 0), not the brief output
  OutputOptions out;
};

// The survey's run: its options checked (usage errors exit 2), its plan run
// by the orchestrator, then its recommendations, tables, files and HTML
// report (book: the report's hooks of every command). Returns the exit code.
int RunSurvey(const SurveyOptions& options, Definitions defs, const ReportBook& book,
              const RunContext& ctx, Document& doc);

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
