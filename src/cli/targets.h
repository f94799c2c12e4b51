// SPDX-License-Identifier: MIT
// Where an experiment runs: the user's directory, or test beds made for it
// (--testbed), each under one or more I/O schedulers (--scheduler). Shared by
// every experiment command; docs/testbeds.md documents the options.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/cli.h"
#include "io/file.h"
#include "mpi/team.h"

namespace writelab {

class UndoJournal;
class Explainer;

// The undo journal of a measuring run, as root (the system changes it makes:
// test beds, schedulers, background loads' process groups, its own files);
// null without root, where none are made. Every measuring command opens it
// here (experiments, the survey, runs under MPI): as root, a journal that
// cannot be opened fails the run before anything is changed.
Result<std::unique_ptr<UndoJournal>> OpenRunJournal();

// --explain's programs for the target at where (an existing path), device
// its block device: the one way a command starts them.
Result<std::unique_ptr<Explainer>> StartExplainerAt(const std::string& where,
                                                    const std::string& device);

struct TargetOptions {
  std::string testbeds;
  std::string testbed_size = "4G";
  std::string scratch = "/var/tmp/writelab";
  std::vector<std::string> schedulers;
  bool explain = false;  // --explain
  // Set by the command, not the user: the experiment writes a raw device
  // (stride: test beds must be raw), and runs under every scheduler the
  // device offers when --scheduler is not given.
  bool raw_device = false;
  bool all_schedulers_by_default = false;
};
void AddTargetOptions(CLI::App& sub, TargetOptions& options);

// Runs the experiment in dir and fills out; out's name and rows are the
// experiment's, the targets' labels are set by RunOnTargets.
// ctx carries the undo journal (root runs) for experiments that change knobs.
using ExperimentRun =
    std::function<Status(const RunContext& ctx, const std::string& dir, ExperimentResult& out)>;

// Runs once per test bed x scheduler (or once in dir), appending one
// ExperimentResult each, and finishes doc. The targets were checked
// (CheckTargets) before: the one place their usage errors are found.
int RunOnTargets(const TargetOptions& targets, const std::string& dir, bool has_file,
                 const RunContext& ctx, Document& doc, const OutputOptions& out,
                 const ExperimentRun& run);

// Where a spec runs: the directory (or file or device) RunOnTargets starts
// from, and whether the user named a file (test beds refuse one).
struct Where {
  std::string path;
  bool has_file = false;
};

// For specs with a dir or a file: the file's directory, or the dir.
template <class Spec>
Where DirOrFile(const Spec& spec) {
  if constexpr (requires { spec.file; })
    if (!spec.file.empty()) return {ParentDir(spec.file), true};
  return {spec.dir, false};
}

// The spec for one target: its files go in the target's directory (a test
// bed's mount point, or the user's --dir); a --file is kept as given.
template <class Spec>
Spec InTarget(Spec spec, const std::string& dir) {
  if constexpr (requires { spec.file; })
    if (!spec.file.empty()) return spec;
  spec.dir = dir;
  return spec;
}

// The one wiring of an experiment command. Adds the output and target
// options to sub (after the command's own), and on parse sets *action to:
// build the spec from the options (an error is a usage error, exit 2), then
// run it on every target. Options has `out` and `targets`;
//   build(Options&) or build(Options&, const RunContext&)
//       -> std::expected<Spec, std::string>
//   where(const Spec&) -> Where
//   run(const Spec&, const std::string& target, const RunContext&, ExperimentResult&) -> Status
// The usage errors of the target options, before anything is changed: a
// bad --testbed, --file with a test bed, not root, --explain where it cannot
// run, a --scratch another user controls or too small for --testbed-size, a
// tmpfs bed larger than memory allows; under MPI, test beds, schedulers,
// --file and --explain.
std::optional<std::string> CheckTargets(const TargetOptions& targets, bool has_file,
                                        const RunContext& ctx);

// The spec built from the options: build(o) or build(o, ctx).
template <class Options, class Build>
auto SpecFromOptions(const Build& build, Options& o, const RunContext& ctx) {
  if constexpr (std::is_invocable_v<Build, Options&, const RunContext&>)
    return build(o, ctx);
  else
    return build(o);
}

// The one wiring of an experiment command. Adds the output and target
// options to sub (after the command's own), and on parse sets *action to:
// build the spec from the options (an error is a usage error, exit 2), then
// run it on every target. Under MPI the ranks first agree that none of them
// has a usage error (mpi/session.h). Options has `out` and `targets`;
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
      Where w;
      if (!usage) {
        w = where(*spec);
        usage = CheckTargets(o->targets, w.has_file, out_ctx);
      }
      if (int code = AgreeOrRefuse(ctx, usage); code >= 0) return code;
      return RunOnTargets(o->targets, w.path, w.has_file, out_ctx, doc, o->out,
                          [&](const RunContext& run_ctx, const std::string& target,
                              ExperimentResult& e) { return run(*spec, target, run_ctx, e); });
    };
  });
}

}  // namespace writelab
