// SPDX-License-Identifier: MIT
// The command line: parsing, validation into experiment specs, and the
// boundary where errors become exit codes. Exit codes (also in README.md):
//   0  success
//   1  run failed or interrupted (results measured before it are still written)
//   2  usage: bad option, bad value, missing directory
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/exit_codes.h"
#include "core/result.h"
#include "experiments/context.h"
#include "experiments/experiment.h"
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

// "--size: '12q' is not a size" on failure.
std::expected<uint64_t, std::string> SizeOption(const char* name, const std::string& text);
std::expected<uint64_t, std::string> DurationOption(const char* name, const std::string& text);

// An option's help that lists a table's choices: intro, then "name: summary"
// per entry (strategies, methods, modes, sync methods, backgrounds).
template <class Table>
std::string ListHelp(const char* intro, const Table& table) {
  std::string text = intro;
  for (const auto& entry : table) text += std::string("\n  ") + entry.name + ": " + entry.summary;
  return text;
}

// The ids of names in table, for a list option: "OPTION: unknown WHAT 'x'"
// for a name the table lacks.
template <class Table>
auto ChoicesOption(const char* option, const char* what, const Table& table,
                   const std::vector<std::string>& names)
    -> std::expected<std::vector<decltype(std::begin(table)->id)>, std::string> {
  std::vector<decltype(std::begin(table)->id)> ids;
  for (const std::string& name : names) {
    auto* entry = FindChoice(table, name);
    if (!entry)
      return std::unexpected(std::string(option) + ": unknown " + what + " '" + name + "'");
    ids.push_back(entry->id);
  }
  return ids;
}

// The "where to write" group: two options of which at most one is given
// (--dir DIR or --file PATH; --device DEV or --file PATH).
struct ExclusivePair {
  const char* first;       // "--dir"
  const char* first_text;  // "DIR"
  std::string* first_value;
  std::string first_help;
  std::string* file_value;  // --file PATH
  std::string file_help;
};
void AddExclusivePair(CLI::App& sub, const char* group_help, const ExclusivePair& pair);

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

// The commands that are not experiments (each experiment adds its own:
// ExperimentDef::add_command, experiments/table.h); the action is stored in
// *action when that subcommand is the one parsed.
void AddSurveyCommand(CLI::App& app, CommandAction* action);
void AddReportCommand(CLI::App& app, CommandAction* action);
void AddCompareCommand(CLI::App& app, CommandAction* action);
void AddCleanupCommand(CLI::App& app, CommandAction* action);
void AddHistoryCommand(CLI::App& app, CommandAction* action);

int RunCli(int argc, char** argv);

// Prints "writelab: MESSAGE" as one line on stderr.
void PrintError(const std::string& message);
// PrintError, then kExitUsage.
int UsageError(const std::string& message);
// The last word on a command's usage error (nullopt: none) before it runs:
// on one machine, UsageError for one; under MPI, AgreeToStart (every rank
// learns of any rank's error, and rank 0 prints it). -1 to go on, else the
// exit code to return.
int AgreeOrRefuse(const RunContext& ctx, const std::optional<std::string>& usage);

}  // namespace writelab
