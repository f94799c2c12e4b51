// SPDX-License-Identifier: MIT
// One experiment, defined once (docs/style.md 4; perf's commands[] with a
// builtin-*.c per command, fio's engine ops): everything the CLI, the
// survey, the report, the recommendations and MPI need of it. Each lives in
// its own folder (src/experiments/NAME/def.cc, with its command, picture
// and recommendation beside it), and experiments/table.cc lists them:
// adding an experiment is one folder and one line there. None of the
// readers of the table names an experiment.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "experiments/context.h"

namespace CLI {
class App;
}

namespace writelab {

struct RunPlan;      // a run on the report page (report/html_plan.h)
struct SurveyStep;   // experiments/survey.h
struct SurveySizes;  // experiments/survey.h

// A parsed subcommand's work: validate (usage errors exit 2), run, and
// report into doc (host, version and command line already filled in).
// Returns the exit code.
using CommandAction = std::function<int(const RunContext&, Document& doc)>;

// The figure a result is judged by (the report's summary, compare's
// headline), and whether less is better.
struct Headline {
  std::string key;
  bool lower_is_better = false;
};

struct ExperimentDef {
  std::string_view name = {};                // "stream": the subcommand and the results' name
  std::string_view reproduces = {};          // the classic experiment it reproduces, one line
  std::span<const FigureSpec> figures = {};  // its rows' figures, in table order
  bool runs_under_mpi = false;               // on every rank under mpirun (docs/mpi.md)
  // What it measures of one machine, for an experiment that does not run
  // under MPI: "journal modes", "device".
  std::string_view measures_one_machine = {};

  // Adds the subcommand (its options, its spec and validation, its run) to
  // app; *action is set when it is the one parsed.
  void (*add_command)(CLI::App& app, CommandAction* action) = nullptr;
  // The headline figure of a result, by the experiment's own rule (fsync:
  // p99 where every row has one, else the worst).
  Headline (*headline)(const ExperimentResult& e) = nullptr;
  // The report's picture of the original post, drawn first in its
  // section; runs are this experiment's results on the page.
  void (*picture)(const std::vector<const RunPlan*>& runs,
                  std::vector<nlohmann::json>& out) = nullptr;
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

}  // namespace writelab
