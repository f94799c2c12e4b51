// Where an experiment runs: the user's directory, or test beds made for it
// (--testbed), each under one or more I/O schedulers (--scheduler). Shared by
// every experiment command; docs/testbeds.md documents the options.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace writelab {

struct TargetOptions {
  std::string testbeds;
  std::string testbed_size = "4G";
  std::string scratch = "/var/tmp/writelab";
  std::vector<std::string> schedulers;
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

// Usage errors (bad --testbed, not root, --file with a test bed) → exit 2
// before anything is changed. Otherwise runs once per test bed × scheduler
// (or once in dir), appending one ExperimentResult each, and finishes doc.
int RunOnTargets(const TargetOptions& targets, const std::string& dir, bool has_file,
                 const RunContext& ctx, Document& doc, const OutputOptions& out,
                 const ExperimentRun& run);

}  // namespace writelab
