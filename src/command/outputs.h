// SPDX-License-Identifier: MIT
// Where a command's results go, shared by every command that writes a
// result document: --json, --csv, --label and the history options, their
// checks before anything runs, and Finish, the one way a run ends (tables,
// files, the history, the exit code).
#pragma once

#include "command/cli_fwd.h"

#include <cstddef>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/run_context.h"
#include "writelab/error.h"

namespace writelab {

// Where results go, shared by every experiment command.
struct OutputOptions {
  std::string json;
  std::string csv;
  std::string label;        // --label: the run's name in compare and the report
  std::string history;      // --history FILE: the results history to append to
  bool no_history = false;  // --no-history
  // Not an option: the command's stdout belongs to another program (`run`
  // passes CMD's through unchanged), so writelab's tables go to stderr.
  bool tables_to_stderr = false;
  // Not an option: the survey without --verbose prints its brief output
  // (RenderBrief) wrapped to this many columns instead of every table.
  std::size_t brief_width = 0;
};
void AddOutputOptions(CLI::App& sub, OutputOptions& out);
// Before a run: "--json: directory '/x' does not exist", or "'/x' is a
// directory", when an output cannot be written where it was asked (a usage
// error, exit 2). "" (none) passes; "-" passes for --json and --csv only.
std::optional<std::string> CheckOutputFile(const char* option, const std::string& path);
std::optional<std::string> CheckOutputs(const OutputOptions& out);
// --json - or --csv -: stdout carries the document, so tables, progress and
// other words go to stderr.
bool ToStdout(const OutputOptions& out);
RunContext ForOutputs(const RunContext& ctx, const OutputOptions& out);

// Prints the document, writes --json/--csv, appends the document to the
// results history (docs/history.md), and maps a run error to exit 1. The
// history never changes the exit code: when it cannot be written (a full
// disk, a read-only or damaged file) one line on stderr says so, after the
// result files are written.
int Finish(Document& doc, const OutputOptions& out, const Status& run);
// Finish for a command writelab ran for the user (`explain -- CMD`, `run --
// CMD`): a usage error when nothing was measured (CMD could not be run);
// else CMD's exit status (cmd_status, -1 for none), unless CMD succeeded
// and writelab did not (an output that could not be written).
int FinishWithCommandStatus(Document& doc, const OutputOptions& out, const Status& run,
                            int cmd_status);

}  // namespace writelab
