// SPDX-License-Identifier: MIT
// `writelab history`: what its subcommands share (history_command.cc adds
// list, show, export, import and forget; history_query_command.cc trend and
// check).
#pragma once

#include "command/cli_fwd.h"

#include <cstdint>
#include <expected>
#include <string>

#include "command/definition.h"
#include "history/store.h"

namespace writelab {

// --history FILE on a history subcommand.
void AddHistoryFileOption(CLI::App& sub, std::string& file);

// What a subcommand does to its history: list, show, export, trend and
// check only read it (opened read-only: nothing in the file or its
// journal mode changes); forget writes; import may create it.
enum class HistoryAccess { kRead, kWrite, kCreate };

// Why a history could not be opened, and the exit code that says so: 2
// (usage) for the path given (missing, a link, another user's, not a
// writelab history), 1 for the rest (a damaged file, no space).
struct HistoryProblem {
  std::string message;
  int exit_code = 1;
};
// Prints the problem's line and returns its exit code.
int Report(const HistoryProblem& p);

// The history a subcommand reads (file, else WRITELAB_HISTORY, else the
// default).
std::expected<HistoryStore, HistoryProblem> OpenHistoryFor(const std::string& file,
                                                           HistoryAccess access);

// A RUN argument: a run id, a positive whole number.
std::expected<int64_t, std::string> ParseRunId(const std::string& text);

void AddHistoryQueryCommands(CLI::App& history, CommandAction* action);

}  // namespace writelab
