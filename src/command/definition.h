// SPDX-License-Identifier: MIT
// A command, defined once (docs/style.md 4; perf's commands[] with a
// builtin-*.c per command, fio's engine ops): everything the command line,
// the survey, the report and MPI need of it. An experiment lives in its
// own folder (src/experiments/NAME/def.cc, with its command, picture and
// recommendation beside it), a command about the user's own program in
// src/program/NAME/; cli/commands.cc lists them: adding one is one folder
// and one line there. None of the readers of the table names a command:
// what is below the table (the survey here, the report) gets the
// definitions as a parameter.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/run_context.h"
#include "report/hooks.h"

namespace CLI {
class App;
}

namespace writelab {

struct SurveyStep;   // command/survey.h
struct SurveySizes;  // command/survey.h

// A parsed subcommand's work: validate (usage errors exit 2), run, and
// report into doc (host, version and command line already filled in).
// Returns the exit code.
using CommandAction = std::function<int(const RunContext&, Document& doc)>;

struct ExperimentDef {
  // Its name (the subcommand's and its results'), figures, headline and
  // picture, for the report.
  ReportHooks report = {};
  std::string_view reproduces = {};  // the classic experiment it reproduces, one line
  bool runs_under_mpi = false;       // on every rank under mpirun (docs/mpi.md)
  // What it measures of one machine, for an experiment that does not run
  // under MPI: "journal modes", "device".
  std::string_view measures_one_machine = {};

  // Adds the subcommand (its options, its spec and validation, its run) to
  // app; *action is set when it is the one parsed.
  void (*add_command)(CLI::App& app, CommandAction* action) = nullptr;
  // The survey's steps on one machine, and across MPI ranks (none: nullptr
  // or empty).
  std::vector<SurveyStep> (*survey)(const SurveySizes& sizes) = nullptr;
  std::vector<SurveyStep> (*survey_across_ranks)(const SurveySizes& sizes) = nullptr;
  // The survey's recommendation from this experiment's results in doc
  // (every one of its name, in the order run: the survey may run one
  // experiment in several steps), and under MPI from its aggregates.
  Recommendation (*recommend)(const std::vector<const ExperimentResult*>& runs) = nullptr;
  Recommendation (*recommend_across_ranks)(const Document& doc) = nullptr;
};

// A command about the user's own program (explain -- CMD, run -- CMD): not
// one of the classic experiments, but results like theirs.
struct ProgramDef {
  ReportHooks report = {};
  std::string_view reproduces = {};
  void (*add_command)(CLI::App& app, CommandAction* action) = nullptr;
};

}  // namespace writelab
