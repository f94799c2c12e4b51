// SPDX-License-Identifier: MIT
// The one wiring of an experiment command (liburing's thin entry points
// into one worker): its options, then on parse the spec built and checked,
// the usage errors agreed on (under MPI), and its one step run by the
// orchestrator (command/orchestrator.h) on every target.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "command/definition.h"
#include "command/errors.h"
#include "command/orchestrator.h"
#include "command/outputs.h"
#include "command/targets.h"
#include "mpi/team.h"

namespace writelab {

// The spec built from the options: build(o) or build(o, ctx).
template <class Options, class Build>
auto SpecFromOptions(const Build& build, Options& o, const RunContext& ctx) {
  if constexpr (std::is_invocable_v<Build, Options&, const RunContext&>)
    return build(o, ctx);
  else
    return build(o);
}

// Adds the output and target options to sub (after the command's own), and
// on parse sets *action to: build the spec from the options (an error is a
// usage error, exit 2), then run it on every target. Under MPI the ranks
// first agree that none of them has a usage error (mpi/session.h). Options
// has `out` and `targets`;
//   build(Options&) or build(Options&, const RunContext&)
//       -> std::expected<Spec, std::string>
//   where(const Spec&) -> Where
//   run(const Spec&, const std::string& target, const RunContext&, ExperimentResult&) -> Status
template <class Options, class Build, class Locate, class Run>
void WireExperimentCommand(CLI::App& sub, CommandAction* action, std::shared_ptr<Options> o,
                           Build build, Locate where, Run run) {
  AddOutputOptions(sub, o->out);
  AddTargetOptions(sub, o->targets);
  sub.callback([o, action, build, where, run] {
    *action = [o, build, where, run](const RunContext& ctx, Document& doc) {
      const RunContext out_ctx = ForOutputs(ctx, o->out);
      // Only rank 0 writes the outputs (under MPI): only there are they checked.
      std::optional<std::string> usage;
      if (!ctx.team || ctx.team->rank() == 0) usage = CheckOutputs(o->out);
      auto spec = SpecFromOptions(build, *o, out_ctx);
      if (!usage && !spec) usage = spec.error();
      Plan plan;
      plan.targets = o->targets;
      if (!usage) {
        const Where w = where(*spec);
        plan.dir = w.path;
        plan.has_file = w.has_file;
        plan.direct = w.direct;
        usage = CheckTargets(o->targets, w.has_file, out_ctx, &plan.beds);
        if (!usage && plan.beds.empty() && !w.path.empty()) plan.target = IdentifyWhere(w.path);
        if (!usage) usage = CheckDirectSizes(w.direct, plan.target ? *plan.target : Target{});
      }
      if (int code = AgreeOrRefuse(ctx, usage); code >= 0) return code;
      plan.steps.push_back({"", "", 0,
                            [&](const RunContext& run_ctx, const std::string& target,
                                ExperimentResult& e) { return run(*spec, target, run_ctx, e); }});
      return Orchestrate(plan, out_ctx, doc, o->out);
    };
  });
}

// The one wiring of a command about the user's own program (explain --
// CMD, run -- CMD): stdout is CMD's, so writelab's tables go to stderr and
// --json -/--csv - are refused; on parse, the spec built from the options
// (an error is a usage error, exit 2), then run; writelab exits with CMD's
// status (FinishWithCommandStatus). Options has `out`;
//   build(Options&) -> std::expected<Spec, std::string>
//   run(const Spec&, const RunContext&, Document&, int* cmd_status) -> Status
template <class Options, class Build, class Run>
void WireProgramCommand(CLI::App& sub, CommandAction* action, std::shared_ptr<Options> o,
                        Build build, Run run) {
  o->out.tables_to_stderr = true;
  AddOutputOptions(sub, o->out);
  sub.callback([o, action, build, run] {
    *action = [o, build, run](const RunContext& ctx, Document& doc) {
      std::optional<std::string> usage = CheckOutputs(o->out);
      if (!usage && (o->out.json == "-" || o->out.csv == "-"))
        usage =
            "--json -, --csv -: stdout is CMD's (its output may be a file of the user's); "
            "give a file";
      auto spec = build(*o);
      if (!usage && !spec) usage = spec.error();
      if (usage) return UsageError(*usage);
      int cmd_status = -1;
      Status st = run(*spec, ctx, doc, &cmd_status);
      return FinishWithCommandStatus(doc, o->out, st, cmd_status);
    };
  });
}

}  // namespace writelab
