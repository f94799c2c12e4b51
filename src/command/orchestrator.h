// SPDX-License-Identifier: MIT
// The one orchestrator of a measuring command, an experiment's and the
// survey's alike: it opens the undo journal, makes the test beds and
// switches the schedulers the options ask for, loads --explain's programs,
// runs the plan's steps on every target (under MPI on every rank, the
// aggregate gathered on rank 0), and ends with Finish: what was measured
// before a failure or an interrupt is still printed and written.
//
// An experiment's plan is one step (WireExperimentCommand, command/targets.h);
// the survey's is every experiment's short steps on one directory
// (command/survey.h), with its progress lines and its recommendations.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command/outputs.h"
#include "command/targets.h"
#include "core/result.h"
#include "core/run_context.h"
#include "testbed/testbed.h"
#include "writelab/error.h"

namespace writelab {

class UndoJournal;
class Explainer;

// The undo journal of a measuring run, as root (the system changes it makes:
// test beds, schedulers, background loads' process groups, its own files);
// null without root, where none are made. As root, a journal that cannot be
// opened fails the run before anything is changed.
Result<std::unique_ptr<UndoJournal>> OpenRunJournal();

// --explain's programs for the target at where (an existing path), device
// its block device: the one way a command starts them.
Result<std::unique_ptr<Explainer>> StartExplainerAt(const std::string& where,
                                                    const std::string& device);

// One step of a plan: a result of its own (under MPI, the aggregate and each
// rank's).
struct Step {
  std::string name;    // the result's ("stream"): the survey's progress line
  std::string what;    // "streaming strategies"
  int expected_s = 0;  // about how long it takes, for the progress line
  ExperimentRun run;   // run(ctx, target directory, result)
  uint64_t bytes = 0;  // the survey's: at least what it writes (SurveyStep)
  bool time_based = false;
};

struct Plan;
// The survey's plan in one line: at least the bytes its steps write, to
// which device ("" when not known), and the free space ("it writes at least 19.6 GiB to vda
// (under /var/tmp), plus what fsync and stride write in their time at the
// device's speed; ...").
std::string SurveyCostLine(const Plan& plan, const std::string& device, uint64_t free_bytes);

struct Plan {
  TargetOptions targets;          // test beds, schedulers, --explain (checked: CheckTargets)
  std::vector<TestbedSpec> beds;  // the test beds, parsed once by CheckTargets
  std::string dir;                // where it runs: a directory, a device, a file's directory
  bool has_file = false;          // the user named a file (never on a test bed)
  // The target at dir, identified once when the command checked its sizes
  // (WireExperimentCommand); none with test beds, or where the command did
  // not (the survey): then the orchestrator identifies it.
  std::optional<Target> target;
  std::vector<DirectSize> direct;  // checked again on each test bed's device
  std::vector<Step> steps;
  // The survey's way: --explain's attribution where it can be had (else a
  // note on every result saying why not), a progress line per step on
  // info, and a failed step noted in the errors while the next one runs.
  bool survey = false;
  // Before Finish (the survey's recommendations) and after it (its HTML
  // report): after_finish returns the exit code.
  std::function<void(Document&)> before_finish;
  std::function<int(int code, std::FILE* info)> after_finish;
};

// Runs the plan and finishes doc; returns the exit code. Under MPI (a team
// of more than one rank, and no test bed, scheduler, --file or --explain)
// every rank runs it and rank 0 alone prints and writes.
int Orchestrate(const Plan& plan, const RunContext& ctx, Document& doc, const OutputOptions& out);

}  // namespace writelab
