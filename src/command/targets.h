// SPDX-License-Identifier: MIT
// Where an experiment runs: the user's directory, or test beds made for it
// (--testbed), each under one or more I/O schedulers (--scheduler). Shared by
// every experiment command; docs/testbeds.md documents the options.
#pragma once

#include "command/cli_fwd.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/result.h"
#include "core/run_context.h"
#include "io/file.h"
#include "testbed/testbed.h"
#include "writelab/error.h"

namespace writelab {

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
// experiment's, the targets' labels are set by the orchestrator.
// ctx carries the undo journal (root runs) for experiments that change knobs.
using ExperimentRun =
    std::function<Status(const RunContext& ctx, const std::string& dir, ExperimentResult& out)>;

// Where a spec runs: the directory (or file or device) the orchestrator starts
// from, and whether the user named a file (test beds refuse one).
// direct: the sizes its O_DIRECT writes must align, checked against the
// target once it is identified (WireExperimentCommand), not by the spec's
// own checks, so that the target is identified once.
struct DirectSize {
  const char* option;       // "--block"
  uint64_t bytes;           // its value
  uint64_t at_least = 512;  // an alignment the experiment needs beyond the device's
  std::string instead;      // what else the user may do ("; or leave direct out of --strategy")
};
struct Where {
  std::string path;
  bool has_file = false;
  std::vector<DirectSize> direct;
};

// For specs with a dir or a file: the file's directory, or the dir.
template <class Spec>
Where DirOrFile(const Spec& spec) {
  if constexpr (requires { spec.file; })
    if (!spec.file.empty()) return {ParentDir(spec.file), true, {}};
  return {spec.dir, false, {}};
}

// The target at path, identified (telemetry/identify.h): a path that does
// not exist yet is on its directory's file system.
Target IdentifyWhere(const std::string& path);

// The first of sizes that is not a multiple of the target's logical block
// size (512 when the target has none yet: a test bed's loop device is
// checked again once it exists) and of its at_least, as a usage error.
std::optional<std::string> CheckDirectSizes(const std::vector<DirectSize>& sizes,
                                            const Target& target);

// The spec for one target: its files go in the target's directory (a test
// bed's mount point, or the user's --dir); a --file is kept as given.
template <class Spec>
Spec InTarget(Spec spec, const std::string& dir) {
  if constexpr (requires { spec.file; })
    if (!spec.file.empty()) return spec;
  spec.dir = dir;
  return spec;
}

// The usage errors of the target options, before anything is changed: a
// bad --testbed, --file with a test bed, not root, --explain where it cannot
// run, a --scratch another user controls or too small for --testbed-size, a
// tmpfs bed larger than memory allows; under MPI, test beds, schedulers,
// --file and --explain.
// *beds: the test beds parsed (the one parse of --testbed).
std::optional<std::string> CheckTargets(const TargetOptions& targets, bool has_file,
                                        const RunContext& ctx, std::vector<TestbedSpec>* beds);

}  // namespace writelab
