// SPDX-License-Identifier: MIT
// The one trial loop of every experiment: the rows it measures (cells),
// each `rounds` times, in an order that rotates each round. It owns what
// was written six times before and had drifted apart:
//   - the rotation (CellAt): one rule for every experiment;
//   - under MPI, the team step every rank takes before every planned
//     trial, measured here or not (mpi/team.h), and the ranks that do not
//     measure (an idle rank of the survey, fsync's background ranks);
//   - interrupts: a trial an interrupt cut short is dropped (a partial
//     trial is no measurement), the finished ones are kept, and the loop
//     ends "interrupted";
//   - a cell that was not ok (unsupported, failed) is not measured again,
//     and a failed trial ends the loop with "NAME: message";
//   - the notes every experiment adds: the rotation, and which attribution
//     groups (--explain) the kernel would not show (AddTrialNotes).
// What differs is the experiment's: measure(slot) makes one trial and
// returns it (anything with an `Outcome outcome`); keep(slot, trial) takes
// every trial that was not cut short, ok or not, into the rows.
#pragma once

#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "explain/explainer.h"
#include "mpi/team.h"
#include "writelab/error.h"

namespace writelab {

// What a trial loop asks of the team (mpi/team.h); each is what a run on
// one machine does without one. The step before a planned trial: true to
// go on (always without a team); false to stop, returning TeamStopped(ctx).
bool TeamStep(const RunContext& ctx);
Error TeamStopped(const RunContext& ctx);
// Whether this rank runs the measured trials (not idle, not a background).
bool MeasuresHere(const RunContext& ctx);
// Records a trial this rank ran, for the aggregate; nothing without a team.
void RecordTrial(const RunContext& ctx, TrialSpan span,
                 const std::vector<TrialLatency>& latencies = {});

// The target at path: the one the command identified (ctx.target) when it
// is that path, else identified now.
Target TargetOf(const RunContext& ctx, const std::string& path);

// One planned trial.
struct TrialSlot {
  size_t cell = 0;    // which row
  int round = 0;      // 0-based
  bool last = false;  // the plan's last trial
};

// The cell measured k-th in round `round`: each cell goes first about
// equally often. With fewer rounds than cells the first places are spread
// over the cells (6 cells, 3 rounds: cells 0, 2 and 4 go first); with as
// many or more, every cell goes first in turn.
size_t CellAt(size_t k, int round, size_t cells, int rounds);

struct TrialPlan {
  size_t cells = 0;
  int rounds = 1;
  // A cell's name, for the error of a failed trial and the progress line.
  std::function<std::string(size_t cell)> name;
  std::string failure_prefix;  // before the name in that error: "step ", "commit, "
  bool progress = false;       // "\rNAME, round R" on ctx.progress before each trial
  // Before every step (fsync's background ranks: their load must be
  // alive). An error ends the loop with it.
  std::function<Status()> before_step;
  // For a rank that steps but does not measure (its role), instead of
  // skipping the trial: fsync's background ranks note when each began.
  std::function<void(const TrialSlot&)> not_measured;
};

template <class Measure, class Keep>
Status RunTrials(const RunContext& ctx, const TrialPlan& plan, Measure&& measure, Keep&& keep) {
  std::vector<bool> done(plan.cells, false);
  for (int round = 0; round < plan.rounds; ++round) {
    for (size_t k = 0; k < plan.cells; ++k) {
      const TrialSlot slot{CellAt(k, round, plan.cells, plan.rounds), round,
                           round == plan.rounds - 1 && k == plan.cells - 1};
      // Under MPI the step itself carries an interrupt to every rank.
      if (!ctx.team && ctx.Interrupted()) return Unexpected(PlainError("interrupted"));
      if (plan.before_step)
        if (Status s = plan.before_step(); !s) return s;
      if (!TeamStep(ctx)) return Unexpected(TeamStopped(ctx));
      if (done[slot.cell]) continue;
      if (!MeasuresHere(ctx)) {
        if (plan.not_measured) plan.not_measured(slot);
        continue;
      }
      if (plan.progress && ctx.progress)
        std::fprintf(ctx.progress, "\r%-40s",
                     (plan.name(slot.cell) + ", round " + std::to_string(round + 1)).c_str());
      auto trial = measure(slot);
      const Outcome outcome = trial.outcome;  // keep() takes the trial
      if (outcome.interrupted) return Unexpected(PlainError("interrupted"));
      keep(slot, std::move(trial));
      if (!outcome.ok()) done[slot.cell] = true;
      if (outcome.status == RowStatus::kFailed)
        return Unexpected(
            PlainError(plan.failure_prefix + plan.name(slot.cell) + ": " + outcome.message));
    }
  }
  return {};
}

// "order rotates each round; figures are medians over rounds with min-max"
// ("the order of the WHAT rotates ..." with what), or "" for one round.
std::string RotationNote(int rounds, const char* what = nullptr);

// The notes of a run's trials: the rotation (rotation_note, from
// RotationNote; "" for none), then one per attribution group the kernel
// would not show.
void AddTrialNotes(const RunContext& ctx, const std::string& rotation_note,
                   std::initializer_list<ExplainProbe> groups, ExperimentResult& out);

}  // namespace writelab
